package streams

import (
	"fmt"
	"time"

	"github.com/streamshift/streamshift/coordinator/streams/assignor"
)

// Change is one operation on one group, Kafka's CoordinatorResult: the
// records it emits, replayed into the group as they are emitted so later
// steps see them, and the I/O it needs, which the runtime carries out once
// the operation returns (before it appends the records, or rolls the group
// back to the log when the operation failed): timers to arm or cancel,
// internal topics to create, topics whose metadata to refresh, log lines.
// An operation reads the world only through the change's inputs.
type Change struct {
	GroupID string
	Group   *Group // nil until a join creates the group
	Config  GroupConfig
	Now     time.Time
	Records []Record
	Created bool // the group did not exist before this change
	// Deleted: the change tombstones the group; once its records are in
	// the log the group's state goes (ExpireGroup).
	Deleted bool
	// Classic is the classic metadata of the JoinGroup this change runs
	// as a heartbeat (classic_join.go); nil for streams heartbeats.
	Classic *ClassicMemberMetadata

	// Inputs the runtime gives.
	Image        MetadataImage
	Assignor     assignor.TaskAssignor
	Configure    ConfigureFunc
	MaxGroupSize int
	// CanCreateTopics: the operation's caller creates the internal topics
	// it asks for (Topics); timers and admin operations have no caller
	// that would, and ask for none.
	CanCreateTopics bool
	// Claim is the ownership claim waiting for the join that creates the
	// group; a change that creates the group takes it (takeClaim).
	Claim *OwnershipValue
	// Pending are the timers the group had armed when the change began.
	Pending ArmedTimers
	// Wall reads the wall clock, to time the assignor for its log line
	// (Now is the coordinator's Clock, virtual in tests).
	Wall        func() time.Time
	DebugWanted bool // debug lines are wanted
	// DisconnectExpiryHeartbeats is K of the disconnect expiry
	// (disconnect_expiry.go); 0 turns it off.
	DisconnectExpiryHeartbeats int

	// Effects, in the order the operation asked for them.
	Timers []TimerOp
	// Topics are the internal topics to create, for the operation's
	// caller (the runtime does not create them).
	Topics     [][]CreatableTopic
	Refresh    [][]string
	Logs       []*LogEntry
	ClaimTaken *OwnershipValue
	// Watch are client connections whose close the runtime reports to
	// the group with ConnClosed, as an operation of its own.
	Watch []<-chan struct{}
	// Released are the keys of held requests to run again (hold.go).
	Released []HoldKey
	// Outcome is set by the operation (Commit, RollBack).
	Outcome Outcome

	timerBuf [2]TimerOp
}

// TimerOp arms (fire set) or cancels (fire nil) a timer of the group, as
// Kafka's CoordinatorTimer.schedule and cancel.
type TimerOp struct {
	Key   TimerKey
	After time.Duration
	Fire  func(*Change) // runs as a change of its own when the timer fires
}

// HoldKey names a request an operation held (hold.go): a classic
// member's JoinGroup, by member id (a member has one JoinGroup in flight; a
// second replaces the first).
type HoldKey struct{ Member string }

func (ch *Change) emit(r Record) {
	r.GroupID = ch.Group.ID
	ch.Records = append(ch.Records, r)
	if err := ch.Group.Replay(r); err != nil {
		// Only this package builds records; a failure here is a bug.
		panic(fmt.Sprintf("coordinator: replaying own record %v: %v", r, err))
	}
}

// schedule arms (or re-arms) a timer of the group; fire runs as a change of
// the group once d has passed. Re-arming a pending timer resets it.
func (ch *Change) schedule(key TimerKey, d time.Duration, fire func(ch *Change)) {
	ch.addTimerOp(TimerOp{Key: key, After: d, Fire: fire})
}

// cancel stops a timer of the group, if armed.
func (ch *Change) cancel(key TimerKey) {
	if !ch.hasTimer(key) {
		return
	}
	ch.addTimerOp(TimerOp{Key: key})
}

func (ch *Change) addTimerOp(op TimerOp) {
	if ch.Timers == nil {
		ch.Timers = ch.timerBuf[:0] // most changes arm a timer or two
	}
	ch.Timers = append(ch.Timers, op)
}

// hasTimer reports whether a timer of the key is armed, as this change
// left it.
func (ch *Change) hasTimer(key TimerKey) bool {
	for i := len(ch.Timers) - 1; i >= 0; i-- {
		if ch.Timers[i].Key == key {
			return ch.Timers[i].Fire != nil
		}
	}
	return ch.Pending != nil && ch.Pending.HasTimer(key)
}

// ArmedTimers are the timers a group has armed, as the runtime knows them.
type ArmedTimers interface {
	HasTimer(key TimerKey) bool
}

// takeClaim takes the ownership claim waiting for the group, if any.
func (ch *Change) takeClaim() *OwnershipValue {
	v := ch.Claim
	if v != nil {
		ch.Claim, ch.ClaimTaken = nil, v
	}
	return v
}

// requestRefresh asks the runtime to refresh the metadata of topics.
func (ch *Change) requestRefresh(topics []string) {
	ch.Refresh = append(ch.Refresh, topics)
}

// Outcome is what the runtime does with a change's records once its
// operation returns.
type Outcome int8

const (
	// OutcomeNone: nothing to append (an operation that only reads, or
	// only arms timers).
	OutcomeNone Outcome = iota
	// OutcomeCommit: append the records; the answer leaves once they are
	// in the log.
	OutcomeCommit
	// OutcomeRollBack: discard the records; the group goes back to what
	// the log holds.
	OutcomeRollBack
)

// Commit asks the runtime to append the change's records.
func (ch *Change) Commit() { ch.Outcome = OutcomeCommit }

// RollBack asks the runtime to discard the change's records.
func (ch *Change) RollBack() { ch.Outcome = OutcomeRollBack }
