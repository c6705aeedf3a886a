package config

import (
	"fmt"
	"strings"
	"time"
)

// ControlPlane is how streamshift itself talks to the upstream (metadata,
// internal topics, DescribeGroups, the anchor members, the durable group
// log). Client requests keep their own credentials: SASL passes through.
type ControlPlane struct {
	// SASLMechanism: "" (none), PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512.
	SASLMechanism string `koanf:"sasl-mechanism"`
	SASLUsername  string `koanf:"sasl-username"`
	SASLPassword  string `koanf:"sasl-password"`
}

// Coordinator configures the streams-group coordinator's integration with
// the upstream.
type Coordinator struct {
	// MetadataRefreshInterval is how often source-topic partition counts
	// are read from the upstream.
	MetadataRefreshInterval time.Duration `koanf:"metadata-refresh-interval"`
	// DurableLog keeps the groups' records on a compacted upstream topic
	// (LogTopic), so a restart keeps every member and several instances can
	// share the groups; off (tests, the demo), a restart makes every member
	// rejoin (UNKNOWN_MEMBER_ID) and only one instance may serve a group.
	DurableLog bool   `koanf:"durable-log"`
	LogTopic   string `koanf:"log-topic"`
	// LogPartitions is the group log's partition count, fixed when the
	// topic is created: a group lives on partition
	// abs(javaHash(group id)) % LogPartitions (Kafka's __consumer_offsets
	// rule), and a partition is the unit instances own and hand over.
	LogPartitions int32 `koanf:"log-partitions"`
	// ClusterID names the upstream consumer group the instances sharing
	// LogTopic join to share its partitions (durable log only).
	ClusterID string `koanf:"cluster-id"`
	// InstanceSessionTimeout is the session of an instance in that group:
	// how long a dead instance's partitions wait before they move.
	InstanceSessionTimeout time.Duration `koanf:"instance-session-timeout"`
	// AnchorSessionTimeout of the anchor members (capped by the broker's
	// group.max.session.timeout.ms: refused values fall back to shorter
	// ones).
	AnchorSessionTimeout    time.Duration `koanf:"anchor-session-timeout"`
	AnchorHeartbeatInterval time.Duration `koanf:"anchor-heartbeat-interval"`
	AnchorRebalanceTimeout  time.Duration `koanf:"anchor-rebalance-timeout"`
	// AnchorMaxInflight bounds the anchors' heartbeats and joins running
	// at once (an idle anchor holds no goroutine).
	AnchorMaxInflight int `koanf:"anchor-max-inflight"`
	// OffsetsRetentionCheckInterval is how long a streams group stays
	// Empty before its state is deleted and its anchor leaves the upstream
	// group (Kafka's offsets.retention.check.interval.ms); 0 keeps Empty
	// groups.
	OffsetsRetentionCheckInterval time.Duration `koanf:"offsets-retention-check-interval"`
}

// DefaultCoordinator returns the coordinator settings before any source.
func DefaultCoordinator() Coordinator {
	return Coordinator{
		MetadataRefreshInterval: 10 * time.Second,
		DurableLog:              true,
		LogTopic:                "__streamshift_groups",
		LogPartitions:           12,
		ClusterID:               "streamshift",
		InstanceSessionTimeout:  10 * time.Second,
		AnchorSessionTimeout:    30 * time.Minute,
		AnchorHeartbeatInterval: 3 * time.Second,
		AnchorRebalanceTimeout:  time.Minute,
		AnchorMaxInflight:       256,
		// Kafka's offsets.retention.check.interval.ms default.
		OffsetsRetentionCheckInterval: 10 * time.Minute,
	}
}

// AnchorInstanceID is the group.instance.id of this proxy's anchor members
// without the durable log. With it, an anchor's instance id is the
// cluster's: the group's next owner, whichever instance it is, replaces the
// anchor under the same static id, so the upstream group never looks Empty
// while its group moves between instances.
func (c *Config) AnchorInstanceID() string {
	if c.Coordinator.DurableLog {
		return "streamshift-" + c.Coordinator.ClusterID
	}
	return "streamshift-" + c.ProxyID
}

// InstanceGroup is the upstream group id the instances of one cluster join.
func (c *Config) InstanceGroup() string { return "__streamshift_cluster_" + c.Coordinator.ClusterID }

func (c *Config) validateCoordinator() []string {
	var errs []string
	if c.ProxyID == "" || strings.ContainsAny(c.ProxyID, " \t\n") {
		errs = append(errs, fmt.Sprintf("proxy-id %q: required, without spaces (it names the anchor members' group.instance.id)", c.ProxyID))
	}
	for name, d := range map[string]time.Duration{
		"coordinator.metadata-refresh-interval": c.Coordinator.MetadataRefreshInterval,
		"coordinator.anchor-session-timeout":    c.Coordinator.AnchorSessionTimeout,
		"coordinator.anchor-heartbeat-interval": c.Coordinator.AnchorHeartbeatInterval,
		"coordinator.anchor-rebalance-timeout":  c.Coordinator.AnchorRebalanceTimeout,
		"coordinator.instance-session-timeout":  c.Coordinator.InstanceSessionTimeout,
	} {
		if d <= 0 {
			errs = append(errs, fmt.Sprintf("%s: must be positive, got %v", name, d))
		}
	}
	if c.Coordinator.AnchorMaxInflight < 1 {
		errs = append(errs, fmt.Sprintf("coordinator.anchor-max-inflight: must be positive, got %d", c.Coordinator.AnchorMaxInflight))
	}
	if c.Coordinator.OffsetsRetentionCheckInterval < 0 {
		errs = append(errs, fmt.Sprintf("coordinator.offsets-retention-check-interval: must not be negative (0 keeps Empty groups), got %v", c.Coordinator.OffsetsRetentionCheckInterval))
	}
	if c.Coordinator.DurableLog && c.Coordinator.LogTopic == "" {
		errs = append(errs, "coordinator.log-topic: required with coordinator.durable-log")
	}
	if c.Coordinator.DurableLog && (c.Coordinator.LogPartitions < 1 || c.Coordinator.LogPartitions > 1000) {
		errs = append(errs, fmt.Sprintf("coordinator.log-partitions: 1..1000, got %d (fixed once the topic exists)", c.Coordinator.LogPartitions))
	}
	if c.Coordinator.DurableLog && (c.Coordinator.ClusterID == "" || strings.ContainsAny(c.Coordinator.ClusterID, " \t\n")) {
		errs = append(errs, fmt.Sprintf("coordinator.cluster-id %q: required with coordinator.durable-log, without spaces (it names the instances' upstream group)", c.Coordinator.ClusterID))
	}
	switch c.ControlPlane.SASLMechanism {
	case "", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
	default:
		errs = append(errs, fmt.Sprintf("control-plane.sasl-mechanism %q: want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", c.ControlPlane.SASLMechanism))
	}
	if c.ControlPlane.SASLMechanism != "" && c.ControlPlane.SASLUsername == "" {
		errs = append(errs, "control-plane.sasl-username: required with a SASL mechanism")
	}
	return errs
}
