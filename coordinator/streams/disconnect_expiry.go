package streams

import (
	"fmt"
	"time"
)

// Disconnect expiry (issue #28, docs/fast-roll.md §5), beyond Kafka. A
// stateless Kafka Streams app starts with a new process id every time, so a
// rolling step has no identity to replace by, and the stopped instance's
// classic members (Kafka Streams does not leave its classic group on close)
// keep their tasks until their sessions expire. What streamshift sees is
// the connection: a dynamic member whose latest group request's connection
// closed, and that sent no request since, is fenced as if its session had
// expired K heartbeat intervals after the close (or at its session expiry,
// if sooner: that timer runs as before).
//
// Why that is safe: a live client whose connection closed reconnects within
// reconnect.backoff.max.ms (1 s) and heartbeats within one interval, so K = 3
// leaves two intervals of margin; a client that cannot reach the proxy that
// long cannot fetch, produce or commit either (all its traffic goes through
// the proxy). A wrong guess costs what a session expiry costs. Static
// members are exempt: keeping them across a bounce is the point of static
// membership. A connection unknown (after a failover, a load, a client of
// another instance) never expires.

// minClassicHeartbeatInterval is the interval assumed for a classic member
// until a longer gap between its heartbeats is seen: Kafka's default
// heartbeat.interval.ms. A classic member's own interval is not on the wire.
const minClassicHeartbeatInterval = 3 * time.Second

// DisconnectExpiredReason starts the reason of a disconnect expiry's
// fencing, in the log ("fenced from the group because ...").
const DisconnectExpiredReason = "its connection closed and it sent no request since (disconnect expiry)"

// ConnClosed is the operation the runtime runs when a watched connection
// closed: members replaced by a successor that joined before the close
// are fenced now (replace.go, replaceOnClose); every other dynamic member
// whose latest request came on it is fenced K heartbeat intervals from now
// unless it sends a request first.
func (ch *Change) ConnClosed(closed <-chan struct{}) {
	g := ch.Group
	if g == nil {
		return
	}
	delete(g.Mem.watched, closed)
	if ch.replaceOnClose(closed) {
		ch.Commit()
	}
	k := ch.DisconnectExpiryHeartbeats
	if k <= 0 {
		return
	}
	for id, c := range g.Mem.conns {
		m := g.Members[id]
		if c.closed != closed || m == nil || m.InstanceID() != "" {
			continue
		}
		closedAt := c.closedAt(ch.Now)
		after := max(0, time.Duration(k)*ch.heartbeatIntervalOf(m)-ch.Now.Sub(closedAt))
		ch.logDebug(id).Msgf("[GroupId %s] The connection %d of member %s closed %v ago; it is fenced in %v unless it sends a request first (disconnect expiry).", g.ID, c.id, id, ch.Now.Sub(closedAt), after)
		ch.schedule(disconnectExpiryTimerKey(id), after, func(f *Change) {
			cur := f.Group.Members[id]
			if cur == nil || f.Group.Mem.conns[id].closed != closed {
				return // gone, or back on another connection
			}
			reason := fmt.Sprintf("%s: closed %v ago, %d heartbeat intervals", DisconnectExpiredReason, f.Now.Sub(closedAt), k)
			if cur.IsClassic() {
				f.fenceClassic(cur, reason)
			} else {
				f.fenceMember(cur, reason)
			}
		})
	}
}

// closedAt is when the connection closed, as the proxy recorded it: a
// connection that closed before the group first watched it (a member a
// takeover carries, whose process stopped while the group was still
// upstream) counts from its close, not from the takeover; its session
// runs from its last request meanwhile, and would otherwise expire first
// (issue #41). now if unknown, or if the record is later than now (two
// clocks).
func (c memberConn) closedAt(now time.Time) time.Time {
	if c.closeTime == nil {
		return now
	}
	if at := c.closeTime(); !at.IsZero() && at.Before(now) {
		return at
	}
	return now
}

// heartbeatIntervalOf is the member's heartbeat interval: the group's for a
// streams member; for a classic member, the largest gap seen between its
// heartbeats, at least Kafka's default.
func (ch *Change) heartbeatIntervalOf(m *Member) time.Duration {
	if !m.IsClassic() {
		return ch.Config.HeartbeatInterval
	}
	return max(minClassicHeartbeatInterval, ch.Group.Mem.conns[m.ID].maxGap)
}
