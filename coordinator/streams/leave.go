package streams

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Leave handles member epochs -1 (leave) and -2 (static member leaving for
// now, to come back with the same instance id).
func (ch *Change) Leave(req *kmsg.StreamsGroupHeartbeatRequest, resp *kmsg.StreamsGroupHeartbeatResponse) error {
	g := ch.Group
	if g == nil {
		return Errorf(kerr.GroupIDNotFound, "Streams group %s not found.", req.Group)
	}
	var m *Member
	if req.InstanceID == nil {
		m = g.Members[req.MemberID]
		if m == nil {
			return Errorf(kerr.UnknownMemberID, "Member %s is not a member of group %s.", req.MemberID, g.ID)
		}
	} else {
		ownerID, ok := g.StaticMembers[*req.InstanceID]
		if !ok {
			return Errorf(kerr.UnknownMemberID, "Instance id %s is unknown.", *req.InstanceID)
		}
		if ownerID != req.MemberID {
			return Errorf(kerr.FencedInstanceID, "Static member %s with instance id %s was fenced by member %s.", req.MemberID, *req.InstanceID, ownerID)
		}
		m = g.Members[ownerID]
	}
	switch {
	case req.MemberEpoch == LeaveGroupMemberEpoch && ch.keepForSuccessor(m):
		ch.logLeft(m, "left the streams group; its tasks wait for its successor (same process id) until the session timeout")
		ch.expectSuccessor(m)
		ch.depart(m)
	case req.MemberEpoch == LeaveGroupMemberEpoch:
		ch.logLeft(m, "left the streams group")
		ch.expectSuccessor(m)
		ch.removeMember(m, BumpMemberLeft)
	default:
		ch.logLeft(m, "temporarily left the streams group")
		ch.releaseStatic(m)
	}
	// Kafka answers a leave with the member id and epoch only.
	resp.MemberID = req.MemberID
	resp.MemberEpoch = req.MemberEpoch
	resp.Status = []kmsg.StreamsGroupHeartbeatResponseStatus{}
	return nil
}
