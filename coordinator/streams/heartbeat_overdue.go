package streams

import "time"

// Overdue members, beyond Kafka 4.4. When a member dies without leaving
// (kill -9), Kafka fences it at its session timeout, and the survivors learn
// of the new target only at their next regular heartbeat: up to one whole
// streams.heartbeat.interval.ms after the fencing, in 4.4 too. A member that
// misses the heartbeat it was told to send is likely gone, so while one is
// overdue the others are answered the short reconciliation interval: when
// the session timer fences it, they heartbeat within that interval. A
// member that is only late costs the others some short heartbeats until it
// shows up again. Nothing of this is in the records: after a failover a
// member is tracked from its next heartbeat.

// noteHeartbeatDue records when the member's next heartbeat is due at the
// latest: the interval it was just answered, plus the short interval as
// slack for the client's and the network's delays.
func (ch *Change) noteHeartbeatDue(m *Member, answered time.Duration) {
	m.heartbeatDue = ch.Now.Add(answered + ch.Config.ReconciliationHeartbeatInterval)
	if g := ch.Group; m.heartbeatDue.Before(g.Mem.overdueScan) {
		g.Mem.overdueScan = m.heartbeatDue
	}
}

// otherMemberOverdue reports whether a member other than m has not sent the
// heartbeat it was due to send. A scan finds the earliest due time and
// none is looked for before it, so a group without late members is scanned
// about once per member heartbeat interval, not at every heartbeat.
func (g *Group) otherMemberOverdue(m *Member, now time.Time) bool {
	if now.Before(g.Mem.overdueScan) {
		return false
	}
	var earliest time.Time
	for _, o := range g.Members {
		if o.heartbeatDue.IsZero() {
			continue // a classic member, or not seen since a failover
		}
		if !now.Before(o.heartbeatDue) {
			if o != m {
				return true
			}
			continue
		}
		if earliest.IsZero() || o.heartbeatDue.Before(earliest) {
			earliest = o.heartbeatDue
		}
	}
	g.Mem.overdueScan = earliest
	return false
}
