package capture

import (
	"encoding/json"
	"io"
	"slices"
	"strings"
	"time"
)

// The timeline as JSON (streamshift timeline --json), for tools and tests:
// what the text shows, in one document. Times are RFC 3339 with
// nanoseconds and, beside them, milliseconds since the capture's start.
// TimelineJSONVersion grows when a field changes meaning; new fields may
// come without it. Version 2 keeps version 1's fields; a task interval's
// state is now as the app ran it (timeline_stalls.go): "running" (was
// "owned"), "twice", "stalled" (new), "moving", "no-owner"; it adds the
// members' gone spans, the stalls and the rolling steps.

// TimelineJSONVersion is the version of the JSON form.
const TimelineJSONVersion = 2

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
	// Stalls and RollingSteps: version 2.
	Stalls       []StallJSON       `json:"stalls"`
	RollingSteps []RollingStepJSON `json:"rollingSteps"`
}

// StallJSON is a time a task ran nowhere because its owner was gone.
type StallJSON struct {
	IntervalJSON
	Task  string `json:"task"`
	Ms    int64  `json:"ms"`
	Owner string `json:"owner"` // the gone owner's label
	Why   string `json:"why"`   // connection closed, silent, out of the group
	AtEnd bool   `json:"atCaptureEnd,omitempty"`
}

// RollingStepJSON is an instance gone and the next one come, with each
// task's time with no running owner until the next step.
type RollingStepJSON struct {
	Went   string            `json:"went"` // instance label
	WentAt time.Time         `json:"wentAt"`
	WentMs int64             `json:"wentMs"`
	Why    string            `json:"why"`
	Came   string            `json:"came,omitempty"`
	CameAt *time.Time        `json:"cameAt,omitempty"`
	CameMs *int64            `json:"cameMs,omitempty"`
	Tasks  []TaskNoOwnerJSON `json:"tasks"`
}

// TaskNoOwnerJSON is a task's time with no running owner in a step.
type TaskNoOwnerJSON struct {
	Task string `json:"task"`
	Ms   int64  `json:"noRunningOwnerMs"`
}

// GoneJSON is a time a member was gone.
type GoneJSON struct {
	IntervalJSON
	Why string `json:"why"`
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
	// Gone (version 2): connection closed, silent or out of the group;
	// HeartbeatMs the interval that tells silence.
	Gone        []GoneJSON `json:"gone,omitempty"`
	HeartbeatMs int64      `json:"heartbeatIntervalMs"`
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

// TaskIntervalJSON is a time the task had the same owners and state:
// "running" (an owner that is there runs it), "twice" (two owners may run
// it), "stalled" (its owners are gone, or it has none since its owner
// went), "moving" (no owner while a rebalance moved it) or "no-owner"
// (none, outside a rebalance: flagged in the text). Owners are the
// members it is assigned to, gone or not; Why says whose going stalled it.
type TaskIntervalJSON struct {
	IntervalJSON
	State  string   `json:"state"`
	Owners []string `json:"owners,omitempty"` // labels
	Why    string   `json:"why,omitempty"`
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
	// Stalls (version 2): how many, their total and longest task-time.
	Stalls        int   `json:"stalls"`
	StallMs       int64 `json:"stallTaskMs"`
	LongestStallM int64 `json:"longestStallMs"`
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
		for _, g := range ln.Gone {
			m.Gone = append(m.Gone, GoneJSON{iv(g.From, g.To), g.Why})
		}
		m.HeartbeatMs = ln.HeartbeatInterval.Milliseconds()
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
		for _, in := range th.states {
			owners := make([]string, len(in.owners))
			for i, o := range in.owners {
				owners[i] = t.LabelOf(o)
			}
			tj.Intervals = append(tj.Intervals, TaskIntervalJSON{iv(in.from, in.to), in.state, owners, t.whyLabel(in.why)})
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
	n, total, longest := t.StallTotals()
	out.Summary.Stalls, out.Summary.StallMs, out.Summary.LongestStallM = n, total.Milliseconds(), longest.Milliseconds()
	out.Stalls, out.RollingSteps = []StallJSON{}, []RollingStepJSON{}
	for _, st := range t.Stalls {
		out.Stalls = append(out.Stalls, StallJSON{iv(st.From, st.To), st.Task, st.Dur().Milliseconds(), t.LabelOf(st.Owner), st.Why, st.AtEnd})
	}
	for _, st := range t.Steps {
		r := RollingStepJSON{Went: st.WentLane.InstanceLabel(), WentAt: st.Went, WentMs: ms(st.Went), Why: st.Why, Tasks: []TaskNoOwnerJSON{}}
		if st.CameLane != nil {
			at, m := st.Came, ms(st.Came)
			r.Came, r.CameAt, r.CameMs = st.CameLane.InstanceLabel(), &at, &m
		}
		for _, tn := range st.Tasks {
			r.Tasks = append(r.Tasks, TaskNoOwnerJSON{tn.Task, tn.Dur.Milliseconds()})
		}
		out.RollingSteps = append(out.RollingSteps, r)
	}
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
	// why: a stalled interval's gone owner and how it went ("<client
	// id> connection closed").
	why string
}

// whyLabel is a stalled interval's why with the owner's label.
func (t *Timeline) whyLabel(why string) string {
	owner, rest, ok := strings.Cut(why, " ")
	if !ok {
		return why
	}
	return t.LabelOf(owner) + " " + rest
}
