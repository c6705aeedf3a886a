package capture

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/streamshift/streamshift/migration"
)

// The timeline reads capture lines back and answers what an operator asks
// after a migration went wrong: per member (a client id: one Kafka Streams
// thread's consumer, whatever protocol and member id it has) its protocol,
// epochs and generations and the tasks the coordinator gave it over time;
// per task its owners, and any time with no owner or two owners; the
// errors each client got; how long each migration step took. Ownership is
// what the coordinator handed out: a SyncGroup assignment (its Streams
// AssignmentInfo's active tasks) or a StreamsGroupHeartbeat's active tasks,
// until the next one, a leave or a fencing.
//
// A task with no owner for the length of a rebalance is what Kafka Streams
// does by design (the old owner revokes, commits, then the task is assigned
// to its new owner: cooperative rebalancing in the classic protocol, the
// streams protocol's revoke-then-assign), so such a gap is reported as a
// rebalance's and not flagged. A gap counts as a rebalance's when something
// started a rebalance (a group epoch bump, a JoinGroup, a leave, a fencing)
// after the task's previous owner was given it and before the task was
// assigned again: the rebalance moved it. A task taken from its owner with
// no rebalance since the owner got it, or still without an owner at the
// capture's end, is flagged.

// ReadLines reads capture lines (plain or gzipped) and reports garbled or
// truncated ones with their line numbers instead of failing.
func ReadLines(name string, r io.Reader) (lines []Line, problems []string) {
	br := bufio.NewReaderSize(r, 1<<20)
	if head, err := br.Peek(2); err == nil && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, []string{fmt.Sprintf("%s: %v", name, err)}
		}
		br = bufio.NewReaderSize(zr, 1<<20)
	}
	n := 0
	for {
		b, err := br.ReadBytes('\n')
		if len(b) > 0 {
			n++
			b = bytes.TrimSpace(b)
			if len(b) > 0 {
				var l Line
				if jerr := json.Unmarshal(b, &l); jerr != nil || !knownType(l.Type) {
					if jerr == nil {
						jerr = fmt.Errorf("type %q is not a capture line's", l.Type)
					}
					problems = append(problems, fmt.Sprintf("%s:%d: skipped: %v", name, n, jerr))
				} else {
					lines = append(lines, l)
				}
			}
		}
		if err != nil {
			if err != io.EOF {
				problems = append(problems, fmt.Sprintf("%s:%d: %v", name, n+1, err))
			}
			return lines, problems
		}
	}
}

// Timeline is a group's history as a capture shows it.
type Timeline struct {
	Group      string
	Start, End time.Time
	Lanes      []*Lane
	Tasks      []*TaskHistory
	Phases     []Phase
	// Rebalances are the times a rebalance started: what tells a
	// rebalance's gap.
	Rebalances []time.Time
	Marks      []Mark
	// Stalls are the times a task ran nowhere because its owner was
	// gone; Steps the rolling steps (timeline_stalls.go,
	// timeline_steps.go).
	Stalls []Stall
	Steps  []RollingStep
	// Problems are input lines skipped.
	Problems []string
}

// Lane is one member's history: a client id (a Streams thread's consumer).
type Lane struct {
	ClientID string
	// Label is what a person knows the member by (timeline_names.go):
	// host/processUUID[:8] thread N, an operator's name for its instance,
	// or its client id.
	Label string
	laneIdentity
	hostFromEndpoint bool
	MemberIDs        []string
	Protocols        []At[string]
	// Epochs are member epochs (streams) and generations (classic).
	Epochs []At[string]
	// Owned is each assignment the member got.
	Owned []At[[]string]
	// Warmups and Standbys are the streams protocol's warm-up and standby
	// tasks the member was given over time (a heartbeat answer lists them
	// when they change).
	Warmups, Standbys []At[[]string]
	// Away are the times the member was out of the group: from its leave
	// (LeaveGroup, a heartbeat with epoch -1 or -2) or its fencing (from
	// its last request: it was gone since) until it joined again, or the
	// capture's end.
	Away   []Span
	Errors map[string]int
	// ErrorsAt are the errors as they came, for markers.
	ErrorsAt []At[string]
	owned    []string
	// awaySince is when the member left, zero while it is in the group;
	// lastSeen its last request.
	awaySince, lastSeen time.Time
	settle              laneSettle
	// Gone are the times the member was gone (timeline_stalls.go):
	// connection closed, silent, out of the group; HeartbeatInterval the
	// interval that tells silence.
	Gone              []GoneSpan
	HeartbeatInterval time.Duration
	talk              laneTalk
}

