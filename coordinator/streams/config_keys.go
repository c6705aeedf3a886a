package streams

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/streamshift/streamshift/coordinator/streams/assignor"
)

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

// groupKeyPrefix starts a per-group override: "group.<group id>.<key>".
const groupKeyPrefix = "group."

// ParseConfig builds a Config from Kafka-named keys (values as strings, the
// way YAML, environment and IncrementalAlterConfigs carry them): the keys
// above set the defaults and limits; "group.<id>.<key>" overrides one
// group's setting. A key may carry Kafka's "streams." prefix. Unknown keys
// and bad values are errors; the result is validated.
func ParseConfig(kv map[string]string) (Config, error) {
	cfg := DefaultConfig()
	var errs []error
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := strings.TrimSpace(kv[k])
		key := strings.TrimPrefix(k, "streams.")
		if rest, ok := strings.CutPrefix(key, groupKeyPrefix); ok {
			id, setting, err := splitGroupKey(rest)
			if err == nil {
				o := cfg.Groups[id]
				err = o.Set(setting, v)
				if cfg.Groups == nil {
					cfg.Groups = map[string]GroupConfigOverride{}
				}
				cfg.Groups[id] = o
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", k, err))
			}
			continue
		}
		if err := cfg.set(key, v); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", k, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Config{}, err
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// splitGroupKey splits "<id>.<key>" where the key is one of the per-group
// keys (group ids may contain dots).
func splitGroupKey(s string) (id, key string, err error) {
	for _, k := range []string{KeySessionTimeout, KeyHeartbeatInterval, KeyNumStandbyReplicas, KeyInitialRebalanceDelay,
		KeyAssignmentInterval, KeyTaskOffsetInterval, KeyNumWarmupReplicas, KeyAcceptableRecoveryLag, KeyRackAwareAssignmentTags,
		KeyReconciliationHeartbeatInterval} {
		if strings.HasSuffix(s, "."+k) && len(s) > len(k)+1 {
			return s[:len(s)-len(k)-1], k, nil
		}
	}
	return "", "", errors.New("not <group id>.<per-group setting>")
}

func (c *Config) set(key, v string) error {
	d := &c.Defaults
	switch key {
	case KeyMaxSize:
		return parseInt(v, &c.MaxGroupSize)
	case KeyMinSessionTimeout:
		return parseMs(v, &c.Bounds.MinSessionTimeout, c)
	case KeyMaxSessionTimeout:
		return parseMs(v, &c.Bounds.MaxSessionTimeout, c)
	case KeyMinHeartbeatInterval:
		return parseMs(v, &c.Bounds.MinHeartbeatInterval, c)
	case KeyMaxHeartbeatInterval:
		return parseMs(v, &c.Bounds.MaxHeartbeatInterval, c)
	case KeySessionTimeout:
		return parseMs(v, &d.SessionTimeout, nil)
	case KeyHeartbeatInterval:
		return parseMs(v, &d.HeartbeatInterval, nil)
	case KeyNumStandbyReplicas:
		return parseInt(v, &d.NumStandbyReplicas)
	case KeyInitialRebalanceDelay:
		return parseMs(v, &d.InitialRebalanceDelay, nil)
	case KeyAssignmentInterval:
		return parseMs(v, &d.AssignmentInterval, nil)
	case KeyTaskOffsetInterval:
		return parseMs(v, &d.TaskOffsetInterval, nil)
	case KeyNumWarmupReplicas:
		return parseInt(v, &d.NumWarmupReplicas)
	case KeyAcceptableRecoveryLag:
		n, err := strconv.ParseInt(v, 10, 64)
		d.AcceptableRecoveryLag = n
		return err
	case KeyRackAwareAssignmentTags:
		d.RackAwareAssignmentTags = ParseList(v)
		return nil
	case KeyReconciliationHeartbeatInterval:
		return parseMs(v, &d.ReconciliationHeartbeatInterval, nil)
	}
	return errors.New("unknown streams group setting")
}

func (o *GroupConfigOverride) Set(key, v string) error {
	var err error
	switch key {
	case KeySessionTimeout:
		o.SessionTimeout = new(time.Duration)
		err = parseMs(v, o.SessionTimeout, nil)
	case KeyHeartbeatInterval:
		o.HeartbeatInterval = new(time.Duration)
		err = parseMs(v, o.HeartbeatInterval, nil)
	case KeyNumStandbyReplicas:
		o.NumStandbyReplicas = new(int)
		err = parseInt(v, o.NumStandbyReplicas)
	case KeyInitialRebalanceDelay:
		o.InitialRebalanceDelay = new(time.Duration)
		err = parseMs(v, o.InitialRebalanceDelay, nil)
	case KeyAssignmentInterval:
		o.AssignmentInterval = new(time.Duration)
		err = parseMs(v, o.AssignmentInterval, nil)
	case KeyTaskOffsetInterval:
		o.TaskOffsetInterval = new(time.Duration)
		err = parseMs(v, o.TaskOffsetInterval, nil)
	case KeyNumWarmupReplicas:
		o.NumWarmupReplicas = new(int)
		err = parseInt(v, o.NumWarmupReplicas)
	case KeyAcceptableRecoveryLag:
		o.AcceptableRecoveryLag = new(int64)
		*o.AcceptableRecoveryLag, err = strconv.ParseInt(v, 10, 64)
	case KeyRackAwareAssignmentTags:
		o.RackAwareAssignmentTags = ParseList(v)
		if o.RackAwareAssignmentTags == nil {
			o.RackAwareAssignmentTags = []string{}
		}
	case KeyReconciliationHeartbeatInterval:
		o.ReconciliationHeartbeatInterval = new(time.Duration)
		err = parseMs(v, o.ReconciliationHeartbeatInterval, nil)
	default:
		err = errors.New("unknown streams group setting")
	}
	return err
}

// parseMs reads milliseconds. Setting a bound first fills the others with
// Kafka's defaults, so a partial bounds configuration stays consistent.
func parseMs(v string, dst *time.Duration, boundsOf *Config) error {
	if boundsOf != nil && boundsOf.Bounds == (Bounds{}) {
		boundsOf.Bounds = DefaultBounds()
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return fmt.Errorf("milliseconds: %w", err)
	}
	*dst = time.Duration(n) * time.Millisecond
	return nil
}

func parseInt(v string, dst *int) error {
	n, err := strconv.Atoi(v)
	*dst = n
	return err
}

// ParseList reads a comma-separated list ("" is empty).
func ParseList(v string) []string { return assignor.ParseList(v) }
