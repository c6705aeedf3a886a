package coordinator

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// ClassicSyncGroup serves a classic member's SyncGroup from its current
// assignment (Kafka's classicGroupSyncToConsumerGroup).
func (c *Coordinator) ClassicSyncGroup(req streams.ClassicSyncRequest, done func(streams.ClassicSyncResult)) {
	c.run(req.GroupID, func(s *shard) { done(c.classicSync(s, req)) }, func(e *streams.CoordError) { done(streams.ClassicSyncResult{Err: e}) })
}

func (c *Coordinator) classicSync(s *shard, req streams.ClassicSyncRequest) streams.ClassicSyncResult {
	g := s.group
	m, err := streams.ClassicMember(g, req.GroupID, req.MemberID, req.InstanceID)
	if err != nil {
		return streams.ClassicSyncResult{Err: err}
	}
	if req.Generation != m.MemberEpoch() {
		return streams.ClassicSyncResult{Err: fmt.Errorf("generation %d of member %s is not its member epoch %d: %w", req.Generation, m.ID, m.MemberEpoch(), kerr.IllegalGeneration)}
	}
	if (req.ProtocolType != nil && *req.ProtocolType != streams.ClassicProtocolType) || (req.ProtocolName != nil && *req.ProtocolName != streams.ClassicProtocolName) {
		return streams.ClassicSyncResult{Err: fmt.Errorf("member %s syncs with protocol %v/%v, the group runs %s/%s: %w", m.ID, streams.OptString(req.ProtocolType), streams.OptString(req.ProtocolName), streams.ClassicProtocolType, streams.ClassicProtocolName, kerr.InconsistentGroupProtocol)}
	}
	cur := m.CurrentAssignment()
	if g.AssignmentEpoch > cur.MemberEpoch && cur.State != streams.MemberUnrevokedTasks {
		// A newer target exists that the member's next JoinGroup
		// reconciles towards: send it back at once.
		return streams.ClassicSyncResult{Err: fmt.Errorf("group %s moved to assignment epoch %d; member %s at %d must rejoin: %w", g.ID, g.AssignmentEpoch, m.ID, cur.MemberEpoch, kerr.RebalanceInProgress)}
	}
	ch := c.newChange(s)
	defer c.carryOut(s, ch)
	ch.Cancel(streams.ClassicSyncTimerKey(m.ID))
	res, err := streams.ClassicAssignment(g, m, ch.ConfiguredOrNil())
	if err != nil {
		return streams.ClassicSyncResult{Err: fmt.Errorf("sync %s member %s: %v: %w", g.ID, m.ID, err, kerr.UnknownServerError)}
	}
	ch.ScheduleSession(m.ID)
	return res
}