// leave marks the member out of the group from at (kept if it already is).
func (ln *Lane) leave(at time.Time) {
	if ln.awaySince.IsZero() {
		ln.awaySince = at
	}
}

// back ends the member's time out of the group at at.
func (ln *Lane) back(at time.Time) {
	if !ln.awaySince.IsZero() {
		ln.Away = append(ln.Away, Span{ln.ClientID, ln.awaySince, at})
		ln.awaySince = time.Time{}
	}
}

// setTasks records a new set of warm-up or standby tasks when it changed.
func setTasks(list *[]At[[]string], at time.Time, tasks []string) {
	slices.Sort(tasks)
	if n := len(*list); n > 0 && slices.Equal((*list)[n-1].Value, tasks) || n == 0 && len(tasks) == 0 {
		return
	}
	*list = append(*list, At[[]string]{at, tasks})
}

// At is a value from a time on.
type At[T any] struct {
	At    time.Time
	Value T
}

// TaskHistory is one task's owners over time.
type TaskHistory struct {
	Task     string
	Owners   []Span
	Gaps     []Gap
	Overlaps []Span // Lane names the owners, comma-separated
	// states are its intervals as the app ran it (timeline_stalls.go).
	states []taskInterval
}

// Span is a time interval of a lane.
type Span struct {
	Lane     string
	From, To time.Time
}

func (s Span) Dur() time.Duration { return s.To.Sub(s.From) }

// Gap is a time a task had no owner.
type Gap struct {
	Span
	// Rebalance: it lasted no longer than a rebalance that moved the task
	// (expected, not flagged).
	Rebalance bool
	// AtEnd: the task still had no owner when the capture ended.
	AtEnd bool
}

// Phase is a migration step, from its start to its end event.
type Phase struct {
	Kind string // takeover or hand-back
	// From and To are its start and end events: the state flip.
	From, To time.Time
	// Began is the first request that started it, Settled the first
	// request after To at which every task ran again (zero: not by the
	// capture's end): timeline_settle.go.
	Began, Settled time.Time
	Outcome        string // done, failed, or running at the capture's end
	Reason         string
	Steps          []At[string]
	openedWith     string
}

// Mark is an event worth a marker: an epoch bump, a fencing.
type Mark struct {
	At            time.Time
	Kind, Member  string
	Lane, Message string
}

