package streams

// releaseStatic marks a static member as gone for now (epoch -2): it keeps
// its tasks until it returns under the same instance id (the heartbeat path
// then replaces it, heartbeat_member.go) or its session expires; what it was
// revoking is released now. A classic member's sync and join timers stop
// too (a streams member has none).
func (ch *Change) releaseStatic(m *Member) {
	cur := *m.CurrentAssignment()
	cur.PreviousMemberEpoch = cur.MemberEpoch
	cur.MemberEpoch = leaveGroupStaticMemberEpoch
	cur.PendingRevocation = TaskSets{}
	cur.ActiveEpochs = restrictEpochs(cur.ActiveEpochs, cur.Assigned.Active, true, 0)
	ch.emit(newCurrentAssignmentRecord(ch.Group.ID, m.ID, &cur))
	ch.cancel(RebalanceTimerKey(m.ID))
	ch.cancel(classicSyncTimerKey(m.ID))
	ch.cancel(classicJoinTimerKey(m.ID))
}
