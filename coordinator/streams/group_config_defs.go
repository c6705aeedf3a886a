package streams

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Per-group configs as DescribeConfigs and IncrementalAlterConfigs name them
// for GROUP resources (Kafka's GroupConfig, streams part). Only the streams.*
// configs are served: a group the proxy owns is a streams group.
const GroupConfigPrefix = "streams."

// groupConfigDef is one per-group config: its key (without "streams."), its
// type and the lower bound of Kafka's ConfigDef validator.
type groupConfigDef struct {
	Key     string
	Type    kmsg.ConfigType
	atLeast int64
	Doc     string
}

// GroupConfigDefs in Kafka's order of definition.
var GroupConfigDefs = []groupConfigDef{
	{KeySessionTimeout, kmsg.ConfigTypeInt, 1, "The timeout to detect client failures when using the streams group protocol."},
	{KeyHeartbeatInterval, kmsg.ConfigTypeInt, 1, "The heartbeat interval given to the members."},
	{KeyNumStandbyReplicas, kmsg.ConfigTypeInt, 0, "The number of standby replicas for each task."},
	{KeyInitialRebalanceDelay, kmsg.ConfigTypeInt, 0, "The amount of time the group coordinator will wait for more streams clients to join a new group before performing the first rebalance."},
	{KeyAssignmentInterval, kmsg.ConfigTypeInt, 0, "The minimum interval between two assignments of the group."},
	{KeyRackAwareAssignmentTags, kmsg.ConfigTypeList, 0, "The client tag keys the assignor uses to spread standby replicas."},
	{KeyTaskOffsetInterval, kmsg.ConfigTypeInt, 1, "The interval in which members report their task offsets."},
	{KeyNumWarmupReplicas, kmsg.ConfigTypeInt, 0, "The maximum number of warmup replicas assigned at once."},
	{KeyAcceptableRecoveryLag, kmsg.ConfigTypeLong, 0, "The maximum lag of a caught-up client."},
	// streamshift's own, beyond Kafka 4.4.
	{KeyReconciliationHeartbeatInterval, kmsg.ConfigTypeInt, 1, "The heartbeat interval given to a member while it reconciles (revokes, waits for tasks, warms up tasks or runs a task being warmed up elsewhere); at most streams.heartbeat.interval.ms."},
}

func GroupConfigDefOf(name string) (groupConfigDef, bool) {
	key, ok := strings.CutPrefix(name, GroupConfigPrefix)
	if !ok {
		return groupConfigDef{}, false
	}
	for _, d := range GroupConfigDefs {
		if d.Key == key {
			return d, true
		}
	}
	return groupConfigDef{}, false
}

// Value renders one setting as Kafka prints it.
func (c GroupConfig) Value(key string) string {
	ms := func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
	switch key {
	case KeySessionTimeout:
		return ms(c.SessionTimeout)
	case KeyHeartbeatInterval:
		return ms(c.HeartbeatInterval)
	case KeyNumStandbyReplicas:
		return strconv.Itoa(c.NumStandbyReplicas)
	case KeyInitialRebalanceDelay:
		return ms(c.InitialRebalanceDelay)
	case KeyAssignmentInterval:
		return ms(c.AssignmentInterval)
	case KeyTaskOffsetInterval:
		return ms(c.TaskOffsetInterval)
	case KeyNumWarmupReplicas:
		return strconv.Itoa(c.NumWarmupReplicas)
	case KeyAcceptableRecoveryLag:
		return strconv.FormatInt(c.AcceptableRecoveryLag, 10)
	case KeyRackAwareAssignmentTags:
		return strings.Join(c.RackAwareAssignmentTags, ",")
	case KeyReconciliationHeartbeatInterval:
		return ms(c.ReconciliationHeartbeatInterval)
	}
	return ""
}

func (o GroupConfigOverride) Has(key string) bool {
	switch key {
	case KeySessionTimeout:
		return o.SessionTimeout != nil
	case KeyHeartbeatInterval:
		return o.HeartbeatInterval != nil
	case KeyNumStandbyReplicas:
		return o.NumStandbyReplicas != nil
	case KeyInitialRebalanceDelay:
		return o.InitialRebalanceDelay != nil
	case KeyAssignmentInterval:
		return o.AssignmentInterval != nil
	case KeyTaskOffsetInterval:
		return o.TaskOffsetInterval != nil
	case KeyNumWarmupReplicas:
		return o.NumWarmupReplicas != nil
	case KeyAcceptableRecoveryLag:
		return o.AcceptableRecoveryLag != nil
	case KeyRackAwareAssignmentTags:
		return o.RackAwareAssignmentTags != nil
	case KeyReconciliationHeartbeatInterval:
		return o.ReconciliationHeartbeatInterval != nil
	}
	return false
}

func (o *GroupConfigOverride) Unset(key string) {
	switch key {
	case KeySessionTimeout:
		o.SessionTimeout = nil
	case KeyHeartbeatInterval:
		o.HeartbeatInterval = nil
	case KeyNumStandbyReplicas:
		o.NumStandbyReplicas = nil
	case KeyInitialRebalanceDelay:
		o.InitialRebalanceDelay = nil
	case KeyAssignmentInterval:
		o.AssignmentInterval = nil
	case KeyTaskOffsetInterval:
		o.TaskOffsetInterval = nil
	case KeyNumWarmupReplicas:
		o.NumWarmupReplicas = nil
	case KeyAcceptableRecoveryLag:
		o.AcceptableRecoveryLag = nil
	case KeyRackAwareAssignmentTags:
		o.RackAwareAssignmentTags = nil
	case KeyReconciliationHeartbeatInterval:
		o.ReconciliationHeartbeatInterval = nil
	}
}

func (o GroupConfigOverride) Empty() bool {
	for _, d := range GroupConfigDefs {
		if o.Has(d.Key) {
			return false
		}
	}
	return true
}

// ConfigError is a failed alteration: the Kafka error code and message of
// the resource's result.
type ConfigError struct {
	Err     *kerr.Error
	Message string
}

func (e *ConfigError) Error() string { return e.Err.Message + ": " + e.Message }

func InvalidConfig(format string, args ...any) *ConfigError {
	return &ConfigError{Err: kerr.InvalidConfig, Message: fmt.Sprintf(format, args...)}
}

// Check is Kafka's ConfigDef parsing and validator of one value.
func (d groupConfigDef) Check(v string) *ConfigError {
	name := GroupConfigPrefix + d.Key
	t := strings.TrimSpace(v)
	var n int64
	switch d.Type {
	case kmsg.ConfigTypeInt:
		i, err := strconv.ParseInt(t, 10, 32)
		if err != nil {
			return InvalidConfig("Invalid value %s for configuration %s: Not a number of type INT", v, name)
		}
		n = i
	case kmsg.ConfigTypeLong:
		i, err := strconv.ParseInt(t, 10, 64)
		if err != nil {
			return InvalidConfig("Invalid value %s for configuration %s: Not a number of type LONG", v, name)
		}
		n = i
	default:
		return nil
	}
	if n < d.atLeast {
		return InvalidConfig("Invalid value %s for configuration %s: Value must be at least %d", t, name, d.atLeast)
	}
	return nil
}

func (o GroupConfigOverride) Clone() GroupConfigOverride {
	if o.RackAwareAssignmentTags != nil {
		o.RackAwareAssignmentTags = append([]string{}, o.RackAwareAssignmentTags...)
	}
	return o
}
