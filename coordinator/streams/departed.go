package streams

// A departed member's tasks kept for its successor, beyond Kafka (issue
// #28, docs/fast-roll.md §13). In a step of a rolling migration a 4.4
// streams instance leaves on close (epoch -1) and its successor, classic or
// streams, starts on its state directory a JVM start later with the same
// process id (KAFKA-10716). Kafka gives the leaver's tasks to the others at
// once, and the successor's target takes them back a round later: each
// task moves twice, and the successor waits for the others to revoke (a
// classic member learns it at its next Heartbeat, up to its client's 3 s).
// In a migrating group (successor_watch.go) a dynamic streams member that
// leaves is instead kept, departed: epoch -2 with its tasks, as Kafka keeps
// a static member that leaves for now. Its tasks are nobody else's until
//   - a member of its process joins (either protocol): it replaces the
//     departed members (replace.go) and runs their tasks at once;
//   - a member of a process new to the group joins (a stateless app's
//     successor, a scale-out): the departed members are removed, and their
//     tasks assigned as Kafka would have at the leave;
//   - the group's session timeout passes (a scale-in): removed, as Kafka
//     removes a static member whose session expires; sooner, once its
//     connection closed, by the disconnect expiry when it is on
//     (disconnect_expiry.go: K heartbeat intervals, 15 s by default).
//
// A departed member counts as no streams member for a hand-back (it will
// not come back as one): when the last streams member leaves, the barrier
// goes up as before. But the barrier is not Ready while a departed member
// waits, and its successor's JoinGroup, arriving at the barrier, removes it
// and is held with the others: all go to the broker's group together and
// the first generation there has every instance, where before the
// successor, a JVM start late, came a generation or two after the others
// (each a classic heartbeat interval, then a follow-up rebalance). Without
// a successor the barrier waits for the session timeout, as a classic
// rebalance waits for a member that does not rejoin.
//
// Exactly-once: the leaver committed and closed its tasks before its leave;
// they have no active owner until the one change that gives them to the
// replacing member or removes the departed one.

// Why a departed member is removed (the group epoch bump's reason).
const (
	departedExpiredReason  = "the departed member's successor did not join within the session timeout"
	departedReleasedReason = "a member of a new process joined while a departed member waited for its successor"
)

// keepForSuccessor: is m, leaving with epoch -1, kept (departed) rather
// than removed? A dynamic streams member with a process id, in a migrating
// group.
func (ch *Change) keepForSuccessor(m *Member) bool {
	pid := m.ProcessID()
	return !m.IsClassic() && m.InstanceID() == "" && pid != "" && pid != nilProcessID && migrating(ch.Group)
}

// depart keeps m in the group with its tasks, at epoch -2, until its
// successor comes or the group's session timeout passes. When m was the
// last streams member the group epoch moves, as at a leave: the classic
// members' next Heartbeats pull them into a rebalance, which the hand-back
// barrier going up after those Heartbeats (migration.HandBack) makes the
// barrier's; without the bump each would wait one more heartbeat interval.
func (ch *Change) depart(m *Member) {
	ch.releaseStatic(m)
	if !HasStreamsMember(ch.Group) {
		g := ch.Group
		ch.bumpGroupEpoch(m.ID, GroupMetadataValue{
			MetadataHash:           g.MetadataHash,
			ValidatedTopologyEpoch: g.ValidatedTopologyEpoch,
			LastAssignmentConfigs:  g.LastAssignmentConfigs,
		}, []string{BumpMemberLeft})
	}
	ch.cancel(disconnectExpiryTimerKey(m.ID))
	id := m.ID
	ch.noteSessionExpiry(id, ch.Config.SessionTimeout)
	ch.schedule(sessionTimerKey(id), ch.Config.SessionTimeout, func(f *Change) {
		if m := f.Group.Members[id]; m != nil && m.Departed() {
			f.logDeparted(m, departedExpiredReason)
			f.removeMember(m, departedExpiredReason)
		}
	})
}

// releaseDeparted removes every departed member when a member of a process
// new to the group joins: it is not their successor (an app without state
// stores gets a new process id at each start), and their tasks must not wait
// for the session timeout.
func (ch *Change) releaseDeparted(joining string, pid *string) {
	g := ch.Group
	var gone []*Member
	for _, m := range g.Members {
		if m.ID == joining {
			continue
		}
		if pid != nil && m.ProcessID() == *pid {
			return // its process is in the group: not new
		}
		if m.Departed() {
			gone = append(gone, m)
		}
	}
	for _, m := range gone {
		ch.logDeparted(m, departedReleasedReason)
		ch.removeMember(m, departedReleasedReason)
	}
}

func (ch *Change) logDeparted(m *Member, why string) {
	ch.logInfo(m.ID).Str("process", m.ProcessID()).
		Msgf("[GroupId %s][MemberId %s] Removed departed member %s of process %s: %s.", ch.GroupID, m.ID, m.ID, m.ProcessID(), why)
}

// successorAtBarrier removes the departed members a JoinGroup of a new
// member of process pid ends at a hand-back barrier, where the join is held
// to go to the broker's group with the others and nothing is assigned here
// any more: those of its process (it is their successor), or all of them if
// its process is new to the group (releaseDeparted). It reports whether it
// removed any.
func (ch *Change) successorAtBarrier(pid string) bool {
	before := len(ch.Group.Members)
	for _, m := range ch.Group.Members {
		if m.Departed() && m.ProcessID() == pid && pid != "" && pid != nilProcessID {
			ch.logDeparted(m, "its successor's JoinGroup is held for the hand-back")
			ch.removeMember(m, BumpMemberLeft)
		}
	}
	if len(ch.Group.Members) == before {
		ch.releaseDeparted("", &pid)
	}
	return len(ch.Group.Members) != before
}
