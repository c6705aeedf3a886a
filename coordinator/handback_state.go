package coordinator

import "sort"

// What a group's hand-back barrier reports (HandBack, and the executor's
// barrierEnded), derived from the group and its in-memory handBack.

// handBackState is the barrier's state; a streams-protocol member in the
// group aborts it for good.
func handBackState(g *Group) HandBackState {
	if g == nil || g.mem.handBack == nil {
		return HandBackState{}
	}
	hb := g.mem.handBack
	if hasStreamsMember(g) {
		hb.aborted = true
	}
	st := HandBackState{Running: true, Aborted: hb.aborted}
	for id := range hb.held {
		if g.Members[id] != nil {
			st.Held = append(st.Held, id)
		}
	}
	sort.Strings(st.Held)
	st.Ready = !hb.aborted && len(st.Held) == len(g.Members) && len(g.Members) > 0
	return st
}

// hasStreamsMember reports whether a member of the group speaks the streams
// protocol: a hand-back needs every member classic.
func hasStreamsMember(g *Group) bool {
	for _, m := range g.Members {
		if !m.IsClassic() {
			return true
		}
	}
	return false
}
