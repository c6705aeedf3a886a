package streams

import "time"

// The connection of a member's latest group request, kept in memory (issue
// #28, docs/fast-roll.md §2 rule 4): the replacement by identity fences a
// member only once that connection is closed, i.e. once its process is gone
// from the wire. A Java client sends every group request of a member
// (heartbeats, joins, syncs, commits) on its one coordinator connection, so
// the latest request's connection is the member's. What is unknown (after a
// failover, a load, a request without a connection) counts as open: the
// rule then fails safe, and the session timeout applies as before.

// noteConn records client as the connection of memberID's latest request
// (a classic Heartbeat measures the member's heartbeat cadence, a JoinGroup
// or SyncGroup starts it afresh: disconnect_expiry.go). A request on another
// connection ends a disconnect expiry under way; a connection not yet
// watched is watched for its close. A request whose connection is unknown
// (nil Closed) makes the member's unknown, i.e. open: a member that moved
// to a connection streamshift cannot watch (one to another instance) must
// not look gone because the one it left closed.
func (ch *Change) noteConn(memberID string, client ClientInfo) {
	ch.noteRequest(memberID, client, false)
}

// noteClassicHeartbeat is noteConn for a classic member's Heartbeat.
func (ch *Change) noteClassicHeartbeat(memberID string, client ClientInfo) {
	ch.noteRequest(memberID, client, true)
}

func (ch *Change) noteRequest(memberID string, client ClientInfo, heartbeat bool) {
	g := ch.Group
	if g == nil {
		return
	}
	c := g.Mem.conns[memberID]
	if heartbeat {
		if !c.lastHeartbeat.IsZero() {
			c.maxGap = max(c.maxGap, ch.Now.Sub(c.lastHeartbeat))
		}
		c.lastHeartbeat = ch.Now
	} else {
		c.lastHeartbeat = time.Time{}
	}
	if client.Closed != c.closed || c.unseen {
		// A request ends a disconnect or unseen expiry under way.
		ch.cancel(disconnectExpiryTimerKey(memberID))
		c.unseen = false
		g.Mem.connLeft = g.Mem.connLeft || c.closed != nil
	}
	c.id, c.closed, c.closeTime = client.ConnID, client.Closed, client.ClosedAt
	if g.Mem.conns == nil {
		g.Mem.conns = map[string]memberConn{}
	}
	g.Mem.conns[memberID] = c
	ch.watch(client.Closed)
}
