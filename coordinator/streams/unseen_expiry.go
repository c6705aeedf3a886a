package streams

import (
	"fmt"
	"time"
)

// Unseen expiry (issue #41), the disconnect expiry's case for a member
// whose connection this instance never knew. A takeover carries the
// upstream classic members the observer reported; one it never saw a
// request of is carried "its last heartbeat unknown", and its connection
// unknown, so neither the replacement by identity nor the disconnect expiry
// can end it: its session does (45 s by default). Behind one address that
// is every member whose process stopped before an owner failover: its
// close went to the dead owner, and it never sent the new one a request.
// Kafka Streams' rolling step then waits that whole session (issue #41: a
// takeover redone at the new owner after a kill -9 cost 50 s).
//
// Every group request of a member reaches the group's owner (behind one
// address it hops there), and a live classic member heartbeats every
// heartbeat.interval.ms (3 s by default). So a carried member this instance
// has seen nothing of is fenced K heartbeat intervals after the takeover
// unless it sends a request first, as the disconnect expiry fences one
// whose connection closed; with its successor in the group (the same
// process id), its tasks go to the successor's process, where its state
// is. The same reasoning and the same K as the disconnect expiry (off with
// it); static members are exempt.

// UnseenExpiredReason starts the reason of an unseen expiry's fencing.
const UnseenExpiredReason = "it sent no request to this coordinator since the takeover carried it over, its connection unknown (unseen expiry)"

// scheduleUnseenExpiry arms the unseen expiry of carried member id, whose
// last request the observer never saw; any request of it ends the watch
// (noteRequest).
func (ch *Change) scheduleUnseenExpiry(id string) {
	g := ch.Group
	k := ch.DisconnectExpiryHeartbeats
	m := g.Members[id]
	if k <= 0 || m == nil || m.InstanceID() != "" || g.connKnown(id) {
		return
	}
	c := g.Mem.conns[id]
	c.unseen = true
	if g.Mem.conns == nil {
		g.Mem.conns = map[string]memberConn{}
	}
	g.Mem.conns[id] = c
	after := time.Duration(k) * ch.heartbeatIntervalOf(m)
	ch.logDebug(id).Msgf("[GroupId %s] Member %s, carried over by the takeover, sent this coordinator no request yet; it is fenced in %v unless it sends one first (unseen expiry).", g.ID, id, after)
	ch.schedule(disconnectExpiryTimerKey(id), after, func(f *Change) {
		cur := f.Group.Members[id]
		if cur == nil || !f.Group.Mem.conns[id].unseen {
			return // gone, or seen since
		}
		f.fenceUnseen(cur, fmt.Sprintf("%s: %v after the takeover, %d heartbeat intervals", UnseenExpiredReason, after, k))
	})
}

// fenceUnseen fences a member the unseen expiry ended.
func (ch *Change) fenceUnseen(m *Member, reason string) {
	if m.IsClassic() {
		ch.fenceClassic(m, reason)
	} else {
		ch.fenceMember(m, reason)
	}
}
