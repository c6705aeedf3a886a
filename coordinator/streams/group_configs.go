package streams

import (
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// GroupConfigEntry is one config of a group as DescribeConfigs reports it.
type GroupConfigEntry struct {
	Name  string // "streams.num.standby.replicas"
	Value string
	// Overridden: the group sets it (ConfigSource GROUP_CONFIG); else the
	// value is the broker-level default (DEFAULT_CONFIG).
	Overridden bool
	Type       kmsg.ConfigType
	Doc        string
}

// IsStreamsGroupConfig reports whether name is a per-group config of
// streams groups ("streams.*").
func IsStreamsGroupConfig(name string) bool {
	return strings.HasPrefix(name, GroupConfigPrefix)
}

// DefaultGroupConfigName is the broker-level config a per-group config
// defaults to ("streams.x" → "group.streams.x"), as Kafka lists it among
// the synonyms.
func DefaultGroupConfigName(name string) string { return "group." + name }

// GroupConfigAlteration is one operation of IncrementalAlterConfigs.
type GroupConfigAlteration struct {
	Name  string
	Op    kmsg.IncrementalAlterConfigOp
	Value *string
}

// ValidateGroupConfig is Kafka's GroupConfig.validateValues for the streams
// configs, with its messages, then the remaining limits streamshift checks.
func ValidateGroupConfig(g GroupConfig, b Bounds) *ConfigError {
	switch {
	case g.HeartbeatInterval < b.MinHeartbeatInterval:
		return InvalidConfig("streams.heartbeat.interval.ms must be greater than or equal to group.streams.min.heartbeat.interval.ms")
	case g.HeartbeatInterval > b.MaxHeartbeatInterval:
		return InvalidConfig("streams.heartbeat.interval.ms must be less than or equal to group.streams.max.heartbeat.interval.ms")
	case g.SessionTimeout < b.MinSessionTimeout:
		return InvalidConfig("streams.session.timeout.ms must be greater than or equal to group.streams.min.session.timeout.ms")
	case g.SessionTimeout > b.MaxSessionTimeout:
		return InvalidConfig("streams.session.timeout.ms must be less than or equal to group.streams.max.session.timeout.ms")
	case g.NumStandbyReplicas > MaxNumStandbyReplicas:
		return InvalidConfig("streams.num.standby.replicas must be less than or equal to group.streams.max.standby.replicas")
	case g.SessionTimeout <= g.HeartbeatInterval:
		return InvalidConfig("streams.session.timeout.ms must be greater than streams.heartbeat.interval.ms")
	case g.TaskOffsetInterval < MinTaskOffsetInterval:
		return InvalidConfig("streams.task.offset.interval.ms must be greater than or equal to %d", MinTaskOffsetInterval.Milliseconds())
	case g.NumWarmupReplicas > MaxNumWarmupReplicas:
		return InvalidConfig("streams.num.warmup.replicas must be less than or equal to %d", MaxNumWarmupReplicas)
	}
	if err := g.ValidateWithin(b); err != nil {
		return InvalidConfig("%v", err)
	}
	return nil
}

// AlterList appends the missing values or removes the given ones (Kafka's
// APPEND and SUBTRACT on list configs).
func AlterList(cur, vals []string, appendOp bool) []string {
	out := append([]string{}, cur...)
	for _, v := range vals {
		i := indexOf(out, v)
		switch {
		case appendOp && i < 0:
			out = append(out, v)
		case !appendOp && i >= 0:
			out = append(out[:i], out[i+1:]...)
		}
	}
	return out
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// AlteredGroupConfig is the group's override after alts, validated as Kafka
// 4.4 validates group configs (IncrementalAlterConfigs of a GROUP resource).
func (c Config) AlteredGroupConfig(groupID string, alts []GroupConfigAlteration) (GroupConfigOverride, *ConfigError) {
	o := c.Groups[groupID].Clone()
	for _, a := range alts {
		d, ok := GroupConfigDefOf(a.Name)
		if !ok {
			return o, InvalidConfig("Unknown group config name: %s", a.Name)
		}
		switch a.Op {
		case kmsg.IncrementalAlterConfigOpSet:
			if a.Value == nil {
				return o, InvalidConfig("Null value not supported for : %s", a.Name)
			}
			if err := d.Check(*a.Value); err != nil {
				return o, err
			}
			if err := o.Set(d.Key, strings.TrimSpace(*a.Value)); err != nil {
				return o, InvalidConfig("Invalid value %s for configuration %s: %v", *a.Value, a.Name, err)
			}
		case kmsg.IncrementalAlterConfigOpDelete:
			o.Unset(d.Key)
		case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
			if d.Type != kmsg.ConfigTypeList {
				verb := "append"
				if a.Op == kmsg.IncrementalAlterConfigOpSubtract {
					verb = "subtract"
				}
				return o, InvalidConfig("Config value %s is not allowed for config key: %s", verb, a.Name)
			}
			cur := c.Group(groupID).RackAwareAssignmentTags
			if o.RackAwareAssignmentTags != nil {
				cur = o.RackAwareAssignmentTags
			}
			var vals []string
			if a.Value != nil {
				vals = ParseList(*a.Value)
			}
			o.RackAwareAssignmentTags = AlterList(cur, vals, a.Op == kmsg.IncrementalAlterConfigOpAppend)
		default:
			return o, InvalidConfig("Unknown alter config operation %d for %s", a.Op, a.Name)
		}
	}
	if err := ValidateGroupConfig(o.Apply(c.Defaults), c.ConfigBounds()); err != nil {
		return o, err
	}
	return o, nil
}
