package coordinator

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// ClassicJoinGroup serves a classic member's JoinGroup inside a streams group,
// as Kafka's classicGroupJoinToConsumerGroup does for consumer groups: the
// join is a streams heartbeat of the member (owned tasks from the owned
// partitions and offset sums, metadata from the SubscriptionInfo), answered
// at once with the member epoch as the generation; the assignment follows in
// SyncGroup.
func (c *Coordinator) ClassicJoinGroup(req streams.ClassicJoinRequest, done func(streams.ClassicJoinResult)) {
	c.run(req.GroupID, func(s *shard) { done(c.classicJoin(s, req)) }, func(e *streams.CoordError) { done(streams.ClassicJoinResult{Err: e}) })
}

func (c *Coordinator) classicJoin(s *shard, req streams.ClassicJoinRequest) streams.ClassicJoinResult {
	g := s.group
	if g == nil || g.Topology == nil || len(g.Members) == 0 {
		return streams.ClassicJoinResult{Err: streams.ErrClassicNotServed}
	}
	if req.Reject != nil {
		return streams.ClassicJoinResult{Err: req.Reject, MemberID: req.MemberID, Generation: -1}
	}
	if req.Info.Version >= 1 && len(req.Info.NamedTopologyTasks()) > 0 {
		return streams.ClassicJoinResult{Err: fmt.Errorf("member %s reports named-topology tasks, which streams groups do not support: %w", req.MemberID, kerr.InconsistentGroupProtocol)}
	}
	ch := c.newChange(s)
	defer c.carryOut(s, ch)
	ch.Classic = &streams.ClassicMemberMetadata{
		SessionTimeoutMs:        req.SessionTimeoutMs,
		ConsumerProtocolVersion: req.Subscription.Version,
		SubscriptionVersion:     req.Info.Version,
		LatestSupportedVersion:  req.Info.LatestSupportedVersion,
	}

	// Who the member is: a known member rejoins at its epoch; a static
	// member with a new member id replaces the instance's old member, as
	// a classic group does (the old one is fenced by FENCED_INSTANCE_ID).
	m := g.Members[req.MemberID]
	if g.Mem.HandBack != nil && (m == nil || m.IsClassic()) {
		if ch.HandBackJoin(m) {
			return streams.ClassicJoinResult{Err: streams.ErrHandBackHeld}
		}
		if m == nil && !g.Mem.HandBack.Aborted && !streams.HasStreamsMember(g) {
			// A new member (or a static member's new incarnation) is
			// held too, outside the barrier: it goes upstream with the
			// members' JoinGroups, without the member id given here,
			// which the broker would answer UNKNOWN_MEMBER_ID.
			return streams.ClassicJoinResult{Err: streams.ErrHandBackHeld}
		}
	}
	if req.InstanceID != "" {
		if owner, ok := g.StaticMembers[req.InstanceID]; ok && owner != req.MemberID {
			old := g.Members[owner]
			if !old.IsClassic() && old.MemberEpoch() != streams.LeaveGroupStaticMemberEpoch {
				return streams.ClassicJoinResult{Err: fmt.Errorf("instance id %s is owned by streams member %s: %w", req.InstanceID, owner, kerr.UnreleasedInstanceID)}
			}
			if old.MemberEpoch() != streams.LeaveGroupStaticMemberEpoch {
				ch.ReleaseStatic(old)
			}
			m = nil
		}
	}
	if m == nil && req.InstanceID == "" && !req.NewMember {
		return streams.ClassicJoinResult{Err: fmt.Errorf("member %s is not a member of group %s: %w", req.MemberID, g.ID, kerr.UnknownMemberID)}
	}
	if m != nil && !m.IsClassic() {
		return streams.ClassicJoinResult{Err: fmt.Errorf("member %s of group %s uses the streams protocol: %w", m.ID, g.ID, kerr.InconsistentGroupProtocol)}
	}
	epoch := int32(0)
	if m != nil && m.MemberEpoch() > 0 {
		epoch = m.MemberEpoch()
	}

	// The owned partitions are read against the configured topology, made
	// current first: a member's ownership must never be missed.
	configured, _, err := ch.ConfigureTopology(g.Topology)
	if err != nil {
		c.rollback(s, ch)
		return streams.ClassicJoinResult{Err: fmt.Errorf("join %s: %v: %w", g.ID, err, kerr.UnknownServerError)}
	}
	hb := streams.ClassicJoinHeartbeat(req, epoch)
	cur := streams.EmptyCurrent
	if m != nil {
		cur = m.CurrentAssignment()
	}
	hb.ActiveTasks, hb.StandbyTasks, hb.WarmupTasks = streams.ClassicOwnedTasks(req, configured, cur)
	resp := kmsg.NewPtrStreamsGroupHeartbeatResponse()
	if err := ch.Heartbeat(hb, req.Client, resp); err != nil {
		c.rollback(s, ch)
		var ce *streams.CoordError
		if errors.As(err, &ce) {
			return streams.ClassicJoinResult{Err: fmt.Errorf("%s: %w", ce.Msg, streams.ClassicCode(ce.Code))}
		}
		return streams.ClassicJoinResult{Err: fmt.Errorf("join %s: %v: %w", g.ID, err, kerr.UnknownServerError)}
	}
	m = g.Members[resp.MemberID]
	ch.Cancel(streams.ClassicJoinTimerKey(m.ID))
	ch.ScheduleClassicTimeout(streams.ClassicSyncTimerKey(m.ID), m, streams.ClassicSyncTimeoutReason, nil)
	if err := c.commit(s, ch); err != nil {
		return streams.ClassicJoinResult{Err: fmt.Errorf("join %s: %v: %w", g.ID, err, kerr.CoordinatorNotAvailable)}
	}
	return streams.ClassicJoinResult{MemberID: m.ID, Generation: resp.MemberEpoch}
}
