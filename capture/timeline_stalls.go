package capture

import (
	"slices"
	"sort"
	"strings"
	"time"
)

// Ownership as the app ran it (issue #39). The coordinator's assignment
// says who should run a task; whether anyone does depends on the owner
// being there. A member is gone while
//
//   - its coordinator connection closed and it sent no request within a
//     heartbeat interval after (a stopped instance; a reconnect that
//     comes straight back is not one): "connection closed";
//   - it sent nothing for longer than twice its heartbeat interval, from
//     its last answered request on: "silent" (a hung or killed process
//     whose connection the capture did not see close, e.g. a format 1
//     capture);
//   - it was out of the group (left, or fenced since its last request):
//     "out of the group".
//
// A member's heartbeat interval is the longest the streams protocol
// answered it and the median time between its classic Heartbeats (Kafka's
// default of 3 s when it sent too few), the longest of the two when it
// spoke both.
//
// Each task's history is cut into intervals of one state:
//
//   - running: an owner that is not gone has it (a streams member from
//     when its heartbeat says it owns it: it has created the task);
//   - twice: two owners may run it (neither closed its connection nor left;
//     a silent one may still run it);
//   - stalled: its owners are all gone, or it has none since its owner
//     went (no other member runs it yet);
//   - moving: no owner while a rebalance moved it from a live member, or
//     a streams member was given it and has not started it;
//   - no-owner: no owner outside a rebalance.
//
// A stall is a run of stalled intervals: the task ran nowhere because its
// owner was gone. A rolling step is an instance (its process: all its
// threads) gone, until the next instance came (the same process back, or
// a new one); its row says how long each task had no running owner in it.

// GoneSpan is a time a member was gone, and why.
type GoneSpan struct {
	Span
	Why string
}

const (
	goneClosed = "connection closed"
	goneSilent = "silent"
	goneAway   = "out of the group"
)

// laneTalk is what BuildTimeline notes of a lane for its gone spans.
type laneTalk struct {
	// acks are the active tasks a streams member said it owns (its
	// heartbeat's activeTasks, sent when they change: after it created
	// the tasks it was given). A streams member runs a task from its
	// ack, not from the coordinator's answer.
	acks []At[[]string]
	reqs []talkReq // received..answered of each group request
	// streamsHeartbeat is the heartbeat interval the streams protocol
	// answered; classicBeats the classic Heartbeats' times.
	streamsHeartbeat time.Duration
	classicBeats     []time.Time
	closes           []time.Time
}

// talkReq is one group request of a lane, and the member it came from.
type talkReq struct {
	Span
	// member is the member id the request named, or its JoinGroup's
	// answer gave ("" if neither).
	member string
}

// noteRequest notes one group request of the lane: a member's requests
// (connections.go's memberKeys) say it is there; a FindCoordinator or an
// OffsetFetch of a process starting does not yet.
func (ln *Lane) noteRequest(l *Line, req, resp map[string]any) {
	if !slices.Contains(memberKeys, *l.APIKey) {
		return
	}
	member := str(req["memberId"])
	if member == "" {
		member = str(resp["memberId"])
	}
	ln.talk.reqs = append(ln.talk.reqs, talkReq{Span{ln.ClientID, received(l), l.Wall}, member})
	switch l.APIName {
	case "Heartbeat":
		ln.talk.classicBeats = append(ln.talk.classicBeats, received(l))
	case "StreamsGroupHeartbeat":
		// The longest answered: a coordinator may ask for quick
		// heartbeats while a member reconciles (250 ms here), and a
		// member back at its steady pace is not silent.
		if ms, ok := resp["heartbeatIntervalMs"].(float64); ok && time.Duration(ms)*time.Millisecond > ln.talk.streamsHeartbeat {
			ln.talk.streamsHeartbeat = time.Duration(ms) * time.Millisecond
		}
	}
}

// noteAck notes the active tasks a StreamsGroupHeartbeat says the member
// owns (none when it joins or leaves).
func (ln *Lane) noteAck(l *Line, req map[string]any) {
	if e, _ := req["memberEpoch"].(float64); e <= 0 {
		ln.talk.acks = append(ln.talk.acks, At[[]string]{l.Wall, nil})
		return
	}
	if list, ok := req["activeTasks"].([]any); ok {
		ln.talk.acks = append(ln.talk.acks, At[[]string]{received(l), streamsTasks(list)})
	}
}

// starting reports whether the lane, a streams member at at, has not yet
// said it owns task.
func (ln *Lane) starting(at time.Time, task string) bool {
	proto := ""
	for _, p := range ln.Protocols {
		if !p.At.After(at) {
			proto = p.Value
		}
	}
	if proto != "streams" {
		return false
	}
	var owned []string
	for _, a := range ln.talk.acks {
		if !a.At.After(at) {
			owned = a.Value
		}
	}
	return !slices.Contains(owned, task)
}

