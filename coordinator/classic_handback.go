package coordinator

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// BeginHandBack puts up the hand-back barrier of a group whose members are
// all classic: a new group epoch with an empty target, so every classic
// Heartbeat gets REBALANCE_IN_PROGRESS, every member revokes its tasks at
// its next JoinGroup/SyncGroup, and its JoinGroup after that, owning
// nothing, is held (ErrHandBackHeld). Once the barrier is
// up (done(nil)), onBarrier is called exactly once, when it ends: Ready
// (every member left is held; the others were fenced or left), Aborted (a
// streams-protocol member joined), or neither and not Running (the barrier
// was taken down, the group deleted or unloaded, the coordinator closed).
// The change that ends it tells it, whatever it is (a held JoinGroup, a
// timer fencing a member, a leave, a streams join): no request needs to
// arrive. It is called after the change's records are in the log, outside
// the group's lock and before the group's next work, so it may call the
// coordinator; like the coordinator's other callbacks it must not block.
// BeginHandBack on a barrier already up moves its onBarrier to this caller.
func (c *Coordinator) BeginHandBack(groupID string, onBarrier func(streams.HandBackState), done func(error)) {
	c.run(groupID, func(s *groupQueue) {
		ch := c.newChange(s)
		hb, err := ch.BeginHandBack(onBarrier)
		if ferr := c.finish(s, ch); ferr != nil && err == nil {
			// The barrier's empty target is not in the log: no barrier.
			err = fmt.Errorf("hand-back barrier of %s: %v: %w", groupID, ferr, appendFailed(ferr))
		}
		if err == nil {
			s.barrier = hb
		}
		done(err)
	}, func(e *streams.CoordError) { done(e) })
}

// HandBack reports the state of a group's hand-back.
func (c *Coordinator) HandBack(groupID string, done func(streams.HandBackState)) {
	c.run(groupID, func(s *groupQueue) { done(streams.HandBackStateOf(s.group)) }, func(*streams.CoordError) { done(streams.HandBackState{}) })
}

// AbortHandBack takes the barrier down: held members get their session
// timers back; the caller runs their held JoinGroups through
// ClassicJoinGroup, where they are served by the streams group.
func (c *Coordinator) AbortHandBack(groupID string, done func()) {
	c.run(groupID, func(s *groupQueue) {
		ch := c.newChange(s)
		ch.AbortHandBack()
		_ = c.finish(s, ch) // a failed append rolls the group back to the log; the next heartbeat retargets
		done()
	}, func(*streams.CoordError) { done() })
}

// FinishHandBack deletes the streams group once the barrier is complete:
// every member is a held classic member. Its records go as DeleteGroup's
// do. The caller has made the anchor leave upstream before, and forwards
// the held JoinGroups upstream after.
func (c *Coordinator) FinishHandBack(groupID string, done func(error)) {
	c.run(groupID, func(s *groupQueue) {
		g := s.group
		if st := streams.HandBackStateOf(g); !st.Ready {
			done(fmt.Errorf("hand-back of %s is not ready (%+v): %w", groupID, st, kerr.RebalanceInProgress))
			return
		}
		err := c.dropGroup(s, "hand-back")
		if err == nil {
			// The group is the broker's again; it settles when its
			// members have their classic assignment there.
			c.armHandBackSettle(s)
		}
		done(err)
	}, func(e *streams.CoordError) { done(e) })
}

// AbandonTakeOver deletes a group TakeOverClassicGroup built, members and
// all, when the takeover cannot complete upstream (the classic members
// could not be fenced there, or the anchor could not join): the group is
// left to the upstream classic coordinator as if nothing happened.
func (c *Coordinator) AbandonTakeOver(groupID string, done func(error)) {
	c.run(groupID, func(s *groupQueue) {
		if s.group == nil {
			done(nil)
			return
		}
		done(c.dropGroup(s, "abandon takeover"))
	}, func(e *streams.CoordError) { done(e) })
}

// dropGroup deletes a group whatever its members, with DeleteGroup's
// records in DeleteGroup's order: current assignments, target members,
// target metadata, members, group metadata, topology, ownership. A failed
// append is appendFailed's code for what asked (a hand-back, an abandoned
// takeover).
func (c *Coordinator) dropGroup(s *groupQueue, what string) error {
	ch := c.newChange(s)
	ch.TombstoneGroup(true)
	if err := c.commit(s, ch); err != nil {
		return fmt.Errorf("%s of %s: %v: %w", what, s.id, err, appendFailed(err))
	}
	s.stopTimers()
	s.group = nil
	return nil
}

// ClassicOnly reports whether the group is a streams group here whose
// members are all classic: the condition of a hand-back.
func (c *Coordinator) ClassicOnly(groupID string, done func(bool)) {
	c.run(groupID, func(s *groupQueue) {
		done(classicOnly(s.group))
	}, func(*streams.CoordError) { done(false) })
}
