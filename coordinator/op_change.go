package coordinator

import (
	"fmt"
	"time"

	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/streamshift/streamshift/coordinator/streams/assignor"
)

// change is one operation on one group, Kafka's CoordinatorResult: the
// records it emits, replayed into the group as they are emitted so later
// steps see them, and the I/O it needs, which the runtime carries out once
// the operation returns (before it appends the records, or rolls the group
// back to the log when the operation failed): timers to arm or cancel,
// internal topics to create, topics whose metadata to refresh, log lines.
// An operation reads the world only through the change's inputs.
type change struct {
	groupID string
	g       *streams.Group // nil until a join creates the group
	cfg     streams.GroupConfig
	now     time.Time
	records []streams.Record
	created bool // the group did not exist before this change
	// classic is the classic metadata of the JoinGroup this change runs
	// as a heartbeat (classic_join.go); nil for streams heartbeats.
	classic *streams.ClassicMemberMetadata

	// Inputs the runtime gives.
	image           MetadataImage
	assignor        assignor.TaskAssignor
	configure       streams.ConfigureFunc
	maxGroupSize    int
	canCreateTopics bool
	// claim is the ownership claim waiting for the join that creates the
	// group; a change that creates the group takes it (takeClaim).
	claim *streams.OwnershipValue
	// pending tells whether the group has a timer of a key armed when the
	// change began.
	pending     func(timerKey) bool
	debugWanted bool // debug lines are wanted

	// Effects, in the order the operation asked for them.
	timers     []timerOp
	armed      map[timerKey]bool // timers armed (true) or cancelled (false) by this change
	topics     [][]CreatableTopic
	refresh    [][]string
	logs       []*logEntry
	claimTaken *streams.OwnershipValue
}

// timerOp arms (fire set) or cancels (fire nil) a timer of the group, as
// Kafka's CoordinatorTimer.schedule and cancel.
type timerOp struct {
	key   timerKey
	after time.Duration
	fire  func(*change) // runs as a change of its own when the timer fires
}

func (ch *change) emit(r streams.Record) {
	r.GroupID = ch.g.ID
	ch.records = append(ch.records, r)
	if err := ch.g.Replay(r); err != nil {
		// Only this package builds records; a failure here is a bug.
		panic(fmt.Sprintf("coordinator: replaying own record %v: %v", r, err))
	}
}

// schedule arms (or re-arms) a timer of the group; fire runs as a change of
// the group once d has passed. Re-arming a pending timer resets it.
func (ch *change) schedule(key timerKey, d time.Duration, fire func(ch *change)) {
	ch.timers = append(ch.timers, timerOp{key: key, after: d, fire: fire})
	ch.markTimer(key, true)
}

// cancel stops a timer of the group, if armed.
func (ch *change) cancel(key timerKey) {
	if !ch.hasTimer(key) {
		return
	}
	ch.timers = append(ch.timers, timerOp{key: key})
	ch.markTimer(key, false)
}

func (ch *change) markTimer(key timerKey, armed bool) {
	if ch.armed == nil {
		ch.armed = map[timerKey]bool{}
	}
	ch.armed[key] = armed
}

// hasTimer reports whether a timer of the key is armed, as this change
// left it.
func (ch *change) hasTimer(key timerKey) bool {
	if armed, ok := ch.armed[key]; ok {
		return armed
	}
	return ch.pending != nil && ch.pending(key)
}

// takeClaim takes the ownership claim waiting for the group, if any.
func (ch *change) takeClaim() *streams.OwnershipValue {
	v := ch.claim
	if v != nil {
		ch.claim, ch.claimTaken = nil, v
	}
	return v
}

// requestRefresh asks the runtime to refresh the metadata of topics.
func (ch *change) requestRefresh(topics []string) {
	ch.refresh = append(ch.refresh, topics)
}
