package streams

// Removing a member: fenced by the coordinator (a timer, a hand-back) or
// gone on its own (a leave), and the group epoch bump that follows.

// fenceMember removes a member the coordinator fences (session or
// rebalance timeout, ...); reason completes Kafka's "fenced from the group
// because ..." log line.
func (ch *Change) fenceMember(m *Member, reason string) {
	ch.logFenced(m, reason)
	ch.removeMember(m, BumpMemberFenced)
}

// removeMember removes a member that left or is fenced: tombstones for its
// assignment and metadata, and a group epoch bump (why is its reason). The
// new target is computed by the next heartbeat.
func (ch *Change) removeMember(m *Member, why string) {
	g := ch.Group
	ch.tombstoneMember(m.ID)
	epoch := ch.bumpGroupEpoch(m.ID, GroupMetadataValue{
		MetadataHash:           g.MetadataHash,
		ValidatedTopologyEpoch: g.ValidatedTopologyEpoch,
		LastAssignmentConfigs:  g.LastAssignmentConfigs,
	}, []string{why})
	if len(g.Members) == 0 {
		// An empty group has nothing to assign: its assignment is current,
		// and the next join must not wait for the assignment interval.
		ch.emit(newTargetAssignmentEpochRecord(g.ID, epoch, 0))
		g.Mem.shutdownRequester = ""
		ch.cancel(initialDelayTimerKey)
		ch.cancel(assignmentIntervalTimerKey)
	}
	ch.cancel(sessionTimerKey(m.ID))
	ch.cancel(RebalanceTimerKey(m.ID))
	ch.cancel(disconnectExpiryTimerKey(m.ID))
}

// bumpGroupEpoch writes the group's next epoch with v's other fields and
// logs it with why (the bump* reasons); it returns the new epoch.
func (ch *Change) bumpGroupEpoch(memberID string, v GroupMetadataValue, why []string) int32 {
	previous := ch.Group.GroupEpoch
	v.Epoch = previous + 1
	ch.emit(newGroupEpochRecord(ch.Group.ID, &v))
	ch.logEpochBump(memberID, previous, &v, why)
	return v.Epoch
}

// fenceClassic fences a classic member (reason as fenceMember's).
func (ch *Change) fenceClassic(m *Member, reason string) {
	ch.logFenced(m, reason)
	ch.removeClassic(m, BumpMemberFenced)
}

// removeClassic removes a classic member and its classic timers.
func (ch *Change) removeClassic(m *Member, why string) {
	ch.removeMember(m, why)
	ch.cancel(classicSyncTimerKey(m.ID))
	ch.cancel(classicJoinTimerKey(m.ID))
}

// tombstoneMember deletes a member's records: current assignment, target,
// metadata (Kafka's order).
func (ch *Change) tombstoneMember(memberID string) {
	ch.emit(tombstone(RecordCurrentMemberAssignment, ch.Group.ID, memberID))
	ch.emit(tombstone(RecordTargetAssignmentMember, ch.Group.ID, memberID))
	ch.emit(tombstone(RecordMemberMetadata, ch.Group.ID, memberID))
}
