package coordinator

import (
	"fmt"
	"time"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// Events hears what the coordinator did to a group and why, for a capture
// (package capture, wired by cmd/streamshift): group epoch bumps with their
// cause, target assignments computed, members fenced or gone with the
// reason, records written to the group log. GroupEvent runs on the group's
// executor: it must return at once. Without Options.Events nothing is
// built.
type Events interface {
	GroupEvent(GroupEvent)
}

// GroupEvent is one thing the coordinator did to a group.
type GroupEvent struct {
	// Kind is a streams.Event* constant or EventRecordsWritten.
	Kind, Group, Member, Reason string
	// Fields are the fields of the coordinator's log line.
	Fields map[string]any
	// Message is the log line, in Kafka's words.
	Message string
	At      time.Time
}

// Timings, when the Events also implement it, hears how long the
// coordinator's steps took and what they created, for the group metrics.
// Its methods run on the group's executor or the log's and topic creator's
// callbacks: they must return at once.
type Timings interface {
	// HeartbeatHandled: a valid StreamsGroupHeartbeat answered, d after it
	// reached the coordinator (queueing, the change and the log append).
	HeartbeatHandled(d time.Duration)
	// LogAppended: a change's records appended to the group log (or the
	// append failed), in d.
	LogAppended(d time.Duration, err error)
	// TopicsCreated: internal topics the coordinator asked for, created or
	// failed.
	TopicsCreated(created, failed int)
}

// timings are the Events' Timings, or nil.
func timings(ev Events) Timings {
	t, _ := ev.(Timings)
	return t
}

// EventRecordsWritten: records of a change appended to the group log.
const EventRecordsWritten = "records-written"

// logEvent tells the event hook about a log entry that reports an event.
func logEvent(ev Events, at time.Time, e *streams.LogEntry) {
	if ev == nil || e.Event == "" {
		return
	}
	ge := GroupEvent{Kind: e.Event, Fields: make(map[string]any, len(e.Fields)), At: at}
	for _, f := range e.Fields {
		switch f.Key {
		case "group":
			ge.Group, _ = f.Value.(string)
		case "member":
			ge.Member, _ = f.Value.(string)
		case "reason":
			ge.Reason, _ = f.Value.(string)
		default:
			if d, ok := f.Value.(time.Duration); ok {
				ge.Fields[f.Key+"_ms"] = d.Milliseconds()
			} else if err, ok := f.Value.(error); ok {
				ge.Fields[f.Key] = err.Error()
			} else {
				ge.Fields[f.Key] = f.Value
			}
		}
	}
	if e.Format != "" {
		ge.Message = fmt.Sprintf(e.Format, e.Args...)
	}
	ev.GroupEvent(ge)
}

// recordsEvent tells the event hook what a commit appended.
func recordsEvent(ev Events, at time.Time, group string, recs []streams.Record) {
	if ev == nil {
		return
	}
	types := make([]string, len(recs))
	for i, r := range recs {
		types[i] = r.Type.String()
		if r.Tombstone() {
			types[i] += " (tombstone)"
		}
		if r.MemberID != "" {
			types[i] += " " + r.MemberID
		}
	}
	ev.GroupEvent(GroupEvent{Kind: EventRecordsWritten, Group: group, At: at, Fields: map[string]any{"count": len(recs), "records": types}})
}

// EventGroupState and FieldTasksRunning: streams.EventGroupState.
const (
	EventGroupState   = streams.EventGroupState
	FieldTasksRunning = streams.FieldTasksRunning
)

// groupStateSeen is what the group-state event last told of a group.
type groupStateSeen struct {
	state              streams.GroupState
	tasksRunning, seen bool
}

// tell tells the event hook the group's state when a change moved it. It
// is computed only when records were written (what moves a state) and an
// event hook listens: steady heartbeats write none.
func (m *groupStateSeen) tell(ev Events, at time.Time, id string, g *streams.Group) {
	if ev == nil || g == nil {
		return
	}
	st, running := g.State(), g.TasksRunning()
	if m.seen && st == m.state && running == m.tasksRunning {
		return
	}
	previous, seen := m.state, m.seen
	*m = groupStateSeen{state: st, tasksRunning: running, seen: true}
	fields := map[string]any{"state": st.String(), FieldTasksRunning: running}
	if seen {
		fields["previous"] = previous.String()
	}
	ev.GroupEvent(GroupEvent{Kind: EventGroupState, Group: id, At: at, Fields: fields,
		Message: fmt.Sprintf("[GroupId %s] Group state is %s; tasks running: %v.", id, st, running)})
}
