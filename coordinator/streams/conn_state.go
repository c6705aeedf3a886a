package streams

// What streamshift knows of a member's connection (member_conn.go keeps
// it): whether the connection of its latest request is known, and closed.

// connGone reports whether the connection of the member's latest request is
// known and closed.
func (g *Group) connGone(memberID string) bool {
	return connClosedNow(g.Mem.conns[memberID].closed)
}

// connClosedNow reports whether closed (a connection's close channel, nil
// if unknown) is closed.
func connClosedNow(closed <-chan struct{}) bool {
	if closed == nil {
		return false
	}
	select {
	case <-closed:
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

// FieldConnection is the member-fenced event's field saying what the
// member's connection was at the fencing: ConnOpen, ConnClosed or
// ConnUnknown (after a failover or a load, or a client of another
// instance).
const (
	FieldConnection = "connection"
	ConnOpen        = "open"
	ConnClosed      = "closed"
	ConnUnknown     = "unknown"
)

// connState is the FieldConnection value of a member.
func (g *Group) connState(memberID string) string {
	switch {
	case g == nil || !g.connKnown(memberID):
		return ConnUnknown
	case g.connGone(memberID):
		return ConnClosed
	default:
		return ConnOpen
	}
}
