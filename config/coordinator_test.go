package config

import (
	"io"
	"strings"
	"testing"
	"time"
)

// TestStreamsAndCoordinatorKeys: the streams section takes Kafka's names
// (file and environment) and is parsed by the coordinator; the coordinator
// and control-plane keys load and validate.
func TestStreamsAndCoordinatorKeys(t *testing.T) {
	path := configFile(t, `
upstream: [a:9092]
proxy-id: east-1
streams:
  session.timeout.ms: 50000
  num.standby.replicas: 1
coordinator:
  durable-log: true
  cluster-id: east
  log-partitions: 6
  anchor-session-timeout: 10m
control-plane:
  sasl-mechanism: SCRAM-SHA-512
  sasl-username: streamshift
  sasl-password: secret
`)
	env := []string{"STREAMSHIFT_STREAMS_INITIAL_REBALANCE_DELAY_MS=0", "STREAMSHIFT_COORDINATOR_METADATA_REFRESH_INTERVAL=2s"}
	cfg, warnings, err := Load([]string{"--config", path}, env, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 0 {
		t.Fatalf("warnings %v", warnings)
	}
	// With the durable log the anchors are the cluster's: any instance
	// owning a group replaces its anchor under the same static id.
	if cfg.AnchorInstanceID() != "streamshift-east" || cfg.Coordinator.LogPartitions != 6 || cfg.InstanceGroup() != "__streamshift_cluster_east" || !cfg.Coordinator.DurableLog || cfg.Coordinator.LogTopic != "__streamshift_groups" ||
		cfg.Coordinator.AnchorSessionTimeout != 10*time.Minute || cfg.Coordinator.MetadataRefreshInterval != 2*time.Second ||
		cfg.ControlPlane.SASLMechanism != "SCRAM-SHA-512" || cfg.ControlPlane.SASLPassword != "secret" {
		t.Fatalf("config %+v", cfg)
	}
	cc, err := cfg.Streams.CoordinatorConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cc.Defaults.SessionTimeout != 50*time.Second || cc.Defaults.NumStandbyReplicas != 1 || cc.Defaults.InitialRebalanceDelay != 0 {
		t.Fatalf("coordinator config %+v", cc.Defaults)
	}

	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{"STREAMSHIFT_STREAMS_SESSION_TIMEOUT_MS=abc"}, "streams.session.timeout.ms"},
		{[]string{"STREAMSHIFT_CONTROL_PLANE_SASL_MECHANISM=GSSAPI"}, "control-plane.sasl-mechanism"},
		{[]string{"STREAMSHIFT_CONTROL_PLANE_SASL_MECHANISM=PLAIN"}, "control-plane.sasl-username"},
		{[]string{"STREAMSHIFT_PROXY_ID=a b"}, "proxy-id"},
		{[]string{"STREAMSHIFT_COORDINATOR_ANCHOR_HEARTBEAT_INTERVAL=0s"}, "coordinator.anchor-heartbeat-interval"},
	} {
		_, _, err := Load([]string{"--upstream", "a:1"}, tc.env, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one naming %s", tc.env, err, tc.want)
		}
	}
}
