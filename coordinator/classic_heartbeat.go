package coordinator

import (
	"fmt"

	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/twmb/franz-go/pkg/kerr"
)

// ClassicHeartbeatRequest is a classic member's Heartbeat.
type ClassicHeartbeatRequest struct {
	GroupID    string
	MemberID   string
	InstanceID string
	Generation int32
}

// ClassicHeartbeat keeps a classic member's session and tells it to rejoin
// (REBALANCE_IN_PROGRESS) when a JoinGroup would change its assignment:
// the group epoch moved past it, it has tasks to revoke, or tasks it waits
// for were released (Kafka's classicGroupHeartbeatToConsumerGroup). A member
// told to rejoin must do so within its rebalance timeout. done gets nil,
// ErrClassicNotServed or an error wrapping a *kerr.Error.
func (c *Coordinator) ClassicHeartbeat(req ClassicHeartbeatRequest, done func(error)) {
	c.run(req.GroupID, func(s *shard) { done(c.classicHeartbeat(s, req)) }, func(e *streams.CoordError) { done(e) })
}

func (c *Coordinator) classicHeartbeat(s *shard, req ClassicHeartbeatRequest) error {
	g := s.group
	m, err := classicMember(g, req.GroupID, req.MemberID, req.InstanceID)
	if err != nil {
		return err
	}
	if req.Generation != m.MemberEpoch() {
		return fmt.Errorf("generation %d of member %s is not its member epoch %d: %w", req.Generation, m.ID, m.MemberEpoch(), kerr.IllegalGeneration)
	}
	ch := c.newChange(s)
	defer c.carryOut(s, ch)
	ch.scheduleSession(m.ID)
	if !classicMustRejoin(g, m) && !ch.handBackPull() {
		return nil
	}
	if !ch.hasTimer(classicJoinTimerKey(m.ID)) {
		// Fenced only if it still has a reason to rejoin by then.
		ch.scheduleClassicTimeout(classicJoinTimerKey(m.ID), m, classicJoinTimeoutReason, func(g *streams.Group, m *streams.Member) bool {
			return classicMustRejoin(g, m) || g.Mem.HandBack != nil
		})
	}
	return fmt.Errorf("member %s of group %s must rejoin (member epoch %d, group epoch %d, %s): %w", m.ID, g.ID, m.MemberEpoch(), g.GroupEpoch, m.CurrentAssignment().State, kerr.RebalanceInProgress)
}

// classicMustRejoin: would a JoinGroup of the member change its assignment?
func classicMustRejoin(g *streams.Group, m *streams.Member) bool {
	cur := m.CurrentAssignment()
	switch {
	case cur.MemberEpoch < g.GroupEpoch, cur.State == streams.MemberUnrevokedTasks:
		return true
	case cur.State == streams.MemberUnreleasedTasks:
		owned := cur.Assigned
		next, err := streams.Reconcile(cur, m.ProcessID(), g.AssignmentEpoch, g.Target[m.ID], &owned, g)
		return err == nil && !next.Assigned.Equal(cur.Assigned)
	}
	return false
}

// ClassicLeaveMember is one member of a LeaveGroup (v3+ batches them).
type ClassicLeaveMember struct {
	MemberID   string
	InstanceID string
}

// ClassicLeaveGroup fences the classic members that leave; done gets one
// error per member (nil, or wrapping UNKNOWN_MEMBER_ID / FENCED_INSTANCE_ID),
// or ErrClassicNotServed for the whole request.
func (c *Coordinator) ClassicLeaveGroup(groupID string, members []ClassicLeaveMember, done func([]error, error)) {
	c.run(groupID, func(s *shard) { done(c.classicLeave(s, groupID, members)) }, func(e *streams.CoordError) { done(nil, e) })
}

func (c *Coordinator) classicLeave(s *shard, groupID string, members []ClassicLeaveMember) ([]error, error) {
	g := s.group
	if g == nil || len(g.Members) == 0 {
		return nil, ErrClassicNotServed
	}
	ch := c.newChange(s)
	errs := make([]error, len(members))
	for i, lm := range members {
		id := lm.MemberID
		if id == "" && lm.InstanceID != "" {
			// LeaveGroup v3+ may name a static member by instance only.
			id = g.StaticMembers[lm.InstanceID]
		}
		m, err := classicMember(g, groupID, id, lm.InstanceID)
		if err != nil {
			errs[i] = err
			continue
		}
		ch.logLeft(m, "has left group through explicit `LeaveGroup` request")
		ch.removeClassic(m, bumpMemberLeft)
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
func (c *Coordinator) ValidateClassicOffsetCommit(req OffsetCommitRequest, done func(OffsetCommitResult)) {
	c.run(req.GroupID, func(s *shard) { done(validateClassicOffsetCommit(s.group, req)) }, func(e *streams.CoordError) { done(OffsetCommitResult{Err: e}) })
}

func validateClassicOffsetCommit(g *streams.Group, req OffsetCommitRequest) OffsetCommitResult {
	if g == nil {
		return OffsetCommitResult{Err: kerr.GroupIDNotFound}
	}
	if m := g.Members[req.MemberID]; m == nil || !m.IsClassic() {
		if req.MemberID == "" && req.MemberEpoch < 0 && (len(g.Members) == 0 || req.Transactional) {
			return OffsetCommitResult{Partitions: make([]error, len(req.Partitions))}
		}
		if m != nil {
			return validateOffsetCommit(g, req)
		}
	}
	m, err := classicMember(g, g.ID, req.MemberID, req.InstanceID)
	if err != nil {
		return OffsetCommitResult{Err: err}
	}
	if req.MemberEpoch != m.MemberEpoch() {
		return OffsetCommitResult{Err: fmt.Errorf("generation %d of member %s is not its member epoch %d: %w", req.MemberEpoch, m.ID, m.MemberEpoch(), kerr.IllegalGeneration)}
	}
	return OffsetCommitResult{Partitions: make([]error, len(req.Partitions))}
}