// BuildTimeline computes the timeline of group (the group of the first
// migration event or group request when empty) from capture lines.
func BuildTimeline(lines []Line, group string) *Timeline {
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].Wall.Before(lines[j].Wall) })
	if group == "" {
		group = guessGroup(lines)
	}
	t := &Timeline{Group: group}
	lanes := map[string]*Lane{}
	byMember := map[string]*Lane{}
	tasks := map[string]*TaskHistory{}
	open := map[string]map[string]time.Time{} // task → lane → since
	connLane := map[uint64]*Lane{}
	lane := func(l *Line) *Lane {
		key := l.ClientID
		if key == "" {
			key = fmt.Sprintf("conn-%d", l.ConnID)
		}
		ln := lanes[key]
		if ln == nil {
			ln = &Lane{ClientID: key, Errors: map[string]int{}}
			lanes[key] = ln
			t.Lanes = append(t.Lanes, ln)
		}
		return ln
	}
	setOwned := func(ln *Lane, at time.Time, owned []string) {
		slices.Sort(owned)
		owned = slices.Compact(owned)
		for _, task := range ln.owned {
			if !slices.Contains(owned, task) {
				th := tasks[task]
				th.Owners = append(th.Owners, Span{ln.ClientID, open[task][ln.ClientID], at})
				delete(open[task], ln.ClientID)
			}
		}
		for _, task := range owned {
			if !slices.Contains(ln.owned, task) {
				if tasks[task] == nil {
					tasks[task] = &TaskHistory{Task: task}
					open[task] = map[string]time.Time{}
				}
				open[task][ln.ClientID] = at
			}
		}
		if !slices.Equal(owned, ln.owned) || len(ln.Owned) == 0 {
			ln.Owned = append(ln.Owned, At[[]string]{at, owned})
		}
		ln.owned = owned
	}
	protocol := func(ln *Lane, at time.Time, p string) {
		if n := len(ln.Protocols); n == 0 || ln.Protocols[n-1].Value != p {
			ln.Protocols = append(ln.Protocols, At[string]{at, p})
		}
	}
	member := func(ln *Lane, id string) {
		if id != "" && !slices.Contains(ln.MemberIDs, id) {
			ln.MemberIDs = append(ln.MemberIDs, id)
			byMember[id] = ln
		}
	}
	epoch := func(ln *Lane, at time.Time, s string) {
		if n := len(ln.Epochs); n == 0 || ln.Epochs[n-1].Value != s {
			ln.Epochs = append(ln.Epochs, At[string]{at, s})
		}
	}
	var phases []*Phase
	running := map[string]*Phase{}
	var ss settleState
	for i := range lines {
		if l := &lines[i]; l.Type == "event" && l.Event == streams.EventClassicGroupSynced && l.Group == group {
			ss.syncEvents = true
			break
		}
	}
	// served: streamshift serves the group (between a takeover's and a
	// hand-back's end). Outside it a classic generation is the broker's,
	// one for the whole group: the assignment of generation N ends the
	// ownership of the same tasks by members last synced at an older one
	// (the broker formed N without them, or they rejoin and revoke). A
	// member expelled upstream, whose session ran out, sends nothing more:
	// without this rule it would own its tasks on the timeline until its
	// lane's next request, and the tasks would show two owners.
	served := false
	generation := map[*Lane]float64{}
	supersede := func(by *Lane, gen float64, at time.Time, got []string) {
		for _, o := range t.Lanes {
			if g, ok := generation[o]; o == by || !ok || g >= gen {
				continue
			}
			kept := slices.DeleteFunc(slices.Clone(o.owned), func(task string) bool { return slices.Contains(got, task) })
			if len(kept) != len(o.owned) {
				setOwned(o, at, kept)
			}
		}
	}
	for i := range lines {
		l := &lines[i]
		if l.Type == TypeConnection {
			// A member's connection closed: its lane (by the connection's
			// exchanges, else its client id) may be gone from here.
			if l.Event == ConnClosed && slices.Contains(l.Groups, group) {
				ln := connLane[l.ConnID]
				if ln == nil && l.ClientID != "" {
					ln = lanes[l.ClientID]
				}
				if ln != nil {
					ln.talk.closes = append(ln.talk.closes, l.Wall)
					t.extend(l.Wall)
				}
			}
			continue
		}
		if l.Type == "event" {
			if l.Group != group {
				continue
			}
			switch l.Event {
			case migration.EventTakeoverDone, migration.EventHandBackDone:
				// Generations before it are another coordinator's.
				served = l.Event == migration.EventTakeoverDone
				clear(generation)
				if !served {
					ss.groupEpoch = 0
				}
			case streams.EventGroupEpochBumped:
				if e, isNum := l.Fields["epoch"].(float64); isNum {
					ss.groupEpoch = e
				}
			case streams.EventGroupState:
				ss.noteState(l)
			case streams.EventClassicGroupSynced:
				ss.noteSynced(l.Wall)
			}
			t.extend(l.Wall)
			if p := t.event(l, running, &phases, byMember, setOwned); p != nil {
				switch p.Outcome {
				case "":
					p.Began = ss.began(p.Kind, l.Wall)
				case "done":
					ss.stepEnd(l.Wall)
					ss.waiting = append(ss.waiting, p)
					if ss.stateEvents && ss.running {
						ss.settleTakeovers(l.Wall) // nothing moved
					}
				default:
					ss.stepEnd(l.Wall)
				}
			}
			continue
		}
		if !slices.Contains(l.Groups, group) || l.APIKey == nil {
			continue
		}
		t.extend(l.Wall)
		ln := lane(l)
		for _, e := range l.Errors {
			ln.Errors[l.APIName+": "+e]++
			ln.ErrorsAt = append(ln.ErrorsAt, At[string]{l.Wall, l.APIName + ": " + e})
		}
		var req, resp map[string]any
		_ = json.Unmarshal(l.Request, &req)
		_ = json.Unmarshal(l.Response, &resp)
		ok := len(l.ErrorCodes) == 0 && resp != nil
		ln.noteIdentity(l, req)
		ln.noteRequest(l, req, resp)
		if l.ConnID != 0 {
			connLane[l.ConnID] = ln
		}
		ss.noteExchange(ln, l, req, resp, ok)
		switch l.APIName {
		case "JoinGroup":
			if str(req["memberId"]) == "" {
				// A new member (a process started, maybe on the
				// lane's client id): it ran nothing from its request.
				setOwned(ln, received(l), nil)
			}
			ln.back(l.Wall)
			t.Rebalances = append(t.Rebalances, l.Wall)
			protocol(ln, l.Wall, "classic")
			member(ln, str(req["memberId"]))
			if ok {
				member(ln, str(resp["memberId"]))
				epoch(ln, l.Wall, fmt.Sprintf("generation %v", resp["generationId"]))
			}
		case "SyncGroup":
			protocol(ln, l.Wall, "classic")
			member(ln, str(req["memberId"]))
			if ok {
				epoch(ln, l.Wall, fmt.Sprintf("generation %v", req["generationId"]))
				got := assignmentTasks(resp)
				if gen, isNum := req["generationId"].(float64); isNum {
					if !served {
						supersede(ln, gen, l.Wall, got)
					}
					generation[ln] = gen
				}
				setOwned(ln, l.Wall, got)
				ln.back(l.Wall)
			}
		case "LeaveGroup":
			t.Rebalances = append(t.Rebalances, l.Wall)
			setOwned(ln, l.Wall, nil)
			ln.leave(l.Wall)
		case "StreamsGroupHeartbeat":
			protocol(ln, l.Wall, "streams")
			member(ln, str(req["memberId"]))
			ln.noteAck(l, req)
			if e, _ := req["memberEpoch"].(float64); e < 0 {
				t.Rebalances = append(t.Rebalances, l.Wall)
				setOwned(ln, l.Wall, nil)
				setTasks(&ln.Warmups, l.Wall, nil)
				setTasks(&ln.Standbys, l.Wall, nil)
				ln.leave(l.Wall)
				ln.lastSeen = l.Wall
				ss.settle(l.Wall, t.Lanes, open)
				continue
			}
			if e, _ := req["memberEpoch"].(float64); e == 0 {
				setOwned(ln, received(l), nil) // a new member: nothing until assigned
			}
			ln.back(l.Wall)
			if ok {
				member(ln, str(resp["memberId"]))
				epoch(ln, l.Wall, fmt.Sprintf("epoch %v", resp["memberEpoch"]))
				if at, isList := resp["activeTasks"].([]any); isList {
					setOwned(ln, l.Wall, streamsTasks(at))
				}
				if wt, isList := resp["warmupTasks"].([]any); isList {
					setTasks(&ln.Warmups, l.Wall, streamsTasks(wt))
				}
				if st, isList := resp["standbyTasks"].([]any); isList {
					setTasks(&ln.Standbys, l.Wall, streamsTasks(st))
				}
			}
		}
		ln.lastSeen = l.Wall
		ss.settle(l.Wall, t.Lanes, open)
	}
	kept := t.Lanes[:0]
	for _, ln := range t.Lanes {
		n := len(ln.Owned)
		setOwned(ln, t.End, nil)
		ln.Owned = ln.Owned[:n] // the capture's end is no assignment
		ln.back(t.End)
		// Lanes of no member protocol are the EOS producers' offset
		// commits: shown only when they got errors.
		if len(ln.Protocols) > 0 || len(ln.Errors) > 0 {
			kept = append(kept, ln)
		}
	}
	t.Lanes = kept
	t.SetNames(nil)
	for _, p := range phases {
		if p.To.IsZero() {
			p.To, p.Outcome = t.End, "running at the capture's end"
		}
		t.Phases = append(t.Phases, *p)
	}
	for _, th := range tasks {
		th.analyse(t.End)
		for i := range th.Gaps {
			th.Gaps[i].Rebalance = !th.Gaps[i].AtEnd && t.rebalanceDuring(th.ownedSince(th.Gaps[i].From), th.Gaps[i].To)
		}
		t.Tasks = append(t.Tasks, th)
	}
	sort.Slice(t.Tasks, func(i, j int) bool { return taskLess(t.Tasks[i].Task, t.Tasks[j].Task) })
	for _, ln := range t.Lanes {
		ln.computeGone(t.End)
	}
	t.computeStalls()
	t.computeSteps()
	return t
}

