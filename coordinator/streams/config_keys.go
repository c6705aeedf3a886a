package streams

import "github.com/streamshift/streamshift/coordinator/streams/assignor"

// Config keys, as Kafka names the per-group settings (without the
// "streams." prefix) and the broker-level limits. ParseConfig reads them; the
// config package can pass its `streams:` section through.
const (
	KeySessionTimeout          = "session.timeout.ms"
	KeyHeartbeatInterval       = "heartbeat.interval.ms"
	KeyNumStandbyReplicas      = "num.standby.replicas"
	KeyInitialRebalanceDelay   = "initial.rebalance.delay.ms"
	KeyAssignmentInterval      = "assignment.interval.ms"
	KeyTaskOffsetInterval      = "task.offset.interval.ms"
	KeyNumWarmupReplicas       = "num.warmup.replicas"
	KeyAcceptableRecoveryLag   = "acceptable.recovery.lag"
	KeyRackAwareAssignmentTags = "rack.aware.assignment.tags"
	// KeyReconciliationHeartbeatInterval is streamshift's own (beyond 4.4).
	KeyReconciliationHeartbeatInterval = "reconciliation.heartbeat.interval.ms"
	KeyMaxSize                         = "max.size"
	KeyMinSessionTimeout               = "min.session.timeout.ms"
	KeyMaxSessionTimeout               = "max.session.timeout.ms"
	KeyMinHeartbeatInterval            = "min.heartbeat.interval.ms"
	KeyMaxHeartbeatInterval            = "max.heartbeat.interval.ms"
)

// ParseList reads a comma-separated list ("" is empty).
func ParseList(v string) []string { return assignor.ParseList(v) }
