package streams

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

// ErrHandBackHeld answers a classic JoinGroup during a hand-back barrier:
// the caller holds the request (no response) until the hand-back finishes
// (then forwards it upstream with an empty member id) or is aborted (then
// runs it again through ClassicJoinGroup).
var ErrHandBackHeld = errors.New("the group is being handed back to the classic protocol; the JoinGroup is held")

// handBackJoin holds the JoinGroup of a known classic member during a
// barrier, once the member owns nothing (handBackOwnsNothing): its session
// timer stops (a joining Kafka consumer does not heartbeat) and twice its
// rebalance timeout bounds the hold. It reports false when no barrier is up
// (or it was aborted), or the member still owns tasks: then the join runs
// as usual and reconciles the member towards the barrier's empty target.
func (ch *Change) handBackJoin(m *Member) bool {
	hb := ch.Group.Mem.HandBack
	if hb == nil || m == nil {
		return false
	}
	if hb.Aborted || HasStreamsMember(ch.Group) {
		hb.Aborted = true
		return false
	}
	if !handBackOwnsNothing(m) {
		return false
	}
	hb.Held[m.ID] = true
	ch.cancel(sessionTimerKey(m.ID))
	ch.cancel(classicSyncTimerKey(m.ID))
	// The hold outlasts the join timeouts of the members still pulled
	// (each at most one rebalance timeout after its pull), so the barrier
	// completes by fencing laggards, not the members waiting in it.
	id, epoch := m.ID, m.MemberEpoch()
	ch.schedule(classicJoinTimerKey(id), 2*RebalanceTimeout(m), func(f *Change) {
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

// BeginHandBack is the operation of Coordinator.BeginHandBack: the barrier
// of a group whose members are all classic, put up (or kept) with
// onBarrier to tell when it ends. Putting it up bumps the group epoch and
// writes an empty target for every member: each member's next Heartbeat
// gets REBALANCE_IN_PROGRESS, its JoinGroup reconciles it to nothing (its
// SyncGroup assignment drops every task, which a cooperative Kafka Streams
// member commits and closes cleanly), and only its join after that, owning
// nothing, is held.
func (ch *Change) BeginHandBack(onBarrier func(HandBackState)) (*HandBack, error) {
	g := ch.Group
	switch {
	case g == nil || len(g.Members) == 0:
		return nil, fmt.Errorf("group %s has no members to hand back: %w", ch.GroupID, kerr.GroupIDNotFound)
	case HasStreamsMember(g):
		return nil, fmt.Errorf("group %s still has streams-protocol members: %w", ch.GroupID, kerr.NonEmptyGroup)
	}
	if g.Mem.HandBack == nil {
		g.Mem.HandBack = &HandBack{Held: map[string]bool{}}
		ch.retarget(bumpHandBackBarrier)
	}
	g.Mem.HandBack.OnBarrier = onBarrier
	return g.Mem.HandBack, nil
}

// retarget bumps the group epoch and computes the target at once (no
// assignment interval: a barrier's target is empty, and the one after a
// barrier gives the members back their tasks). The members learn it on
// their next Heartbeat (REBALANCE_IN_PROGRESS, their member epoch behind).
func (ch *Change) retarget(why string) {
	g := ch.Group
	ch.bumpGroupEpoch("", GroupMetadataValue{
		MetadataHash:           g.MetadataHash,
		ValidatedTopologyEpoch: g.ValidatedTopologyEpoch,
		LastAssignmentConfigs:  g.LastAssignmentConfigs,
	}, []string{why})
	if _, _, err := ch.configureTopology(g.Topology); err != nil {
		return // the next heartbeat computes it, or reports why not
	}
	_ = ch.computeTargetAssignment() // on failure the next heartbeat retries and reports it
	ch.Commit()
}

// AbortHandBack is the operation of Coordinator.AbortHandBack: the barrier
// taken down, its held members' session timers back, and, unless a streams
// member's join already did, a new target that gives the members their
// tasks again.
func (ch *Change) AbortHandBack() {
	g := ch.Group
	if g == nil || g.Mem.HandBack == nil {
		return
	}
	for id := range g.Mem.HandBack.Held {
		if g.Members[id] != nil {
			ch.cancel(classicJoinTimerKey(id))
			ch.scheduleSession(id)
		}
	}
	emptied := handBackBarrierUp(g)
	g.Mem.HandBack = nil
	if emptied && len(g.Members) > 0 {
		ch.retarget(bumpHandBackAborted)
	}
}