// heartbeat is the lane's heartbeat interval: the longest of its
// protocols' (a lane may be classic, then streams).
func (ln *Lane) heartbeat() time.Duration {
	classic := 3 * time.Second
	b := ln.talk.classicBeats
	if len(b) >= 4 {
		gaps := make([]time.Duration, 0, len(b)-1)
		for i := 1; i < len(b); i++ {
			gaps = append(gaps, b[i].Sub(b[i-1]))
		}
		slices.Sort(gaps)
		if m := gaps[len(gaps)/2]; m >= 100*time.Millisecond {
			classic = m
		}
	}
	if len(b) == 0 && ln.talk.streamsHeartbeat > 0 {
		return ln.talk.streamsHeartbeat
	}
	return max(classic, ln.talk.streamsHeartbeat)
}

// computeGone derives the lane's gone spans, up to end.
func (ln *Lane) computeGone(end time.Time) {
	hb := ln.heartbeat()
	ln.HeartbeatInterval = hb
	reqs := ln.talk.reqs
	sort.Slice(reqs, func(i, j int) bool { return reqs[i].From.Before(reqs[j].From) })
	var spans []GoneSpan
	// around is the first request received after at (end: none), and
	// whether it came from another member than the last one before at.
	around := func(at time.Time) (next time.Time, another bool) {
		i := sort.Search(len(reqs), func(i int) bool { return reqs[i].From.After(at) })
		if i == len(reqs) {
			return end, false
		}
		another = i > 0 && reqs[i-1].member != "" && reqs[i].member != reqs[i-1].member
		return reqs[i].From, another
	}
	for _, c := range ln.talk.closes {
		// A reconnect is the same member back; the next request of
		// another member of the lane (a successor with its
		// predecessor's process id, so its label) is a new process,
		// however soon it came.
		if next, another := around(c); another || next.Sub(c) > hb || next.Equal(end) && end.After(c) {
			spans = append(spans, GoneSpan{Span{ln.ClientID, c, next}, goneClosed})
		}
	}
	var last time.Time // the latest answer so far
	for i, r := range reqs {
		if i > 0 && r.From.Sub(last) > 2*hb {
			spans = append(spans, GoneSpan{Span{ln.ClientID, last, r.From}, goneSilent})
		}
		if r.To.After(last) {
			last = r.To
		}
	}
	if !last.IsZero() && end.Sub(last) > 2*hb {
		spans = append(spans, GoneSpan{Span{ln.ClientID, last, end}, goneSilent})
	}
	for _, a := range ln.Away {
		spans = append(spans, GoneSpan{a, goneAway})
	}
	// A close inside a silence is when the member went: the silence
	// before it is a member between heartbeats.
	for i := range spans {
		if spans[i].Why != goneSilent {
			continue
		}
		for _, c := range spans {
			if c.Why == goneClosed && c.From.After(spans[i].From) && c.From.Before(spans[i].To) {
				spans[i].From = c.From
			}
		}
	}
	// Merged spans keep the first one's why; at the same instant the
	// surest: out of the group, then connection closed, then silent.
	rank := map[string]int{goneAway: 0, goneClosed: 1, goneSilent: 2}
	sort.Slice(spans, func(i, j int) bool {
		if spans[i].From.Equal(spans[j].From) {
			return rank[spans[i].Why] < rank[spans[j].Why]
		}
		return spans[i].From.Before(spans[j].From)
	})
	var merged []GoneSpan
	for _, s := range spans {
		if !s.To.After(s.From) {
			continue
		}
		if n := len(merged); n > 0 && !s.From.After(merged[n-1].To) {
			if s.To.After(merged[n-1].To) {
				merged[n-1].To = s.To
			}
			continue
		}
		merged = append(merged, s)
	}
	ln.Gone = merged
}

// goneAt is the lane's gone span at at (nil: it is there).
func (ln *Lane) goneAt(at time.Time) *GoneSpan {
	for i := range ln.Gone {
		if g := &ln.Gone[i]; !g.From.After(at) && g.To.After(at) {
			return g
		}
	}
	return nil
}

// Stall is a time a task ran nowhere because its owner was gone.
type Stall struct {
	Task     string
	From, To time.Time
	// Owner is the client id of the owner that went, Why how it went.
	Owner, Why string
	// AtEnd: still stalled at the capture's end.
	AtEnd bool
}

func (s Stall) Dur() time.Duration { return s.To.Sub(s.From) }

