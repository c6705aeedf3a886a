package streams

import "time"

// Heartbeats timed to a session expiry, beyond Kafka 4.4. When a member
// dies without leaving (kill -9), Kafka fences it when its session timer
// fires, and the survivors learn of the new target only at their next
// regular heartbeat: up to one whole streams.heartbeat.interval.ms after the
// fencing, in 4.4 too (GroupMetadataManager.scheduleStreamsGroupSessionTimeout
// fences, nothing tells the others). The coordinator knows when each
// member's session expires, so a stable member whose next regular heartbeat
// would come after another member's session expiry is answered an interval
// that brings it just after that expiry (plus the reconciliation interval as
// slack): it learns of the new target at once, for one extra heartbeat per
// survivor. A member that is alive heartbeats long before its session
// expires, so healthy groups never see this. Nothing of it is in the
// records: after a failover a member's expiry is known from its next
// heartbeat.

// noteSessionExpiry records when the member's session timer, just armed
// for d, fires. Classic members are left out: their heartbeats run their
// own intervals.
func (ch *Change) noteSessionExpiry(memberID string, d time.Duration) {
	m := ch.Group.Members[memberID]
	if m == nil || m.IsClassic() {
		return
	}
	m.sessionExpires = ch.Now.Add(d)
	// Watch from when the expiry could come before a regular heartbeat.
	if watch := ch.sessionWatchFrom(m); watch.Before(ch.Group.Mem.sessionScan) {
		ch.Group.Mem.sessionScan = watch
	}
}

// sessionWatchFrom is when a member answered the configured interval could
// next heartbeat after m's session expiry.
func (ch *Change) sessionWatchFrom(m *Member) time.Time {
	return m.sessionExpires.Add(-ch.Config.HeartbeatInterval - ch.Config.ReconciliationHeartbeatInterval)
}

// sessionExpiryInterval is the interval that brings m's next heartbeat just
// after the earliest session expiry of another member that would come
// before m's next regular heartbeat; false when there is none. A scan finds
// the earliest time to watch from and none is made before it, so a healthy
// group is scanned about once per session timeout, not at every heartbeat.
func (ch *Change) sessionExpiryInterval(m *Member) (time.Duration, bool) {
	g, now := ch.Group, ch.Now
	if now.Before(g.Mem.sessionScan) {
		return 0, false
	}
	var expiry, watch time.Time
	for _, o := range g.Members {
		if o == m || o.sessionExpires.IsZero() {
			continue
		}
		if w := ch.sessionWatchFrom(o); now.Before(w) {
			if watch.IsZero() || w.Before(watch) {
				watch = w
			}
			continue
		}
		if expiry.IsZero() || o.sessionExpires.Before(expiry) {
			expiry = o.sessionExpires
		}
	}
	if expiry.IsZero() {
		g.Mem.sessionScan = watch // the zero time: scan again at the next heartbeat
		return 0, false
	}
	short := ch.Config.ReconciliationHeartbeatInterval
	d := expiry.Sub(now) + short
	if d < short || d > ch.Config.HeartbeatInterval {
		// The expiry is due, or so close to the regular heartbeat that the
		// two could cross: heartbeat soon and look again.
		d = short
	}
	return d, true
}
