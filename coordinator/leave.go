package coordinator

import (
	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// leave handles member epochs -1 (leave) and -2 (static member leaving for
// now, to come back with the same instance id).
func (ch *change) leave(req *kmsg.StreamsGroupHeartbeatRequest, resp *kmsg.StreamsGroupHeartbeatResponse) error {
	g := ch.g
	if g == nil {
		return streams.Errorf(kerr.GroupIDNotFound, "Streams group %s not found.", req.Group)
	}
	var m *streams.Member
	if req.InstanceID == nil {
		m = g.Members[req.MemberID]
		if m == nil {
			return streams.Errorf(kerr.UnknownMemberID, "Member %s is not a member of group %s.", req.MemberID, g.ID)
		}
	} else {
		ownerID, ok := g.StaticMembers[*req.InstanceID]
		if !ok {
			return streams.Errorf(kerr.UnknownMemberID, "Instance id %s is unknown.", *req.InstanceID)
		}
		if ownerID != req.MemberID {
			return streams.Errorf(kerr.FencedInstanceID, "Static member %s with instance id %s was fenced by member %s.", req.MemberID, *req.InstanceID, ownerID)
		}
		m = g.Members[ownerID]
	}
	if req.MemberEpoch == streams.LeaveGroupMemberEpoch {
		ch.logLeft(m, "left the streams group")
		ch.removeMember(m, bumpMemberLeft)
	} else {
		ch.logLeft(m, "temporarily left the streams group")
		ch.releaseStatic(m)
	}
	// Kafka answers a leave with the member id and epoch only.
	resp.MemberID = req.MemberID
	resp.MemberEpoch = req.MemberEpoch
	resp.Status = []kmsg.StreamsGroupHeartbeatResponseStatus{}
	return nil
}

// releaseStatic marks a static member as gone for now (epoch -2): it keeps
// its tasks until it returns under the same instance id (the heartbeat path
// then replaces it, heartbeat_member.go) or its session expires; what it was
// revoking is released now. A classic member's sync and join timers stop
// too (a streams member has none).
func (ch *change) releaseStatic(m *streams.Member) {
	cur := *m.CurrentAssignment()
	cur.PreviousMemberEpoch = cur.MemberEpoch
	cur.MemberEpoch = streams.LeaveGroupStaticMemberEpoch
	cur.PendingRevocation = streams.TaskSets{}
	cur.ActiveEpochs = streams.RestrictEpochs(cur.ActiveEpochs, cur.Assigned.Active, true, 0)
	ch.emit(streams.NewCurrentAssignmentRecord(ch.g.ID, m.ID, &cur))
	ch.cancel(rebalanceTimerKey(m.ID))
	ch.cancel(classicSyncTimerKey(m.ID))
	ch.cancel(classicJoinTimerKey(m.ID))
}
