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
		if g.Members[id] != nil {
			st.Held = append(st.Held, id)
		}
	}
	sort.Strings(st.Held)
	st.Ready = !hb.Aborted && len(st.Held) == len(g.Members) && len(g.Members) > 0
	return st
}

// HasStreamsMember reports whether a member of the group speaks the streams
// protocol: a hand-back needs every member classic.
func HasStreamsMember(g *Group) bool {
	for _, m := range g.Members {
		if !m.IsClassic() {
			return true
		}
	}
	return false
}
