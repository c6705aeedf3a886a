package streams

import "sort"

// What a group's hand-back barrier reports (HandBack, and the executor's
// barrierEnded), derived from the group and its in-memory handBack.

// handBackState is the barrier's state; a streams-protocol member in the
// group aborts it for good.
func HandBackStateOf(g *Group) HandBackState {
	if g == nil || g.Mem.HandBack == nil {
		return HandBackState{}
	}
	hb := g.Mem.HandBack
	if HasStreamsMember(g) {
		hb.Aborted = true
	}
	st := HandBackState{Running: true, Aborted: hb.Aborted}
	for id := range hb.Held {
		// A held member owns nothing (handBackJoin); counting only those
		// keeps Ready from going up while a member could still run a task.
		if m := g.Members[id]; m != nil && handBackOwnsNothing(m) {
			st.Held = append(st.Held, id)
		}
	}
	sort.Strings(st.Held)
	st.Ready = !hb.Aborted && len(st.Held) == len(g.Members) && len(g.Members) > 0
	return st
}

// HasStreamsMember reports whether a member of the group speaks the streams
// protocol: a hand-back needs every member classic. A departed member does
// not count (it left; departed.go), though a barrier waits for it (Ready).
func HasStreamsMember(g *Group) bool {
	for _, m := range g.Members {
		if !m.IsClassic() && !m.Departed() {
			return true
		}
	}
	return false
}

// handBackOwnsNothing: the member has revoked everything the served group
// gave it, so its JoinGroup may go upstream. A member entering the broker's
// group still running tasks (cooperative Kafka Streams keeps them through a
// rejoin) with their open transaction would commit them as a member of a
// generation that gave the same tasks to another member too: duplicates
// (docs/fast-roll.md §11). Revoking here first commits and closes every task
// cleanly, and the upstream group starts them from the committed offsets.
func handBackOwnsNothing(m *Member) bool {
	cur := m.CurrentAssignment()
	return cur.Assigned.IsEmpty() && cur.PendingRevocation.IsEmpty()
}

// handBackBarrierUp: a barrier is up and not aborted; the group's target
// is empty (computeTargetAssignment).
func handBackBarrierUp(g *Group) bool {
	hb := g.Mem.HandBack
	return hb != nil && !hb.Aborted && !HasStreamsMember(g)
}
