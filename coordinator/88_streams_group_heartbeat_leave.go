package coordinator

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fenceMember removes a member the coordinator fences (session or
// rebalance timeout, ...); reason completes Kafka's "fenced from the group
// because ..." log line.
func (ch *change) fenceMember(m *Member, reason string) {
	ch.logFenced(m, reason)
	ch.removeMember(m, bumpMemberFenced)
}

// removeMember removes a member that left or is fenced: tombstones for its
// assignment and metadata, and a group epoch bump (why is its reason). The
// new target is computed by the next heartbeat.
func (ch *change) removeMember(m *Member, why string) {
	g := ch.g
	ch.emit(newCurrentAssignmentTombstone(g.ID, m.ID))
	ch.emit(newTargetAssignmentTombstone(g.ID, m.ID))
	ch.emit(newMemberTombstone(g.ID, m.ID))
	epoch := ch.bumpGroupEpoch(m.ID, GroupMetadataValue{
		MetadataHash:           g.MetadataHash,
		ValidatedTopologyEpoch: g.ValidatedTopologyEpoch,
		LastAssignmentConfigs:  g.LastAssignmentConfigs,
	}, []string{why})
	if len(g.Members) == 0 {
		// An empty group has nothing to assign: its assignment is current,
		// and the next join must not wait for the assignment interval.
		ch.emit(newTargetAssignmentEpochRecord(g.ID, epoch, 0))
		g.mem.shutdownRequester = ""
		ch.cancel(initialDelayTimerKey)
		ch.cancel(assignmentIntervalTimerKey)
	}
	ch.cancel(sessionTimerKey(m.ID))
	ch.cancel(rebalanceTimerKey(m.ID))
}

// leave handles member epochs -1 (leave) and -2 (static member leaving for
// now, to come back with the same instance id).
func (ch *change) leave(req *kmsg.StreamsGroupHeartbeatRequest, resp *kmsg.StreamsGroupHeartbeatResponse) error {
	g := ch.g
	if g == nil {
		return errorf(kerr.GroupIDNotFound, "Streams group %s not found.", req.Group)
	}
	var m *Member
	if req.InstanceID == nil {
		m = g.Members[req.MemberID]
		if m == nil {
			return errorf(kerr.UnknownMemberID, "Member %s is not a member of group %s.", req.MemberID, g.ID)
		}
	} else {
		ownerID, ok := g.staticMembers[*req.InstanceID]
		if !ok {
			return errorf(kerr.UnknownMemberID, "Instance id %s is unknown.", *req.InstanceID)
		}
		if ownerID != req.MemberID {
			return errorf(kerr.FencedInstanceID, "Static member %s with instance id %s was fenced by member %s.", req.MemberID, *req.InstanceID, ownerID)
		}
		m = g.Members[ownerID]
	}
	if req.MemberEpoch == leaveGroupMemberEpoch {
		ch.logLeft(m, "left the streams group")
		ch.removeMember(m, bumpMemberLeft)
	} else {
		ch.logLeft(m, "temporarily left the streams group")
		// Keep the member and its tasks until it returns or its session
		// expires; what it was revoking is released now.
		cur := *m.current()
		cur.PreviousMemberEpoch = cur.MemberEpoch
		cur.MemberEpoch = leaveGroupStaticMemberEpoch
		cur.PendingRevocation = TaskSets{}
		cur.ActiveEpochs = restrictEpochs(cur.ActiveEpochs, cur.Assigned.Active, true, 0)
		ch.emit(newCurrentAssignmentRecord(g.ID, m.ID, &cur))
		ch.cancel(rebalanceTimerKey(m.ID))
	}
	// Kafka answers a leave with the member id and epoch only.
	resp.MemberID = req.MemberID
	resp.MemberEpoch = req.MemberEpoch
	resp.Status = []kmsg.StreamsGroupHeartbeatResponseStatus{}
	return nil
}

// bumpGroupEpoch writes the group's next epoch with v's other fields and
// logs it with why (the bump* reasons); it returns the new epoch.
func (ch *change) bumpGroupEpoch(memberID string, v GroupMetadataValue, why []string) int32 {
	previous := ch.g.GroupEpoch
	v.Epoch = previous + 1
	ch.emit(newGroupEpochRecord(ch.g.ID, &v))
	ch.logEpochBump(memberID, previous, &v, why)
	return v.Epoch
}
