package streams

import (
	"iter"
	"time"
)

// A request an operation holds, as a timer is armed: Kafka keeps a classic
// member's waiting JoinGroup with its member and completes it when its
// rebalance lets it. Here the operation's result says the request is held
// and until when (Hold, a classic join's, HoldClassicJoin); a timer of the
// group releases it at that bound, and the change that ends its wait
// releases it earlier (ReleaseEnded). The runtime keeps a held request's
// answer by its key, opaquely, and runs it again only when a change
// releases the key (Change.Released), or answers it when the group goes.

// Hold is an operation's output: its request is held under Key, at the
// latest until Until.
type Hold struct {
	Key   HoldKey
	Until time.Time
}

// release releases the request held under key, if any.
func (ch *Change) release(key HoldKey) {
	ch.Released = append(ch.Released, key)
}

// ReleaseEnded releases each held classic JoinGroup (held: the keys the
// runtime holds for the group) whose member waits no more
// (ClassicJoinWaiting): a member released a task it waits for, the group
// epoch moved past it, a hand-back began, or it is no (classic) member of
// the group any more. The runtime calls it once a change is in the group
// (committed, or one that writes nothing); a change rolled back leaves the
// group as it was, and its waits with it.
func (ch *Change) ReleaseEnded(held iter.Seq[HoldKey]) {
	for key := range held {
		if !ClassicJoinWaiting(ch.Group, key.Member) {
			ch.release(key)
		}
	}
}

// HoldClassicJoin decides whether the classic JoinGroup this change served
// (res) is held (classic_join_wait.go): served without error, asking for no
// internal topic, its member waiting for tasks others hold, and either the
// first join of a departed member's successor (until zero: the hold starts
// now, for ClassicJoinHold(req)) or a held join run again before its
// bound (until). A held join's timer releases it at its bound.
func (ch *Change) HoldClassicJoin(req ClassicJoinRequest, res ClassicJoinResult, until time.Time) (Hold, bool) {
	g := ch.Group
	if res.Err != nil || len(res.CreatableTopics) > 0 || !ClassicJoinWaiting(g, res.MemberID) {
		return Hold{}, false
	}
	if until.IsZero() {
		if !SuccessorJoin(g, res.MemberID) {
			return Hold{}, false
		}
		d := ClassicJoinHold(req)
		if d <= 0 {
			return Hold{}, false
		}
		until = ch.Now.Add(d)
	}
	if !ch.Now.Before(until) {
		return Hold{}, false
	}
	key := HoldKey{Member: res.MemberID}
	ch.schedule(ClassicJoinHoldTimerKey(key.Member), until.Sub(ch.Now), func(ch *Change) { ch.release(key) })
	return Hold{Key: key, Until: until}, true
}
