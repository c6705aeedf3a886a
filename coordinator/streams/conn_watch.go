package streams

// The runtime watches a client connection for a group from the first
// request of a member on it until its close (ConnClosed) or until no
// member's latest request came on it any more (UnwatchUnused).
//
// Why the second end: the close channel of a client of another instance
// (behind one address) is a signal only that instance's conn-closed call
// closes (proxy/peer_conn_closed.go). When that instance restarts its
// signals are forgotten, left open on purpose (a dead origin is not a
// closed connection: the member's session decides), and a lost link never
// closes them either, so a watch until the close would live as long as the
// coordinator, one per such connection. A connection no member references
// cannot fence anyone (ConnClosed and replaceOnClose act only on the
// members whose latest request came on it), so ending its watch changes no
// outcome, and bounds the watches by the members: a member on a forgotten
// connection keeps its watch (and stays open, its session deciding) until
// it sends a request on another connection or leaves the group.

// watch asks the runtime to report the close of a connection (nil:
// unknown) to the group, once per connection: for the expiry, when it is
// on, and for a replacement whose successor joined first (replaceOnClose).
func (ch *Change) watch(closed <-chan struct{}) {
	g := ch.Group
	if closed == nil || g.Mem.watched[closed] {
		return
	}
	if g.Mem.watched == nil {
		g.Mem.watched = map[<-chan struct{}]bool{}
	}
	g.Mem.watched[closed] = true
	ch.Watch = append(ch.Watch, closed)
}

// Watching reports whether the group waits for the runtime to report the
// close of a connection it watches (ConnClosed not run yet).
func (g *Group) Watching(closed <-chan struct{}) bool { return g.Mem.watched[closed] }

// UnwatchUnused ends the group's watch of every connection no member's
// latest request came on any more, and returns them: the runtime stops
// watching them. It scans only after a member left a connection (moved to
// another, or left the group) since the last call.
func (g *Group) UnwatchUnused() []<-chan struct{} {
	if g == nil || !g.Mem.connLeft {
		return nil
	}
	g.Mem.connLeft = false
	if len(g.Mem.watched) == 0 {
		return nil
	}
	used := make(map[<-chan struct{}]bool, len(g.Mem.conns))
	for _, c := range g.Mem.conns {
		if c.closed != nil {
			used[c.closed] = true
		}
	}
	var dropped []<-chan struct{}
	for closed := range g.Mem.watched {
		if !used[closed] {
			delete(g.Mem.watched, closed)
			dropped = append(dropped, closed)
		}
	}
	return dropped
}
