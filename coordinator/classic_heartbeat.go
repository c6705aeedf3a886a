package coordinator

import (
	"fmt"

	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/twmb/franz-go/pkg/kerr"
)

// ClassicHeartbeat keeps a classic member's session and tells it to rejoin
// (REBALANCE_IN_PROGRESS) when a JoinGroup would change its assignment:
// the group epoch moved past it, it has tasks to revoke, or tasks it waits
// for were released (Kafka's classicGroupHeartbeatToConsumerGroup). A member
// told to rejoin must do so within its rebalance timeout. done gets nil,
// ErrClassicNotServed or an error wrapping a *kerr.Error.
func (c *Coordinator) ClassicHeartbeat(req streams.ClassicHeartbeatRequest, done func(error)) {
	c.run(req.GroupID, func(s *shard) { done(c.classicHeartbeat(s, req)) }, func(e *streams.CoordError) { done(e) })
}

func (c *Coordinator) classicHeartbeat(s *shard, req streams.ClassicHeartbeatRequest) error {
	g := s.group
	m, err := streams.ClassicMember(g, req.GroupID, req.MemberID, req.InstanceID)
	if err != nil {
		return err
	}
	if req.Generation != m.MemberEpoch() {
		return fmt.Errorf("generation %d of member %s is not its member epoch %d: %w", req.Generation, m.ID, m.MemberEpoch(), kerr.IllegalGeneration)
	}
	ch := c.newChange(s)
	defer c.carryOut(s, ch)
	ch.ScheduleSession(m.ID)
	if !streams.ClassicMustRejoin(g, m) && !ch.HandBackPull() {
		return nil
	}
	if !ch.HasTimer(streams.ClassicJoinTimerKey(m.ID)) {
		// Fenced only if it still has a reason to rejoin by then.
		ch.ScheduleClassicTimeout(streams.ClassicJoinTimerKey(m.ID), m, streams.ClassicJoinTimeoutReason, func(g *streams.Group, m *streams.Member) bool {
			return streams.ClassicMustRejoin(g, m) || g.Mem.HandBack != nil
		})
	}
	return fmt.Errorf("member %s of group %s must rejoin (member epoch %d, group epoch %d, %s): %w", m.ID, g.ID, m.MemberEpoch(), g.GroupEpoch, m.CurrentAssignment().State, kerr.RebalanceInProgress)
}

// ClassicLeaveGroup fences the classic members that leave; done gets one
// error per member (nil, or wrapping UNKNOWN_MEMBER_ID / FENCED_INSTANCE_ID),
// or ErrClassicNotServed for the whole request.
func (c *Coordinator) ClassicLeaveGroup(groupID string, members []streams.ClassicLeaveMember, done func([]error, error)) {
	c.run(groupID, func(s *shard) { done(c.classicLeave(s, groupID, members)) }, func(e *streams.CoordError) { done(nil, e) })
}

func (c *Coordinator) classicLeave(s *shard, groupID string, members []streams.ClassicLeaveMember) ([]error, error) {
	g := s.group
	if g == nil || len(g.Members) == 0 {
		return nil, streams.ErrClassicNotServed
	}
	ch := c.newChange(s)
	errs := make([]error, len(members))
	for i, lm := range members {
		id := lm.MemberID
		if id == "" && lm.InstanceID != "" {
			// LeaveGroup v3+ may name a static member by instance only.
			id = g.StaticMembers[lm.InstanceID]
		}
		m, err := streams.ClassicMember(g, groupID, id, lm.InstanceID)
		if err != nil {
			errs[i] = err
			continue
		}
		ch.LogLeft(m, "has left group through explicit `LeaveGroup` request")
		ch.RemoveClassic(m, streams.BumpMemberLeft)
	}
	if err := c.commit(s, ch); err != nil {
		return nil, fmt.Errorf("leave %s: %v: %w", groupID, err, kerr.CoordinatorNotAvailable)
	}
	return errs, nil
}

// ValidateClassicOffsetCommit checks an OffsetCommit or TxnOffsetCommit of a
// classic member, whose generation is its member epoch, as Kafka's classic
// group does: an unknown member gets UNKNOWN_MEMBER_ID, another generation
// ILLEGAL_GENERATION, a wrong instance FENCED_INSTANCE_ID. It never answers
// REBALANCE_IN_PROGRESS (Kafka Streams' thread dies on it): a member's
// commits are accepted at its epoch even while a new round is pending. A
// commit without a member (generation -1, no member id) is accepted when the
// group is empty or, for TxnOffsetCommit, always, as Kafka does. A streams
// member is checked by ValidateOffsetCommit.
func (c *Coordinator) ValidateClassicOffsetCommit(req streams.OffsetCommitRequest, done func(streams.OffsetCommitResult)) {
	c.run(req.GroupID, func(s *shard) { done(streams.ValidateClassicOffsetCommit(s.group, req)) }, func(e *streams.CoordError) { done(streams.OffsetCommitResult{Err: e}) })
}
