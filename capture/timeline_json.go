package capture

import (
	"encoding/json"
	"io"
	"slices"
	"sort"
	"time"
)

// The timeline as JSON (streamshift timeline --json), for tools and tests:
// what the text shows, in one document. Times are RFC 3339 with
// nanoseconds and, beside them, milliseconds since the capture's start.
// TimelineJSONVersion grows when a field changes meaning; new fields may
// come without it.

// TimelineJSONVersion is the version of the JSON form.
const TimelineJSONVersion = 1

// TimelineJSON is the JSON form of a Timeline.
type TimelineJSON struct {
	Version  int          `json:"version"`
	Group    string       `json:"group"`
	Start    time.Time    `json:"start"`
	End      time.Time    `json:"end"`
	Members  []MemberJSON `json:"members"`
	Tasks    []TaskJSON   `json:"tasks"`
	Steps    []StepJSON   `json:"steps"`
	Summary  SummaryJSON  `json:"summary"`
	Events   []EventJSON  `json:"coordinatorEvents"`
	Problems []string     `json:"inputProblems,omitempty"`
	Errors   []ErrorsJSON `json:"errors,omitempty"`
}

// MemberJSON is a lane: one Streams thread's consumer.
type MemberJSON struct {
	Label     string         `json:"label"`
	ClientID  string         `json:"clientId"`
	MemberIDs []string       `json:"memberIds"`
	ProcessID string         `json:"processId,omitempty"`
	Host      string         `json:"host,omitempty"`
	Thread    string         `json:"thread,omitempty"`
	Protocols []ValueAt      `json:"protocols"`
	Epochs    []ValueAt      `json:"epochs"`
	Away      []IntervalJSON `json:"away,omitempty"`
}

// ValueAt is a value from a time on.
type ValueAt struct {
	At    time.Time `json:"at"`
	AtMs  int64     `json:"atMs"`
	Value string    `json:"value"`
}

// IntervalJSON is a time interval.
type IntervalJSON struct {
	From   time.Time `json:"from"`
	To     time.Time `json:"to"`
	FromMs int64     `json:"fromMs"`
	ToMs   int64     `json:"toMs"`
}

// TaskJSON is one task's history as consecutive intervals.
type TaskJSON struct {
	Task      string             `json:"task"`
	Intervals []TaskIntervalJSON `json:"intervals"`
}

// TaskIntervalJSON is a time the task had the same owners. State is
// "owned" (one owner), "twice" (two or more), "moving" (no owner while a
// rebalance moved it) or "no-owner" (none, outside a rebalance, or at the
// capture's end: flagged in the text).
type TaskIntervalJSON struct {
	IntervalJSON
	State  string   `json:"state"`
	Owners []string `json:"owners,omitempty"` // labels
}

// StepJSON is a takeover or hand-back: TookMs from its first request
// until every task ran again (absent when it did not settle), FlipMs the
// state flip (its start to its end event).
type StepJSON struct {
	Kind     string       `json:"kind"`
	Outcome  string       `json:"outcome"`
	Reason   string       `json:"reason,omitempty"`
	Began    time.Time    `json:"began"`
	BeganMs  int64        `json:"beganMs"`
	Flip     IntervalJSON `json:"stateFlip"`
	FlipMs   int64        `json:"stateFlipMs"`
	Settled  *time.Time   `json:"settled,omitempty"`
	TookMs   *int64       `json:"tookMs,omitempty"`
	Settling bool         `json:"notSettledByCaptureEnd,omitempty"`
}

// SummaryJSON is the text's summary line.
type SummaryJSON struct {
	Tasks         int `json:"tasks"`
	TwoOwners     int `json:"twoOwners"`
	NoOwner       int `json:"noOwnerOutsideRebalance"`
	RebalanceGaps int `json:"noOwnerWhileRebalance"`
}

// EventJSON is a coordinator event worth a marker.
type EventJSON struct {
	At      time.Time `json:"at"`
	AtMs    int64     `json:"atMs"`
	Kind    string    `json:"kind"`
	Member  string    `json:"memberId,omitempty"`
	Label   string    `json:"label,omitempty"`
	Message string    `json:"message,omitempty"`
}

// ErrorsJSON counts an error a member got.
type ErrorsJSON struct {
	Label string `json:"label"`
	Error string `json:"error"`
	Count int    `json:"count"`
}

