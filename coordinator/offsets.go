package coordinator

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// ValidateOffsetCommit checks a commit against the group's state on the
// group's queue and calls done once. A group the coordinator does not hold
// gives GROUP_ID_NOT_FOUND: the caller forwards such commits.
func (c *Coordinator) ValidateOffsetCommit(req streams.OffsetCommitRequest, done func(streams.OffsetCommitResult)) {
	c.run(req.GroupID, func(s *groupQueue) { done(streams.ValidateOffsetCommit(s.group, req)) }, func(e *streams.CoordError) { done(streams.OffsetCommitResult{Err: e}) })
}

// ValidateOffsetFetch checks an OffsetFetch v9+ of a streams group member
// (Kafka's validateOffsetFetch): no member id and a negative epoch pass (the
// admin path), else the member must exist at exactly that epoch. done gets
// nil or the error; GROUP_ID_NOT_FOUND for a group the coordinator does not
// hold.
func (c *Coordinator) ValidateOffsetFetch(groupID, memberID string, memberEpoch int32, done func(error)) {
	c.run(groupID, func(s *groupQueue) {
		g := s.group
		switch {
		case g == nil:
			done(kerr.GroupIDNotFound)
		case memberID == "" && memberEpoch < 0:
			done(nil)
		case g.Members[memberID] == nil:
			done(fmt.Errorf("member %s is not a member of group %s: %w", memberID, g.ID, kerr.UnknownMemberID))
		case g.Members[memberID].MemberEpoch() != memberEpoch:
			done(fmt.Errorf("the received member epoch %d does not match the expected member epoch %d: %w", memberEpoch, g.Members[memberID].MemberEpoch(), kerr.StaleMemberEpoch))
		default:
			done(nil)
		}
	}, func(e *streams.CoordError) { done(e) })
}
