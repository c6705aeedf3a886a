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
	// (LogTopic), so a restart keeps every member; off, a restart makes
	// every member rejoin (UNKNOWN_MEMBER_ID).
	DurableLog bool   `koanf:"durable-log"`
	LogTopic   string `koanf:"log-topic"`
	// AnchorSessionTimeout of the anchor members (capped by the broker's
	// group.max.session.timeout.ms: refused values fall back to shorter
	// ones).
	AnchorSessionTimeout    time.Duration `koanf:"anchor-session-timeout"`
	AnchorHeartbeatInterval time.Duration `koanf:"anchor-heartbeat-interval"`
	AnchorRebalanceTimeout  time.Duration `koanf:"anchor-rebalance-timeout"`
}

// DefaultCoordinator returns the coordinator settings before any source.
func DefaultCoordinator() Coordinator {
	return Coordinator{
		MetadataRefreshInterval: 10 * time.Second,
		LogTopic:                "__streamshift_groups",
		AnchorSessionTimeout:    30 * time.Minute,
		AnchorHeartbeatInterval: 3 * time.Second,
		AnchorRebalanceTimeout:  time.Minute,
	}
}

// AnchorInstanceID is the group.instance.id of this proxy's anchor members.
func (c *Config) AnchorInstanceID() string { return "streamshift-" + c.ProxyID }

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
	} {
		if d <= 0 {
			errs = append(errs, fmt.Sprintf("%s: must be positive, got %v", name, d))
		}
	}
	if c.Coordinator.DurableLog && c.Coordinator.LogTopic == "" {
		errs = append(errs, "coordinator.log-topic: required with coordinator.durable-log")
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
