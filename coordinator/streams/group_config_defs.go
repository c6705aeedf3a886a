package streams

import (
	"errors"
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
// type, the lower bound of Kafka's ConfigDef validator and where it lives
// in GroupConfig and GroupConfigOverride.
type groupConfigDef struct {
	Key     string
	Type    kmsg.ConfigType
	atLeast int64
	Doc     string
	field   groupConfigField
}

// GroupConfigDefs in Kafka's order of definition.
var GroupConfigDefs = []groupConfigDef{
	{KeySessionTimeout, kmsg.ConfigTypeInt, 1, "The timeout to detect client failures when using the streams group protocol.",
		msField(func(c *GroupConfig) *time.Duration { return &c.SessionTimeout }, func(o *GroupConfigOverride) **time.Duration { return &o.SessionTimeout })},
	{KeyHeartbeatInterval, kmsg.ConfigTypeInt, 1, "The heartbeat interval given to the members.",
		msField(func(c *GroupConfig) *time.Duration { return &c.HeartbeatInterval }, func(o *GroupConfigOverride) **time.Duration { return &o.HeartbeatInterval })},
	{KeyNumStandbyReplicas, kmsg.ConfigTypeInt, 0, "The number of standby replicas for each task.",
		intField(func(c *GroupConfig) *int { return &c.NumStandbyReplicas }, func(o *GroupConfigOverride) **int { return &o.NumStandbyReplicas })},
	{KeyInitialRebalanceDelay, kmsg.ConfigTypeInt, 0, "The amount of time the group coordinator will wait for more streams clients to join a new group before performing the first rebalance.",
		msField(func(c *GroupConfig) *time.Duration { return &c.InitialRebalanceDelay }, func(o *GroupConfigOverride) **time.Duration { return &o.InitialRebalanceDelay })},
	{KeyAssignmentInterval, kmsg.ConfigTypeInt, 0, "The minimum interval between two assignments of the group.",
		msField(func(c *GroupConfig) *time.Duration { return &c.AssignmentInterval }, func(o *GroupConfigOverride) **time.Duration { return &o.AssignmentInterval })},
	{KeyRackAwareAssignmentTags, kmsg.ConfigTypeList, 0, "The client tag keys the assignor uses to spread standby replicas.",
		rackAwareAssignmentTagsField{}},
	{KeyTaskOffsetInterval, kmsg.ConfigTypeInt, 1, "The interval in which members report their task offsets.",
		msField(func(c *GroupConfig) *time.Duration { return &c.TaskOffsetInterval }, func(o *GroupConfigOverride) **time.Duration { return &o.TaskOffsetInterval })},
	{KeyNumWarmupReplicas, kmsg.ConfigTypeInt, 0, "The maximum number of warmup replicas assigned at once.",
		intField(func(c *GroupConfig) *int { return &c.NumWarmupReplicas }, func(o *GroupConfigOverride) **int { return &o.NumWarmupReplicas })},
	{KeyAcceptableRecoveryLag, kmsg.ConfigTypeLong, 0, "The maximum lag of a caught-up client.",
		longField(func(c *GroupConfig) *int64 { return &c.AcceptableRecoveryLag }, func(o *GroupConfigOverride) **int64 { return &o.AcceptableRecoveryLag })},
	// streamshift's own, beyond Kafka 4.4.
	{KeyReconciliationHeartbeatInterval, kmsg.ConfigTypeInt, 1, "The heartbeat interval given to a member while it reconciles (revokes, waits for tasks, warms up tasks or runs a task being warmed up elsewhere); at most streams.heartbeat.interval.ms.",
		msField(func(c *GroupConfig) *time.Duration { return &c.ReconciliationHeartbeatInterval }, func(o *GroupConfigOverride) **time.Duration { return &o.ReconciliationHeartbeatInterval })},
}

func GroupConfigDefOf(name string) (groupConfigDef, bool) {
	key, ok := strings.CutPrefix(name, GroupConfigPrefix)
	if !ok {
		return groupConfigDef{}, false
	}
	return groupConfigDefByKey(key)
}

// groupConfigDefByKey is the definition of a per-group key (without
// "streams.").
func groupConfigDefByKey(key string) (groupConfigDef, bool) {
	for _, d := range GroupConfigDefs {
		if d.Key == key {
			return d, true
		}
	}
	return groupConfigDef{}, false
}

// Value renders one setting as Kafka prints it.
func (c GroupConfig) Value(key string) string {
	if d, ok := groupConfigDefByKey(key); ok {
		return d.field.format(&c)
	}
	return ""
}

func (o GroupConfigOverride) Has(key string) bool {
	d, ok := groupConfigDefByKey(key)
	return ok && d.field.overridden(&o)
}

func (o *GroupConfigOverride) Unset(key string) {
	if d, ok := groupConfigDefByKey(key); ok {
		d.field.unset(o)
	}
}

// Set overrides one per-group setting.
func (o *GroupConfigOverride) Set(key, v string) error {
	if d, ok := groupConfigDefByKey(key); ok {
		return d.field.override(o, v)
	}
	return errors.New("unknown streams group setting")
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
