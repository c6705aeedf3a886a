package streams

import "time"

// Fast convergence, beyond Kafka 4.4: the Streams client takes
// HeartbeatIntervalMs from every successful response (research §2a), so a
// member that is part of a rebalance is answered the short
// streams.reconciliation.heartbeat.interval.ms and learns at once what the
// others' acknowledgements released for it; once stable it is answered
// streams.heartbeat.interval.ms again. Kafka 4.4 answers the configured
// interval always, and each step of a rebalance then waits for the next
// regular heartbeat: setting both intervals equal is Kafka 4.4's behaviour.

// heartbeatInterval is the interval answered to a member: short while it
// reconciles or a departed member's successor is expected
// (successor_watch.go), timed to another member's session expiry when that comes
// before its next regular heartbeat (heartbeat_session_expiry.go). A member told
// MISSING_SOURCE_TOPICS keeps the configured one: the client gives up after
// twice the interval (research §2a, trap 3).
func (ch *Change) heartbeatInterval(m *Member, next *CurrentMemberAssignmentValue, missingSourceTopics bool) time.Duration {
	short := ch.Config.ReconciliationHeartbeatInterval
	if short <= 0 || short >= ch.Config.HeartbeatInterval || missingSourceTopics {
		return ch.Config.HeartbeatInterval
	}
	if ch.Group.reconciling(m, next) || ch.Group.awaitingSuccessor(ch.Now) {
		return short
	}
	if d, ok := ch.sessionExpiryInterval(m); ok {
		return d
	}
	return ch.Config.HeartbeatInterval
}
