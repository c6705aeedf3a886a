package config

import (
	"reflect"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// Streams is the `streams:` section: settings of the streams groups the proxy
// coordinates. Keys are Kafka's flat config names relative to the section,
// e.g. a field tagged `koanf:"session.timeout.ms"` is set by
//
//	streams:
//	  session.timeout.ms: 45000
//
// or STREAMSHIFT_STREAMS_SESSION_TIMEOUT_MS. To add a setting: add the field
// here with its tag, its default in DefaultStreams and its check in validate;
// the key then becomes known to the file, environment and unknown-key checks
// automatically.
//
// Values are kept as text and parsed by streams.ParseConfig (Kafka's
// group.streams.* names without the prefix; empty means Kafka's default).
type Streams struct {
	SessionTimeout          string `koanf:"session.timeout.ms"`
	HeartbeatInterval       string `koanf:"heartbeat.interval.ms"`
	NumStandbyReplicas      string `koanf:"num.standby.replicas"`
	InitialRebalanceDelay   string `koanf:"initial.rebalance.delay.ms"`
	AssignmentInterval      string `koanf:"assignment.interval.ms"`
	TaskOffsetInterval      string `koanf:"task.offset.interval.ms"`
	NumWarmupReplicas       string `koanf:"num.warmup.replicas"`
	AcceptableRecoveryLag   string `koanf:"acceptable.recovery.lag"`
	RackAwareAssignmentTags string `koanf:"rack.aware.assignment.tags"`
	MaxSize                 string `koanf:"max.size"`
	MinSessionTimeout       string `koanf:"min.session.timeout.ms"`
	MaxSessionTimeout       string `koanf:"max.session.timeout.ms"`
	MinHeartbeatInterval    string `koanf:"min.heartbeat.interval.ms"`
	MaxHeartbeatInterval    string `koanf:"max.heartbeat.interval.ms"`
	// streamshift's own, beyond Kafka 4.4 (coordinator/streams/heartbeat_interval.go).
	ReconciliationHeartbeatInterval string `koanf:"reconciliation.heartbeat.interval.ms"`
}

// DefaultStreams returns the streams settings before any source is applied.
func DefaultStreams() Streams { return Streams{} }

// KeyValues returns the set keys, as streams.ParseConfig reads them.
func (s Streams) KeyValues() map[string]string {
	out := map[string]string{}
	v := reflect.ValueOf(s)
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		if val := v.Field(i).String(); val != "" {
			out[t.Field(i).Tag.Get("koanf")] = val
		}
	}
	return out
}

// CoordinatorConfig parses the section.
func (s Streams) CoordinatorConfig() (streams.Config, error) {
	return streams.ParseConfig(s.KeyValues())
}

func (s Streams) validate() []string {
	if _, err := s.CoordinatorConfig(); err != nil {
		return []string{"streams: " + err.Error()}
	}
	return nil
}
