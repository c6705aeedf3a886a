package coordinator

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams"
)

func setOp(name, v string) streams.GroupConfigAlteration {
	return streams.GroupConfigAlteration{Name: name, Op: kmsg.IncrementalAlterConfigOpSet, Value: &v}
}

func TestAlterGroupConfigs(t *testing.T) {
	for _, tc := range []struct {
		name string
		alts []streams.GroupConfigAlteration
		msg  string // "" = accepted
	}{
		{"standbys", []streams.GroupConfigAlteration{setOp("streams.num.standby.replicas", "2")}, ""},
		{"standbys above max", []streams.GroupConfigAlteration{setOp("streams.num.standby.replicas", "3")}, "streams.num.standby.replicas must be less than or equal to group.streams.max.standby.replicas"},
		{"heartbeat below min", []streams.GroupConfigAlteration{setOp("streams.heartbeat.interval.ms", "4999")}, "streams.heartbeat.interval.ms must be greater than or equal to group.streams.min.heartbeat.interval.ms"},
		{"heartbeat above max", []streams.GroupConfigAlteration{setOp("streams.heartbeat.interval.ms", "15001")}, "streams.heartbeat.interval.ms must be less than or equal to group.streams.max.heartbeat.interval.ms"},
		{"session above max", []streams.GroupConfigAlteration{setOp("streams.session.timeout.ms", "60001")}, "streams.session.timeout.ms must be less than or equal to group.streams.max.session.timeout.ms"},
		{"int overflow", []streams.GroupConfigAlteration{setOp("streams.num.standby.replicas", "2147483648")}, "Invalid value 2147483648 for configuration streams.num.standby.replicas: Not a number of type INT"},
		{"long lag", []streams.GroupConfigAlteration{setOp("streams.acceptable.recovery.lag", "x")}, "Invalid value x for configuration streams.acceptable.recovery.lag: Not a number of type LONG"},
		{"zero session", []streams.GroupConfigAlteration{setOp("streams.session.timeout.ms", "0")}, "Invalid value 0 for configuration streams.session.timeout.ms: Value must be at least 1"},
		{"null set", []streams.GroupConfigAlteration{{Name: "streams.num.standby.replicas", Op: kmsg.IncrementalAlterConfigOpSet}}, "Null value not supported for : streams.num.standby.replicas"},
		{"consumer config", []streams.GroupConfigAlteration{setOp("consumer.session.timeout.ms", "45000")}, "Unknown group config name: consumer.session.timeout.ms"},
		{"subtract int", []streams.GroupConfigAlteration{{Name: "streams.session.timeout.ms", Op: kmsg.IncrementalAlterConfigOpSubtract}}, "Config value subtract is not allowed for config key: streams.session.timeout.ms"},
		{"task offset interval below min", []streams.GroupConfigAlteration{setOp("streams.task.offset.interval.ms", "14999")}, "streams.task.offset.interval.ms must be greater than or equal to 15000"},
		{"warm-ups above max", []streams.GroupConfigAlteration{setOp("streams.num.warmup.replicas", "21")}, "streams.num.warmup.replicas must be less than or equal to 20"},
		{"warm-ups off", []streams.GroupConfigAlteration{setOp("streams.num.warmup.replicas", "0")}, ""},
		{"negative warm-ups", []streams.GroupConfigAlteration{setOp("streams.num.warmup.replicas", "-1")}, "Invalid value -1 for configuration streams.num.warmup.replicas: Value must be at least 0"},
		{"reconciliation interval", []streams.GroupConfigAlteration{setOp("streams.reconciliation.heartbeat.interval.ms", "1000")}, ""},
		{"reconciliation interval 0", []streams.GroupConfigAlteration{setOp("streams.reconciliation.heartbeat.interval.ms", "0")}, "Invalid value 0 for configuration streams.reconciliation.heartbeat.interval.ms: Value must be at least 1"},
		{"reconciliation interval above heartbeat", []streams.GroupConfigAlteration{setOp("streams.reconciliation.heartbeat.interval.ms", "6000")}, "streams.reconciliation.heartbeat.interval.ms 6000 outside [100, streams.heartbeat.interval.ms 5000]"},
		// All or nothing: the second operation fails, the first is not kept.
		{"atomic", []streams.GroupConfigAlteration{setOp("streams.num.standby.replicas", "1"), setOp("streams.num.standby.replicas", "9")}, "streams.num.standby.replicas must be less than or equal to group.streams.max.standby.replicas"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(Options{Config: streams.DefaultConfig(), Metadata: &StaticMetadata{}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			err2 := c.AlterGroupConfigs("g", tc.alts, false)
			if tc.msg == "" {
				if err2 != nil {
					t.Fatalf("refused: %v", err2)
				}
				return
			}
			if err2 == nil || err2.Err != kerr.InvalidConfig || err2.Message != tc.msg {
				t.Fatalf("got %v, want INVALID_CONFIG %q", err2, tc.msg)
			}
			if c.HasGroupConfigs("g") {
				t.Fatal("a refused alteration left an override")
			}
		})
	}
}

func TestAlterGroupConfigsLifecycle(t *testing.T) {
	c, err := New(Options{Config: streams.DefaultConfig(), Metadata: &StaticMetadata{}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	value := func(name string) (string, bool) {
		for _, e := range c.DescribeGroupConfigs("g", nil) {
			if e.Name == name {
				return e.Value, e.Overridden
			}
		}
		t.Fatalf("%s not described", name)
		return "", false
	}
	// validateOnly changes nothing.
	if err := c.AlterGroupConfigs("g", []streams.GroupConfigAlteration{setOp("streams.num.standby.replicas", "1")}, true); err != nil {
		t.Fatal(err)
	}
	if v, o := value("streams.num.standby.replicas"); v != "0" || o || c.HasGroupConfigs("g") {
		t.Fatalf("validateOnly applied: %s %v", v, o)
	}
	// Session and heartbeat together: each valid only with the other.
	if err := c.AlterGroupConfigs("g", []streams.GroupConfigAlteration{setOp("streams.session.timeout.ms", "50000"), setOp("streams.heartbeat.interval.ms", "6000")}, false); err != nil {
		t.Fatal(err)
	}
	if v, o := value("streams.session.timeout.ms"); v != "50000" || !o {
		t.Fatalf("session timeout %s %v", v, o)
	}
	if c.groupConfig("g").SessionTimeout.Milliseconds() != 50000 {
		t.Fatal("the coordinator does not use the override")
	}
	// List config: append and subtract.
	tags := func(op kmsg.IncrementalAlterConfigOp, v string) {
		t.Helper()
		if err := c.AlterGroupConfigs("g", []streams.GroupConfigAlteration{{Name: "streams.rack.aware.assignment.tags", Op: op, Value: &v}}, false); err != nil {
			t.Fatal(err)
		}
	}
	tags(kmsg.IncrementalAlterConfigOpAppend, "zone,rack")
	tags(kmsg.IncrementalAlterConfigOpAppend, "rack,host")
	tags(kmsg.IncrementalAlterConfigOpSubtract, "zone")
	if v, _ := value("streams.rack.aware.assignment.tags"); v != "rack,host" {
		t.Fatalf("tags %q", v)
	}
	// Deleting every override drops the group's entry.
	for _, name := range []string{"streams.session.timeout.ms", "streams.heartbeat.interval.ms", "streams.rack.aware.assignment.tags"} {
		if err := c.AlterGroupConfigs("g", []streams.GroupConfigAlteration{{Name: name, Op: kmsg.IncrementalAlterConfigOpDelete}}, false); err != nil {
			t.Fatal(err)
		}
	}
	if c.HasGroupConfigs("g") {
		t.Fatal("override left after deleting every setting")
	}
	if got := c.DescribeGroupConfigs("g", []string{"streams.num.standby.replicas", "unknown"}); len(got) != 1 {
		t.Fatalf("named describe: %+v", got)
	}
}