// taskStates cuts a task's history, from its first owner to the
// capture's end, into intervals of one state (the rules above).
func (t *Timeline) taskStates(th *TaskHistory) []taskInterval {
	lanes := map[string]*Lane{}
	var cuts []time.Time
	for _, s := range th.Owners {
		cuts = append(cuts, s.From, s.To)
		if ln := t.lane(s.Lane); ln != nil {
			lanes[s.Lane] = ln
		}
	}
	if len(cuts) == 0 {
		return nil
	}
	first := slices.MinFunc(cuts, time.Time.Compare)
	for _, ln := range lanes {
		for _, a := range ln.talk.acks {
			if a.At.After(first) {
				cuts = append(cuts, a.At)
			}
		}
		for _, g := range ln.Gone {
			if g.From.After(first) {
				cuts = append(cuts, g.From)
			}
			if g.To.After(first) {
				cuts = append(cuts, g.To)
			}
		}
	}
	cuts = append(cuts, t.End)
	sort.Slice(cuts, func(i, j int) bool { return cuts[i].Before(cuts[j]) })
	cuts = slices.CompactFunc(cuts, time.Time.Equal)
	var out []taskInterval
	for i := 0; i+1 < len(cuts); i++ {
		from, to := cuts[i], cuts[i+1]
		if from.Before(t.Start) || !to.After(from) {
			continue
		}
		var owners, mayRun, running, starting []string
		why := ""
		for _, s := range th.Owners {
			if s.From.After(from) || !s.To.After(from) || slices.Contains(owners, s.Lane) {
				continue
			}
			owners = append(owners, s.Lane)
			g := (*GoneSpan)(nil)
			if ln := lanes[s.Lane]; ln != nil {
				g = ln.goneAt(from)
			}
			switch {
			case g == nil && lanes[s.Lane] != nil && lanes[s.Lane].starting(from, th.Task):
				mayRun, starting = append(mayRun, s.Lane), append(starting, s.Lane) // given it, not started yet
			case g == nil:
				mayRun, running = append(mayRun, s.Lane), append(running, s.Lane)
			case g.Why == goneSilent:
				mayRun = append(mayRun, s.Lane)
				why = s.Lane + " " + g.Why
			default:
				why = s.Lane + " " + g.Why
			}
		}
		slices.Sort(owners)
		state := "running"
		switch {
		case len(mayRun) > 1:
			state, why = "twice", ""
		case len(running) > 0:
			why = ""
		case len(starting) > 0:
			// Its new owner has not started it: still stalled after a
			// stall, else moving to it.
			state, why = "moving", ""
			if n := len(out); n > 0 && out[n-1].state == "stalled" && out[n-1].to.Equal(from) {
				state, why = "stalled", out[n-1].why
			}
		case len(owners) > 0:
			state = "stalled"
		default:
			state, why = t.noOwnerState(th, from, to, out)
		}
		if n := len(out); n > 0 && out[n-1].state == state && slices.Equal(out[n-1].owners, owners) && out[n-1].to.Equal(from) {
			out[n-1].to = to
			continue
		}
		out = append(out, taskInterval{from, to, state, owners, why})
	}
	return out
}

// noOwnerState is the state of a time the task had no owner: stalled when
// it follows a stall or its last owner was gone when it lost the task,
// else moving (a rebalance moved it) or no-owner.
func (t *Timeline) noOwnerState(th *TaskHistory, from, to time.Time, before []taskInterval) (state, why string) {
	if n := len(before); n > 0 && before[n-1].state == "stalled" && before[n-1].to.Equal(from) {
		return "stalled", before[n-1].why
	}
	for _, s := range th.Owners {
		if !s.To.Equal(from) {
			continue
		}
		if ln := t.lane(s.Lane); ln != nil {
			g := ln.goneAt(from)
			if g == nil && from.After(t.Start) {
				g = ln.goneAt(from.Add(-time.Nanosecond))
			}
			if g != nil {
				return "stalled", s.Lane + " " + g.Why
			}
		}
	}
	for _, g := range th.Gaps {
		if g.Rebalance && !g.From.After(from) && !g.To.Before(to) {
			return "moving", ""
		}
	}
	return "no-owner", ""
}

// lane is the lane of a client id.
func (t *Timeline) lane(clientID string) *Lane {
	for _, ln := range t.Lanes {
		if ln.ClientID == clientID {
			return ln
		}
	}
	return nil
}

// computeStalls fills each task's states and the timeline's stalls.
func (t *Timeline) computeStalls() {
	t.Stalls = nil
	for _, th := range t.Tasks {
		th.states = t.taskStates(th)
		for _, in := range th.states {
			if in.state != "stalled" {
				continue
			}
			owner, why, _ := strings.Cut(in.why, " ")
			if n := len(t.Stalls); n > 0 && t.Stalls[n-1].Task == th.Task && t.Stalls[n-1].To.Equal(in.from) {
				t.Stalls[n-1].To = in.to
				t.Stalls[n-1].AtEnd = in.to.Equal(t.End)
				continue
			}
			t.Stalls = append(t.Stalls, Stall{Task: th.Task, From: in.from, To: in.to, Owner: owner, Why: why, AtEnd: in.to.Equal(t.End)})
		}
	}
}

// StallTotals are the stalls' count, total and longest task-time.
func (t *Timeline) StallTotals() (n int, total, longest time.Duration) {
	for _, s := range t.Stalls {
		n++
		total += s.Dur()
		longest = max(longest, s.Dur())
	}
	return n, total, longest
}
