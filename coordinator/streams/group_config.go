package streams

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// GroupConfig holds the streams-group settings of one group: Kafka's broker
// configs group.streams.* and their per-group overrides streams.*.
type GroupConfig struct {
	SessionTimeout          time.Duration // streams.session.timeout.ms
	HeartbeatInterval       time.Duration // streams.heartbeat.interval.ms
	NumStandbyReplicas      int           // streams.num.standby.replicas
	InitialRebalanceDelay   time.Duration // streams.initial.rebalance.delay.ms
	AssignmentInterval      time.Duration // streams.assignment.interval.ms
	TaskOffsetInterval      time.Duration // streams.task.offset.interval.ms
	NumWarmupReplicas       int           // streams.num.warmup.replicas
	AcceptableRecoveryLag   int64         // streams.acceptable.recovery.lag
	RackAwareAssignmentTags []string      // streams.rack.aware.assignment.tags
	// ReconciliationHeartbeatInterval is streamshift's
	// streams.reconciliation.heartbeat.interval.ms: the interval answered
	// to a member while it reconciles (heartbeat_interval.go).
	ReconciliationHeartbeatInterval time.Duration
}

// Kafka 4.4's defaults and bounds (GroupCoordinatorConfig, GroupConfig).
const (
	DefaultSessionTimeout        = 45 * time.Second
	MinSessionTimeout            = 45 * time.Second
	MaxSessionTimeout            = 60 * time.Second
	DefaultHeartbeatInterval     = 5 * time.Second
	MinHeartbeatInterval         = 5 * time.Second
	MaxHeartbeatInterval         = 15 * time.Second
	DefaultNumStandbyReplicas    = 0
	MaxNumStandbyReplicas        = 2
	DefaultInitialRebalanceDelay = 3 * time.Second
	DefaultAssignmentInterval    = 1 * time.Second
	MaxAssignmentInterval        = 15 * time.Second
	DefaultTaskOffsetInterval    = 60 * time.Second
	DefaultNumWarmupReplicas     = 2
	DefaultAcceptableRecoveryLag = 10000
	MinTaskOffsetInterval        = 15 * time.Second // group.streams.min.task.offset.interval.ms
	MaxNumWarmupReplicas         = 20               // group.streams.max.warmup.replicas

	// streamshift's, beyond Kafka 4.4.
	DefaultReconciliationHeartbeatInterval = 250 * time.Millisecond
	MinReconciliationHeartbeatInterval     = 100 * time.Millisecond
)

// DefaultGroupConfig is Kafka 4.4's default streams-group configuration.
func DefaultGroupConfig() GroupConfig {
	return GroupConfig{
		SessionTimeout:        DefaultSessionTimeout,
		HeartbeatInterval:     DefaultHeartbeatInterval,
		NumStandbyReplicas:    DefaultNumStandbyReplicas,
		InitialRebalanceDelay: DefaultInitialRebalanceDelay,
		AssignmentInterval:    DefaultAssignmentInterval,
		TaskOffsetInterval:    DefaultTaskOffsetInterval,
		NumWarmupReplicas:     DefaultNumWarmupReplicas,
		AcceptableRecoveryLag: DefaultAcceptableRecoveryLag,

		ReconciliationHeartbeatInterval: DefaultReconciliationHeartbeatInterval,
	}
}

// Bounds are the broker-level limits of the per-group settings (Kafka's
// group.streams.{min,max}.session.timeout.ms and
// group.streams.{min,max}.heartbeat.interval.ms).
type Bounds struct {
	MinSessionTimeout, MaxSessionTimeout       time.Duration
	MinHeartbeatInterval, MaxHeartbeatInterval time.Duration
}

// DefaultBounds are Kafka 4.4's.
func DefaultBounds() Bounds {
	return Bounds{MinSessionTimeout, MaxSessionTimeout, MinHeartbeatInterval, MaxHeartbeatInterval}
}

// Validate checks the bounds Kafka enforces by default.
func (c GroupConfig) Validate() error { return c.ValidateWithin(DefaultBounds()) }

