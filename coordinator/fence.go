package coordinator

import "github.com/streamshift/streamshift/coordinator/streams"

// Removing a member: fenced by the coordinator (a timer, a hand-back) or
// gone on its own (a leave), and the group epoch bump that follows.

// fenceMember removes a member the coordinator fences (session or
// rebalance timeout, ...); reason completes Kafka's "fenced from the group
// because ..." log line.
func (ch *change) fenceMember(m *streams.Member, reason string) {
	ch.logFenced(m, reason)
	ch.removeMember(m, bumpMemberFenced)
}

// removeMember removes a member that left or is fenced: tombstones for its
// assignment and metadata, and a group epoch bump (why is its reason). The
// new target is computed by the next heartbeat.
func (ch *change) removeMember(m *streams.Member, why string) {
	g := ch.g
	ch.tombstoneMember(m.ID)
	epoch := ch.bumpGroupEpoch(m.ID, streams.GroupMetadataValue{
		MetadataHash:           g.MetadataHash,
		ValidatedTopologyEpoch: g.ValidatedTopologyEpoch,
		LastAssignmentConfigs:  g.LastAssignmentConfigs,
	}, []string{why})
	if len(g.Members) == 0 {
		// An empty group has nothing to assign: its assignment is current,
		// and the next join must not wait for the assignment interval.
		ch.emit(streams.NewTargetAssignmentEpochRecord(g.ID, epoch, 0))
		g.Mem.ShutdownRequester = ""
		ch.cancel(initialDelayTimerKey)
		ch.cancel(assignmentIntervalTimerKey)
	}
	ch.cancel(sessionTimerKey(m.ID))
	ch.cancel(rebalanceTimerKey(m.ID))
}

// bumpGroupEpoch writes the group's next epoch with v's other fields and
// logs it with why (the bump* reasons); it returns the new epoch.
func (ch *change) bumpGroupEpoch(memberID string, v streams.GroupMetadataValue, why []string) int32 {
	previous := ch.g.GroupEpoch
	v.Epoch = previous + 1
	ch.emit(streams.NewGroupEpochRecord(ch.g.ID, &v))
	ch.logEpochBump(memberID, previous, &v, why)
	return v.Epoch
}

// fenceClassic fences a classic member (reason as fenceMember's).
func (ch *change) fenceClassic(m *streams.Member, reason string) {
	ch.logFenced(m, reason)
	ch.removeClassic(m, bumpMemberFenced)
}

// removeClassic removes a classic member and its classic timers.
func (ch *change) removeClassic(m *streams.Member, why string) {
	ch.removeMember(m, why)
	ch.cancel(classicSyncTimerKey(m.ID))
	ch.cancel(classicJoinTimerKey(m.ID))
}

// tombstoneMember deletes a member's records: current assignment, target,
// metadata (Kafka's order).
func (ch *change) tombstoneMember(memberID string) {
	ch.emit(streams.NewCurrentAssignmentTombstone(ch.g.ID, memberID))
	ch.emit(streams.NewTargetAssignmentTombstone(ch.g.ID, memberID))
	ch.emit(streams.NewMemberTombstone(ch.g.ID, memberID))
}