// rebalanceDuring reports whether a rebalance started after from and no
// later than to (Rebalances are in time order: lines are sorted).
func (t *Timeline) rebalanceDuring(from, to time.Time) bool {
	i, found := slices.BinarySearchFunc(t.Rebalances, from, time.Time.Compare)
	for found && i < len(t.Rebalances) && t.Rebalances[i].Equal(from) {
		i++ // one at the very instant the owner got the task gave it
	}
	return i < len(t.Rebalances) && !t.Rebalances[i].After(to)
}

// OwnerChanges counts the times the task went to another member: one
// owner all along is none, however often it was assigned again.
func (th *TaskHistory) OwnerChanges() int {
	n := 0
	for i := 1; i < len(th.Owners); i++ {
		if th.Owners[i].Lane != th.Owners[i-1].Lane {
			n++
		}
	}
	return n
}

// ownedSince is when the owner whose span ended at end got the task (the
// latest such span's start).
func (th *TaskHistory) ownedSince(end time.Time) time.Time {
	var since time.Time
	for _, s := range th.Owners {
		if s.To.Equal(end) && s.From.After(since) {
			since = s.From
		}
	}
	return since
}

func (t *Timeline) extend(at time.Time) {
	if t.Start.IsZero() || at.Before(t.Start) {
		t.Start = at
	}
	if at.After(t.End) {
		t.End = at
	}
}

