package status

import (
	"strings"
	"sync"
	"time"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/streamshift/streamshift/migration"
)

// Events hears the coordinator's and the migration's events (cmd/streamshift
// fans them out to it and to the capture): it keeps each group's migration
// phase for the page and counts what the group metrics count. It is safe
// for concurrent use; its methods return at once (the coordinator calls
// them on a group's executor).
type Events struct {
	m   *Metrics
	now func() time.Time

	mu sync.Mutex
	// phase is each group's last migration phase. Bounded: a group is in
	// it only after a takeover started, and a migrated group is forgotten
	// (Forget) when its entry is older than phaseKeep and it is not served.
	phase map[string]Phase
}

// phaseKeep is how long a finished migration stays on the page after its
// group is no longer served.
const phaseKeep = time.Hour

// NewEvents returns the event hook that feeds m (nil: no metrics).
func NewEvents(m *Metrics) *Events {
	return &Events{m: m, now: time.Now, phase: map[string]Phase{}}
}

// GroupEvent counts a coordinator event.
func (e *Events) GroupEvent(ev coordinator.GroupEvent) {
	switch {
	case ev.Kind == coordinator.EventGroupState:
		e.groupState(ev.Group, ev.Fields[coordinator.FieldTasksRunning] == true)
		return
	case ev.Kind == coordinator.EventClassicGroupSynced:
		e.handBackSettled(ev.Group)
		return
	case ev.Kind == streams.EventMemberLeft && ev.Fields[streams.FieldProtocol] == streams.ProtocolStreams:
		e.streamsLeft(ev.Group)
	}
	if e.m == nil {
		return
	}
	switch ev.Kind {
	case streams.EventGroupEpochBumped:
		for _, cause := range strings.Split(ev.Reason, ", ") {
			e.m.rebalance(boundedLabel(cause))
		}
	case streams.EventMemberFenced:
		e.m.fenced(boundedLabel(ev.Reason))
	case streams.EventTargetAssignment:
		if ms, ok := ev.Fields["took_ms"].(int64); ok {
			e.m.assignment.Observe(float64(ms) / 1000)
		}
	}
}

// HeartbeatHandled observes a StreamsGroupHeartbeat's handling time.
func (e *Events) HeartbeatHandled(d time.Duration) {
	if e.m != nil {
		e.m.heartbeat.Observe(d.Seconds())
	}
}

// LogAppended observes a group-log append.
func (e *Events) LogAppended(d time.Duration, err error) {
	if e.m == nil {
		return
	}
	result := "ok"
	if err != nil {
		result = "failed"
	}
	e.m.logAppend.WithLabelValues(result).Observe(d.Seconds())
}

// TopicsCreated counts the internal topics the coordinator created.
func (e *Events) TopicsCreated(created, failed int) {
	if e.m == nil {
		return
	}
	e.m.topics.WithLabelValues("created").Add(float64(created))
	e.m.topics.WithLabelValues("failed").Add(float64(failed))
}

// boundedLabel is a reason as a label value: the coordinator's phrases are
// fixed but a few carry numbers (the epoch and timeout of a rebalance
// timeout's fencing), which would make a series per value; each run of
// digits becomes N.
func boundedLabel(reason string) string {
	var b strings.Builder
	digits := false
	for _, r := range reason {
		if r >= '0' && r <= '9' {
			if !digits {
				b.WriteByte('N')
			}
			digits = true
			continue
		}
		digits = false
		b.WriteRune(r)
	}
	return b.String()
}

// migrationPhases is the Phase Kind and State each migration event starts;
// an event not in it (hand-back-anchor-left) is a step within a phase and
// leaves the phase as it is.
var migrationPhases = map[string]struct{ kind, state string }{
	migration.EventTakeoverStarted: {"takeover", "running"},
	migration.EventTakeoverDone:    {"takeover", "done"},
	migration.EventTakeoverFailed:  {"takeover", "failed"},
	migration.EventHandBackStarted: {"hand-back", "running"},
	migration.EventHandBackDone:    {"hand-back", "done"},
	migration.EventHandBackFailed:  {"hand-back", "failed"},
}

