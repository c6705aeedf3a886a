package streams

import "time"

// A request an operation holds, as a timer is armed: Kafka keeps a classic
// member's waiting JoinGroup with its member and completes it when its
// rebalance lets it. Here the operation's result says the request is held
// and until when (Hold; a classic join's: HoldClassicJoin,
// classic_join.go); a timer of the group releases it at that bound
// (Hold.Timer), and the change that ends its wait releases it earlier
// (ReleaseEnded, classic_join.go). The runtime keeps a held
// request's answer by its key, opaquely, and runs it again only when a
// change releases the key (Change.Released), or answers it when the group
// goes.

// Hold is an operation's output: its request is held under Key, at the
// latest until Until.
type Hold struct {
	Key   HoldKey
	Until time.Time
}

// Timer is the hold's bound: a timer of the group, armed at now, whose
// change releases the held request at Until. A held request run again
// cancels it (its answer, or its next hold, arms its own).
func (h Hold) Timer(now time.Time) TimerOp {
	return TimerOp{Key: ClassicJoinHoldTimerKey(h.Key.Member), After: h.Until.Sub(now), Fire: func(ch *Change) { ch.release(h.Key) }}
}

// release releases the request held under key, if any.
func (ch *Change) release(key HoldKey) {
	ch.Released = append(ch.Released, key)
}