// event applies an event line; it returns the step it started or ended
// (nil: none).
func (t *Timeline) event(l *Line, running map[string]*Phase, phases *[]*Phase, byMember map[string]*Lane, setOwned func(*Lane, time.Time, []string)) *Phase {
	kind, outcome := "", ""
	switch l.Event {
	case migration.EventTakeoverStarted, migration.EventHandBackStarted:
		kind = strings.TrimSuffix(l.Event, "-started")
		if p := running[kind]; p != nil {
			p.To, p.Outcome = l.Wall, "superseded"
		}
		p := &Phase{Kind: kind, From: l.Wall, openedWith: l.Event}
		running[kind] = p
		*phases = append(*phases, p)
		return p
	case migration.EventTakeoverDone, migration.EventHandBackDone:
		kind, outcome = strings.TrimSuffix(l.Event, "-done"), "done"
	case migration.EventTakeoverFailed, migration.EventHandBackFailed:
		kind, outcome = strings.TrimSuffix(l.Event, "-failed"), "failed"
	case migration.EventHandBackAnchorLeft:
		if p := running["hand-back"]; p != nil {
			p.Steps = append(p.Steps, At[string]{l.Wall, "anchor left"})
		}
		return nil
	case streams.EventGroupEpochBumped, streams.EventMemberFenced, streams.EventMemberLeft:
		t.Rebalances = append(t.Rebalances, l.Wall)
		m := Mark{At: l.Wall, Kind: l.Event, Member: l.Member, Message: l.Message}
		if ln := byMember[l.Member]; ln != nil {
			m.Lane = ln.ClientID
			if l.Event == streams.EventMemberFenced || l.Event == streams.EventMemberLeft {
				// Gone since its last request (a fencing is a session
				// that expired after it), or since its connection
				// closed after that request: a stopped instance runs
				// its tasks until it closes them, then its connection,
				// and its disconnect expiry fences it later.
				since := ln.lastSeen
				if n := len(ln.talk.closes); n > 0 && ln.talk.closes[n-1].After(since) {
					since = ln.talk.closes[n-1]
				}
				if since.IsZero() || since.After(l.Wall) {
					since = l.Wall
				}
				ln.leave(since)
			}
			if l.Event == streams.EventMemberFenced {
				setOwned(ln, l.Wall, nil)
			}
		}
		t.Marks = append(t.Marks, m)
		return nil
	default:
		return nil
	}
	p := running[kind]
	if p != nil {
		p.To, p.Outcome, p.Reason = l.Wall, outcome, l.Reason
		delete(running, kind)
	}
	return p
}