// ValidateWithin checks the settings against b and Kafka's fixed limits.
func (c GroupConfig) ValidateWithin(b Bounds) error {
	var errs []error
	if c.SessionTimeout < b.MinSessionTimeout || c.SessionTimeout > b.MaxSessionTimeout {
		errs = append(errs, fmt.Errorf("streams.session.timeout.ms %d outside [%d, %d]", c.SessionTimeout.Milliseconds(), b.MinSessionTimeout.Milliseconds(), b.MaxSessionTimeout.Milliseconds()))
	}
	if c.HeartbeatInterval < b.MinHeartbeatInterval || c.HeartbeatInterval > b.MaxHeartbeatInterval {
		errs = append(errs, fmt.Errorf("streams.heartbeat.interval.ms %d outside [%d, %d]", c.HeartbeatInterval.Milliseconds(), b.MinHeartbeatInterval.Milliseconds(), b.MaxHeartbeatInterval.Milliseconds()))
	}
	if c.HeartbeatInterval >= c.SessionTimeout {
		errs = append(errs, fmt.Errorf("streams.heartbeat.interval.ms %d must be below streams.session.timeout.ms %d", c.HeartbeatInterval.Milliseconds(), c.SessionTimeout.Milliseconds()))
	}
	if c.NumStandbyReplicas < 0 || c.NumStandbyReplicas > MaxNumStandbyReplicas {
		errs = append(errs, fmt.Errorf("streams.num.standby.replicas %d outside [0, %d]", c.NumStandbyReplicas, MaxNumStandbyReplicas))
	}
	if c.InitialRebalanceDelay < 0 || c.InitialRebalanceDelay.Milliseconds() > math.MaxInt32 {
		errs = append(errs, fmt.Errorf("streams.initial.rebalance.delay.ms %d out of range", c.InitialRebalanceDelay.Milliseconds()))
	}
	if c.AssignmentInterval < 0 || c.AssignmentInterval > MaxAssignmentInterval {
		errs = append(errs, fmt.Errorf("streams.assignment.interval.ms %d outside [0, %d]", c.AssignmentInterval.Milliseconds(), MaxAssignmentInterval.Milliseconds()))
	}
	if c.TaskOffsetInterval < MinTaskOffsetInterval || c.TaskOffsetInterval.Milliseconds() > math.MaxInt32 {
		errs = append(errs, fmt.Errorf("streams.task.offset.interval.ms %d outside [%d, %d]", c.TaskOffsetInterval.Milliseconds(), MinTaskOffsetInterval.Milliseconds(), math.MaxInt32))
	}
	if c.NumWarmupReplicas < 0 || c.NumWarmupReplicas > MaxNumWarmupReplicas {
		errs = append(errs, fmt.Errorf("streams.num.warmup.replicas %d outside [0, %d]", c.NumWarmupReplicas, MaxNumWarmupReplicas))
	}
	if c.ReconciliationHeartbeatInterval < MinReconciliationHeartbeatInterval || c.ReconciliationHeartbeatInterval > c.HeartbeatInterval {
		errs = append(errs, fmt.Errorf("streams.reconciliation.heartbeat.interval.ms %d outside [%d, streams.heartbeat.interval.ms %d]", c.ReconciliationHeartbeatInterval.Milliseconds(), MinReconciliationHeartbeatInterval.Milliseconds(), c.HeartbeatInterval.Milliseconds()))
	}
	if c.AcceptableRecoveryLag < 0 {
		errs = append(errs, fmt.Errorf("streams.acceptable.recovery.lag %d is negative", c.AcceptableRecoveryLag))
	}
	for _, t := range c.RackAwareAssignmentTags {
		if strings.TrimSpace(t) == "" {
			errs = append(errs, errors.New("streams.rack.aware.assignment.tags has a blank tag"))
		}
	}
	return errors.Join(errs...)
}

// AssignmentConfigs are the configs whose change bumps the group epoch
// (Kafka's LastAssignmentConfigs). acceptable.recovery.lag is not one.
func (c GroupConfig) AssignmentConfigs() []KeyValue {
	kv := []KeyValue{{"num.standby.replicas", strconv.Itoa(c.NumStandbyReplicas)}}
	if len(c.RackAwareAssignmentTags) > 0 {
		kv = append(kv, KeyValue{"rack.aware.assignment.tags", strings.Join(c.RackAwareAssignmentTags, ",")})
	}
	return kv
}

// sameAssignmentConfigs compares with stored LastAssignmentConfigs without
// building them (the steady-state heartbeat path).
func (c GroupConfig) sameAssignmentConfigs(kv []KeyValue) bool {
	want := 1
	if len(c.RackAwareAssignmentTags) > 0 {
		want = 2
	}
	if len(kv) != want || kv[0].Key != "num.standby.replicas" || kv[0].Value != strconv.Itoa(c.NumStandbyReplicas) {
		return false
	}
	return want == 1 || (kv[1].Key == "rack.aware.assignment.tags" && kv[1].Value == strings.Join(c.RackAwareAssignmentTags, ","))
}

// GroupConfigOverride holds per-group overrides; nil fields use the default.
type GroupConfigOverride struct {
	SessionTimeout          *time.Duration
	HeartbeatInterval       *time.Duration
	NumStandbyReplicas      *int
	InitialRebalanceDelay   *time.Duration
	AssignmentInterval      *time.Duration
	TaskOffsetInterval      *time.Duration
	NumWarmupReplicas       *int
	AcceptableRecoveryLag   *int64
	RackAwareAssignmentTags []string // nil: default

	ReconciliationHeartbeatInterval *time.Duration
}

// Apply is c with o's overrides. Unlike the other per-key operations it
// names each field instead of running through GroupConfigDefs: it runs on every
// heartbeat of a group with an override, and the table's indirect calls
// would put o and c on the heap (2 allocations, about 10 times slower).
func (o GroupConfigOverride) Apply(c GroupConfig) GroupConfig {
	overrideWith(&c.SessionTimeout, o.SessionTimeout)
	overrideWith(&c.HeartbeatInterval, o.HeartbeatInterval)
	overrideWith(&c.NumStandbyReplicas, o.NumStandbyReplicas)
	overrideWith(&c.InitialRebalanceDelay, o.InitialRebalanceDelay)
	overrideWith(&c.AssignmentInterval, o.AssignmentInterval)
	overrideWith(&c.TaskOffsetInterval, o.TaskOffsetInterval)
	overrideWith(&c.NumWarmupReplicas, o.NumWarmupReplicas)
	overrideWith(&c.AcceptableRecoveryLag, o.AcceptableRecoveryLag)
	if o.RackAwareAssignmentTags != nil {
		c.RackAwareAssignmentTags = o.RackAwareAssignmentTags
	}
	overrideWith(&c.ReconciliationHeartbeatInterval, o.ReconciliationHeartbeatInterval)
	return c
}

// overrideWith sets *setting to an override's value, if it has one.
func overrideWith[T any](setting *T, override *T) {
	if override != nil {
		*setting = *override
	}
}