// MigrationEvent keeps the group's phase and counts takeovers and
// hand-backs with their durations.
func (e *Events) MigrationEvent(ev migration.MigrationEvent) {
	now := e.now()
	ph, ok := migrationPhases[ev.Kind]
	if !ok {
		return
	}
	kind, state := ph.kind, ph.state
	e.mu.Lock()
	prev, had := e.phase[ev.Group]
	p := Phase{Kind: kind, State: state, Since: now}
	if ev.Err != nil {
		p.Reason = ev.Err.Error()
	}
	var took time.Duration
	if state != "running" && had && prev.Kind == kind && prev.State == "running" {
		took = now.Sub(prev.Since)
		p.Flip = took.Round(time.Millisecond).String()
		p.began = prev.began
	}
	if state == "running" {
		p.began = now
		if kind == "hand-back" && had && prev.State != "running" && prev.lastStreamsLeave.After(prev.Since) {
			// The hand-back began at the last streams member's leave
			// that led to it, as the capture's timeline says it: the
			// start event waits for a classic member's Heartbeat.
			p.began = prev.lastStreamsLeave
		}
	}
	if had {
		p.lastStreamsLeave = prev.lastStreamsLeave
	}
	p.tasksRunning = had && prev.tasksRunning
	settled := time.Duration(-1)
	if kind == "takeover" && state == "done" && p.tasksRunning && !p.began.IsZero() {
		// Nothing moved: the group was at rest when it flipped.
		settled = p.settle(now)
	}
	e.phase[ev.Group] = p
	e.mu.Unlock()
	if e.m != nil {
		e.m.migration(kind, state, took, had && prev.Kind == kind && prev.State == "running")
		if settled >= 0 {
			e.m.migrationSettle.WithLabelValues(kind).Observe(settled.Seconds())
		}
	}
}

// groupState keeps whether a migrating group's tasks run (the
// coordinator's group-state event); a takeover done earlier settles when
// they do: every task runs where the assignor put it.
func (e *Events) groupState(group string, running bool) {
	now := e.now()
	e.mu.Lock()
	p, had := e.phase[group]
	if !had {
		e.mu.Unlock()
		return
	}
	p.tasksRunning = running
	settled := time.Duration(-1)
	if running && p.Kind == "takeover" && p.State == "done" && p.Settled.IsZero() && !p.began.IsZero() {
		settled = p.settle(now)
	}
	e.phase[group] = p
	e.mu.Unlock()
	if e.m != nil && settled >= 0 {
		e.m.migrationSettle.WithLabelValues(p.Kind).Observe(settled.Seconds())
	}
}

// streamsLeft keeps when the group's latest streams member left (a
// hand-back begins at the last one's leave).
func (e *Events) streamsLeft(group string) {
	now := e.now()
	e.mu.Lock()
	if p, had := e.phase[group]; had {
		p.lastStreamsLeave = now
		e.phase[group] = p
	}
	e.mu.Unlock()
}

// handBackSettled: every member of the broker's classic generation after
// the group's hand-back has its assignment (the coordinator's
// EventClassicGroupSynced, the rule the capture's timeline settles a
// hand-back by): a hand-back done earlier settles, once.
func (e *Events) handBackSettled(group string) {
	now := e.now()
	e.mu.Lock()
	p, had := e.phase[group]
	if !had || p.Kind != "hand-back" || p.State != "done" || !p.Settled.IsZero() || p.began.IsZero() {
		e.mu.Unlock()
		return
	}
	settled := p.settle(now)
	e.phase[group] = p
	e.mu.Unlock()
	if e.m != nil {
		e.m.migrationSettle.WithLabelValues(p.Kind).Observe(settled.Seconds())
	}
}

// settle marks the phase settled at now; it returns how long the step
// took, from its start.
func (p *Phase) settle(now time.Time) time.Duration {
	p.Settled = now
	d := now.Sub(p.began)
	p.Took = d.Round(time.Millisecond).String()
	return d
}

// phases copies the groups' phases.
func (e *Events) phases() map[string]Phase {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make(map[string]Phase, len(e.phase))
	for g, p := range e.phase {
		out[g] = p
	}
	return out
}

// forget drops the phases of groups not served for longer than phaseKeep.
func (e *Events) forget(served map[string]bool) {
	now := e.now()
	e.mu.Lock()
	defer e.mu.Unlock()
	for g, p := range e.phase {
		if !served[g] && p.State != "running" && now.Sub(p.Since) > phaseKeep {
			delete(e.phase, g)
		}
	}
}