// JSON is the timeline's JSON form.
func (t *Timeline) JSON() *TimelineJSON {
	ms := func(at time.Time) int64 { return at.Sub(t.Start).Milliseconds() }
	iv := func(from, to time.Time) IntervalJSON { return IntervalJSON{from, to, ms(from), ms(to)} }
	out := &TimelineJSON{Version: TimelineJSONVersion, Group: t.Group, Start: t.Start, End: t.End, Problems: t.Problems,
		Members: []MemberJSON{}, Tasks: []TaskJSON{}, Steps: []StepJSON{}, Events: []EventJSON{}}
	for _, ln := range t.Lanes {
		m := MemberJSON{Label: ln.Label, ClientID: ln.ClientID, MemberIDs: ln.MemberIDs, ProcessID: ln.ProcessID, Host: ln.Host, Thread: ln.Thread,
			Protocols: []ValueAt{}, Epochs: []ValueAt{}}
		for _, p := range ln.Protocols {
			m.Protocols = append(m.Protocols, ValueAt{p.At, ms(p.At), p.Value})
		}
		for _, e := range ln.Epochs {
			m.Epochs = append(m.Epochs, ValueAt{e.At, ms(e.At), e.Value})
		}
		for _, a := range ln.Away {
			m.Away = append(m.Away, iv(a.From, a.To))
		}
		out.Members = append(out.Members, m)
		keys := make([]string, 0, len(ln.Errors))
		for k := range ln.Errors {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			out.Errors = append(out.Errors, ErrorsJSON{ln.Label, k, ln.Errors[k]})
		}
	}
	for _, th := range t.Tasks {
		tj := TaskJSON{Task: th.Task, Intervals: []TaskIntervalJSON{}}
		for _, in := range th.intervals(t.Start, t.End) {
			owners := make([]string, len(in.owners))
			for i, o := range in.owners {
				owners[i] = t.LabelOf(o)
			}
			tj.Intervals = append(tj.Intervals, TaskIntervalJSON{iv(in.from, in.to), in.state, owners})
		}
		out.Tasks = append(out.Tasks, tj)
		out.Summary.TwoOwners += len(th.Overlaps)
		for _, g := range th.Gaps {
			if g.Rebalance {
				out.Summary.RebalanceGaps++
			} else {
				out.Summary.NoOwner++
			}
		}
	}
	out.Summary.Tasks = len(t.Tasks)
	for i := range t.Phases {
		p := &t.Phases[i]
		s := StepJSON{Kind: p.Kind, Outcome: p.Outcome, Reason: p.Reason, Began: p.Began, BeganMs: ms(p.Began), Flip: iv(p.From, p.To), FlipMs: p.Flip().Milliseconds()}
		if took, settled := p.Took(t.End); settled {
			at, n := p.Settled, took.Milliseconds()
			s.Settled, s.TookMs = &at, &n
		} else if p.Outcome == "done" {
			s.Settling = true
		}
		out.Steps = append(out.Steps, s)
	}
	for _, m := range t.Marks {
		e := EventJSON{At: m.At, AtMs: ms(m.At), Kind: m.Kind, Member: m.Member, Message: m.Message}
		if m.Lane != "" {
			e.Label = t.LabelOf(m.Lane)
		}
		out.Events = append(out.Events, e)
	}
	return out
}

// WriteJSON writes the timeline's JSON form, indented.
func (t *Timeline) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(t.JSON())
}

// taskInterval is a time a task had the same owners.
type taskInterval struct {
	from, to time.Time
	state    string
	owners   []string // client ids
}

// intervals cuts the task's history, from its first owner to end, into
// consecutive intervals of the same owners.
func (th *TaskHistory) intervals(start, end time.Time) []taskInterval {
	var cuts []time.Time
	for _, s := range th.Owners {
		cuts = append(cuts, s.From, s.To)
	}
	cuts = append(cuts, end)
	sort.Slice(cuts, func(i, j int) bool { return cuts[i].Before(cuts[j]) })
	cuts = slices.CompactFunc(cuts, time.Time.Equal)
	var out []taskInterval
	for i := 0; i+1 < len(cuts); i++ {
		from, to := cuts[i], cuts[i+1]
		if from.Before(start) {
			continue
		}
		var owners []string
		for _, s := range th.Owners {
			if !s.From.After(from) && s.To.After(from) && !slices.Contains(owners, s.Lane) {
				owners = append(owners, s.Lane)
			}
		}
		slices.Sort(owners)
		state := "owned"
		switch {
		case len(owners) > 1:
			state = "twice"
		case len(owners) == 0:
			state = "no-owner"
			for _, g := range th.Gaps {
				if g.Rebalance && !g.From.After(from) && !g.To.Before(to) {
					state = "moving"
				}
			}
		}
		if n := len(out); n > 0 && out[n-1].state == state && slices.Equal(out[n-1].owners, owners) && out[n-1].to.Equal(from) {
			out[n-1].to = to
			continue
		}
		out = append(out, taskInterval{from, to, state, owners})
	}
	return out
}
