package streams

import (
	"testing"
	"time"
)

func TestParseConfig(t *testing.T) {
	cfg, err := ParseConfig(map[string]string{
		"session.timeout.ms":                          "50000",
		"streams.num.standby.replicas":                "1",
		"initial.rebalance.delay.ms":                  "0",
		"rack.aware.assignment.tags":                  "zone, rack",
		"max.size":                                    "100",
		"min.session.timeout.ms":                      "10000",
		"group.my.app.session.timeout.ms":             "10000",
		"group.my.app.num.standby.replicas":           "2",
		"streams.group.other.acceptable.recovery.lag": "5",
		// heartbeat.interval.ms is a per-group key too: the longest one wins.
		"group.my.app.reconciliation.heartbeat.interval.ms": "1000",
	})
	if err != nil {
		t.Fatal(err)
	}
	d := cfg.Defaults
	if d.SessionTimeout != 50*time.Second || d.NumStandbyReplicas != 1 || d.InitialRebalanceDelay != 0 ||
		len(d.RackAwareAssignmentTags) != 2 || d.RackAwareAssignmentTags[1] != "rack" || cfg.MaxGroupSize != 100 ||
		cfg.Bounds.MinSessionTimeout != 10*time.Second || cfg.Bounds.MaxSessionTimeout != MaxSessionTimeout {
		t.Fatalf("parsed %+v", cfg)
	}
	if g := cfg.Group("my.app"); g.SessionTimeout != 10*time.Second || g.NumStandbyReplicas != 2 || g.HeartbeatInterval != DefaultHeartbeatInterval ||
		g.ReconciliationHeartbeatInterval != time.Second {
		t.Fatalf("group my.app: %+v", g)
	}
	if g := cfg.Group("other"); g.AcceptableRecoveryLag != 5 {
		t.Fatalf("group other: %+v", g)
	}
	for _, bad := range []map[string]string{
		{"session.timeout.ms": "ten"},
		{"nope": "1"},
		{"group.x.nope": "1"},
		{"session.timeout.ms": "1000"},                  // below the minimum
		{"group.x.num.standby.replicas": "3"},           // above the maximum
		{"num.standby.replicas": "1", "max.size": "-1"}, // negative size
	} {
		if _, err := ParseConfig(bad); err == nil {
			t.Errorf("accepted %v", bad)
		}
	}
}
