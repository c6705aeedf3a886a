package streams

import (
	"errors"
)

// ErrHandBackHeld answers a classic JoinGroup during a hand-back barrier:
// the caller holds the request (no response) until the hand-back finishes
// (then forwards it upstream with an empty member id) or is aborted (then
// runs it again through ClassicJoinGroup).
var ErrHandBackHeld = errors.New("the group is being handed back to the classic protocol; the JoinGroup is held")

// handBackJoin holds the JoinGroup of a known classic member during a
// barrier: its session timer stops (a joining Kafka consumer does not
// heartbeat) and twice its rebalance timeout bounds the hold. It reports false
// when no barrier is up (or it was aborted), and the join runs as usual.
func (ch *Change) handBackJoin(m *Member) bool {
	hb := ch.Group.Mem.HandBack
	if hb == nil || m == nil {
		return false
	}
	if hb.Aborted || HasStreamsMember(ch.Group) {
		hb.Aborted = true
		return false
	}
	hb.Held[m.ID] = true
	ch.Cancel(sessionTimerKey(m.ID))
	ch.Cancel(classicSyncTimerKey(m.ID))
	// The hold outlasts the join timeouts of the members still pulled
	// (each at most one rebalance timeout after its pull), so the barrier
	// completes by fencing laggards, not the members waiting in it.
	id, epoch := m.ID, m.MemberEpoch()
	ch.schedule(ClassicJoinTimerKey(id), 2*RebalanceTimeout(m), func(f *Change) {
		if cur := f.Group.Members[id]; cur != nil && cur.MemberEpoch() == epoch {
			f.fenceClassic(cur, "its JoinGroup was held for the hand-back longer than twice its rebalance timeout")
		}
	})
	return true
}

// handBackPull: during a barrier every classic Heartbeat is told to rejoin.
func (ch *Change) handBackPull() bool {
	hb := ch.Group.Mem.HandBack
	return hb != nil && !hb.Aborted && !HasStreamsMember(ch.Group)
}
