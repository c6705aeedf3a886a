package streams

import (
	"iter"
	"time"
)

// A classic JoinGroup answered in one round, beyond Kafka 4.4 (issue #28,
// docs/fast-roll.md §12). A step back of a rolling migration (streams →
// classic) stops a 4.4 streams instance, which leaves (epoch -1): its tasks
// go to the other members at once. Its classic successor then joins with
// nothing, and its target takes its share back from those members. Kafka's
// rule (classicGroupJoinToConsumerGroup) answers the join at once with what
// is free, which is nothing yet: the others revoke at their next heartbeat,
// and the classic member learns that they did only at its next classic
// Heartbeat (heartbeat.interval.ms, 3 s), which answers REBALANCE_IN_PROGRESS;
// only its second JoinGroup and SyncGroup give it its tasks. The classic
// protocol's own coordinator holds a JoinGroup until the rebalance can
// complete, bounded by the rebalance timeout; here the coordinator holds the
// join of the departed member's successor until the tasks its target gives
// it are released (ClassicJoinWaiting), and then runs the join again as if
// the member had rejoined at that moment: one round, one answer.
//
// Held is only the first join after a streams member left a migrating
// group (SuccessorJoin, successor_watch.go), and only if it owns no active
// task: it processes nothing while it waits, so no transaction of it stays
// open and no commit is delayed (a held cooperative member would keep
// processing with an open transaction). Every other classic join is
// answered at once, as Kafka's classicGroupJoinToConsumerGroup does.

// ClassicJoinWaiting: is the classic member memberID waiting for active or
// standby tasks of its target that other members still hold, with nothing
// a JoinGroup could give it now? False once those members released a task
// it waits for, when the group epoch moved past it, when a hand-back
// barrier is up (a join then goes to the barrier), and for a member that
// is not (or no longer) a classic member of the group.
func ClassicJoinWaiting(g *Group, memberID string) bool {
	if g == nil || g.Mem.HandBack != nil {
		return false
	}
	m := g.Members[memberID]
	if m == nil || !m.IsClassic() {
		return false
	}
	return m.CurrentAssignment().State == MemberUnreleasedTasks && !classicMustRejoin(g, m)
}

// ClassicJoinHold is how long a classic JoinGroup may be held waiting for
// its tasks: half the member's session timeout, and never past its
// rebalance timeout. A classic consumer sends no Heartbeat while its
// JoinGroup is in flight, and unlike Kafka's classic coordinator (which
// keeps a member awaiting its join alive) the member's session timer runs
// on here: half of it leaves the member its session after the answer.
// Zero for a member that must not be held.
func ClassicJoinHold(req ClassicJoinRequest) time.Duration {
	if req.Subscription == nil || len(req.Subscription.OwnedPartitions) > 0 {
		return 0
	}
	d := time.Duration(req.SessionTimeoutMs) * time.Millisecond / 2
	if r := time.Duration(req.RebalanceTimeoutMs) * time.Millisecond; r < d {
		d = r
	}
	return max(d, 0)
}

// HoldClassicJoin decides whether the classic JoinGroup this change served
// (res) is held (classic_join_wait.go): served without error, asking for no
// internal topic, its member waiting for tasks others hold, and either the
// first join of a departed member's successor (until zero: the hold starts
// now, for ClassicJoinHold(req)) or a held join run again before its
// bound (until). Its bound is a timer the runtime arms once the change is
// in the log (Hold.Timer).
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
	return Hold{Key: HoldKey{Member: res.MemberID}, Until: until}, true
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
