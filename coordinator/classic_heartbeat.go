package coordinator

import (
	"fmt"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// ClassicHeartbeat keeps a classic member's session and tells it to rejoin
// (REBALANCE_IN_PROGRESS) when a JoinGroup would change its assignment:
// the group epoch moved past it, it has tasks to revoke, or tasks it waits
// for were released (Kafka's classicGroupHeartbeatToConsumerGroup). A member
// told to rejoin must do so within its rebalance timeout. done gets nil,
// ErrClassicNotServed or an error wrapping a *kerr.Error.
func (c *Coordinator) ClassicHeartbeat(req streams.ClassicHeartbeatRequest, done func(error)) {
	runChange(c, req.GroupID, "heartbeat", func(ch *streams.Change) error { return ch.ClassicHeartbeat(req) },
		func(err error) error { return err }, done)
}

// ClassicLeaveGroup fences the classic members that leave; done gets one
// error per member (nil, or wrapping UNKNOWN_MEMBER_ID / FENCED_INSTANCE_ID),
// or ErrClassicNotServed for the whole request.
func (c *Coordinator) ClassicLeaveGroup(groupID string, members []streams.ClassicLeaveMember, done func([]error, error)) {
	c.run(groupID, func(s *groupQueue) { done(c.classicLeave(s, groupID, members)) }, func(e *streams.CoordError) { done(nil, e) })
}

func (c *Coordinator) classicLeave(s *groupQueue, groupID string, members []streams.ClassicLeaveMember) ([]error, error) {
	ch := c.newChange(s)
	errs, err := ch.ClassicLeaveGroup(groupID, members)
	if err := c.finish(s, ch); err != nil {
		return nil, fmt.Errorf("leave %s: %v: %w", groupID, err, appendFailed(err))
	}
	return errs, err
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
	c.run(req.GroupID, func(s *groupQueue) { done(streams.ValidateClassicOffsetCommit(s.group, req)) }, func(e *streams.CoordError) { done(streams.OffsetCommitResult{Err: e}) })
}
