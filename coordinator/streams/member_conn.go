package streams

// The connection of a member's latest group request, kept in memory (issue
// #28, docs/fast-roll.md §2 rule 4): the replacement by identity fences a
// member only once that connection is closed, i.e. once its process is gone
// from the wire. A Java client sends every group request of a member
// (heartbeats, joins, syncs, commits) on its one coordinator connection, so
// the latest request's connection is the member's. What is unknown (after a
// failover, a load, a request without a connection) counts as open: the
// rule then fails safe, and the session timeout applies as before.

// noteConn records client as the connection of memberID's latest request.
func (ch *Change) noteConn(memberID string, client ClientInfo) {
	g := ch.Group
	if g == nil || client.Closed == nil {
		return
	}
	if g.Mem.conns == nil {
		g.Mem.conns = map[string]memberConn{}
	}
	g.Mem.conns[memberID] = memberConn{id: client.ConnID, closed: client.Closed}
}

// connGone reports whether the connection of the member's latest request is
// known and closed.
func (g *Group) connGone(memberID string) bool {
	c, ok := g.Mem.conns[memberID]
	if !ok || c.closed == nil {
		return false
	}
	select {
	case <-c.closed:
		return true
	default:
		return false
	}
}

// connKnown reports whether the connection of the member's latest request is
// known.
func (g *Group) connKnown(memberID string) bool {
	return g.Mem.conns[memberID].closed != nil
}

// connIDOf is the connection id of the member's latest request, 0 if unknown
// (for log lines).
func (g *Group) connIDOf(memberID string) uint64 {
	return g.Mem.conns[memberID].id
}