// analyse finds the overlaps and gaps of a task's ownership.
func (th *TaskHistory) analyse(end time.Time) {
	sort.Slice(th.Owners, func(i, j int) bool { return th.Owners[i].From.Before(th.Owners[j].From) })
	type edge struct {
		at   time.Time
		d    int
		lane string
	}
	var edges []edge
	for _, s := range th.Owners {
		if s.To.After(s.From) {
			edges = append(edges, edge{s.From, 1, s.Lane}, edge{s.To, -1, s.Lane})
		}
	}
	sort.Slice(edges, func(i, j int) bool {
		if edges[i].at.Equal(edges[j].at) {
			return edges[i].d < edges[j].d // an owner leaving before one arriving at the same instant is no overlap
		}
		return edges[i].at.Before(edges[j].at)
	})
	owners := map[string]bool{}
	var zeroSince, twoSince time.Time
	var during []string
	for _, e := range edges {
		before := len(owners)
		if e.d > 0 {
			owners[e.lane] = true
		} else {
			delete(owners, e.lane)
		}
		after := len(owners)
		if before == 0 && after > 0 && !zeroSince.IsZero() && e.at.After(zeroSince) {
			th.Gaps = append(th.Gaps, Gap{Span: Span{"", zeroSince, e.at}})
		}
		if after == 0 {
			zeroSince = e.at
		}
		if after >= 2 {
			if before < 2 {
				twoSince, during = e.at, nil
			}
			for l := range owners {
				if !slices.Contains(during, l) {
					during = append(during, l)
				}
			}
		}
		if before >= 2 && after < 2 && e.at.After(twoSince) {
			slices.Sort(during)
			th.Overlaps = append(th.Overlaps, Span{strings.Join(during, ","), twoSince, e.at})
		}
	}
	if len(owners) == 0 && !zeroSince.IsZero() && zeroSince.Before(end) {
		th.Gaps = append(th.Gaps, Gap{Span: Span{"", zeroSince, end}, AtEnd: true})
	}
}

func str(v any) string { s, _ := v.(string); return s }

// received is when the proxy read the line's request (Wall is its answer).
func received(l *Line) time.Time {
	return l.Wall.Add(-time.Duration(l.LatencyMs * float64(time.Millisecond)))
}

// assignmentTasks are the active tasks of a SyncGroup response's Streams
// AssignmentInfo.
func assignmentTasks(resp map[string]any) []string {
	dec, _ := resp["assignmentDecoded"].(map[string]any)
	info, _ := dec["assignmentInfo"].(map[string]any)
	var out []string
	for _, t := range asList(info["activeTasks"]) {
		if s, ok := t.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// streamsTasks are a StreamsGroupHeartbeat's tasks as Streams names them.
func streamsTasks(list []any) []string {
	out := []string{}
	for _, e := range list {
		m, _ := e.(map[string]any)
		for _, p := range asList(m["partitions"]) {
			out = append(out, fmt.Sprintf("%s_%v", str(m["subtopologyId"]), p))
		}
	}
	return out
}

func asList(v any) []any { l, _ := v.([]any); return l }

func guessGroup(lines []Line) string {
	count := map[string]int{}
	for _, l := range lines {
		if l.Type == "event" && l.Group != "" && strings.Contains(l.Event, "over") {
			return l.Group
		}
		for _, g := range l.Groups {
			count[g]++
		}
	}
	best := ""
	for g, n := range count {
		if n > count[best] || n == count[best] && g < best {
			best = g
		}
	}
	return best
}

// taskLess orders "1_10" after "1_9".
func taskLess(a, b string) bool {
	var as, ap, bs, bp int
	_, e1 := fmt.Sscanf(a, "%d_%d", &as, &ap)
	_, e2 := fmt.Sscanf(b, "%d_%d", &bs, &bp)
	if e1 != nil || e2 != nil {
		return a < b
	}
	if as != bs {
		return as < bs
	}
	return ap < bp
}
