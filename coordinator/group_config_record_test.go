package coordinator

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// TestGroupConfigsSurviveRestart: configs set with IncrementalAlterConfigs
// are in the group log; a coordinator loading that log (a restart with a
// durable log) serves them, a deleted one is gone, and they are the
// coordinator's, not a group: no streams group appears because of them.
func TestGroupConfigsSurviveRestart(t *testing.T) {
	log := NewMemoryLog()
	cfg := streams.DefaultConfig()
	c, err := New(Options{Config: cfg, Metadata: &StaticMetadata{}, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	alter := func(group string, alts ...streams.GroupConfigAlteration) {
		t.Helper()
		if err := c.AlterGroupConfigs(group, alts, false); err != nil {
			t.Fatal(err)
		}
	}
	alter("app", setOp("streams.num.standby.replicas", "1"), setOp("streams.rack.aware.assignment.tags", "zone,rack"))
	alter("app", setOp("streams.session.timeout.ms", "50000"), setOp("streams.heartbeat.interval.ms", "6000"))
	alter("gone", setOp("streams.num.standby.replicas", "2"))
	alter("gone", streams.GroupConfigAlteration{Name: "streams.num.standby.replicas", Op: kmsg.IncrementalAlterConfigOpDelete})
	if err := c.AlterGroupConfigs("app", []streams.GroupConfigAlteration{setOp("streams.num.standby.replicas", "2")}, true); err != nil {
		t.Fatal(err)
	}
	c.Close()

	records := log.All()
	checkCodecRoundTrip(t, records)
	c2, err := New(Options{Config: cfg, Metadata: &StaticMetadata{}, Log: NewMemoryLog()})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if err := c2.Load(records); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range c2.DescribeGroupConfigs("app", nil) {
		if e.Overridden {
			got[e.Name] = e.Value
		}
	}
	want := map[string]string{
		"streams.num.standby.replicas": "1", "streams.rack.aware.assignment.tags": "zone,rack",
		"streams.session.timeout.ms": "50000", "streams.heartbeat.interval.ms": "6000",
	}
	if len(got) != len(want) {
		t.Fatalf("after restart %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("after restart %v, want %v", got, want)
		}
	}
	if c2.groupConfig("app").NumStandbyReplicas != 1 {
		t.Fatal("the restarted coordinator does not use the stored override")
	}
	if c2.HasGroupConfigs("gone") {
		t.Fatal("a deleted override came back")
	}
	if c2.Owns("app") || c2.Owns("gone") {
		t.Fatal("a group config record created a streams group")
	}
}

type failingLog struct{ *MemoryLog }

func (failingLog) Append(string, []streams.Record) error { return errors.New("log unavailable") }

// TestGroupConfigNotStored: when the log refuses the record, the change is
// not applied and the client gets an error, not a silent in-memory change.
func TestGroupConfigNotStored(t *testing.T) {
	c, err := New(Options{Config: streams.DefaultConfig(), Metadata: &StaticMetadata{}, Log: failingLog{NewMemoryLog()}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cerr := c.AlterGroupConfigs("app", []streams.GroupConfigAlteration{setOp("streams.num.standby.replicas", "1")}, false)
	if cerr == nil || cerr.Err != kerr.UnknownServerError {
		t.Fatalf("alter with a failing log: %v", cerr)
	}
	if c.HasGroupConfigs("app") {
		t.Fatal("applied although not stored")
	}
}

// TestGroupConfigRecordRejectsBadValues: a stored config value the
// coordinator cannot take fails the load instead of being dropped silently;
// a config name it does not know (a newer streamshift's) is ignored, so a
// rollback still loads the log.
func TestGroupConfigRecordRejectsBadValues(t *testing.T) {
	for _, value := range []string{
		`{"Configs":[{"Key":"streams.num.standby.replicas","Value":"-1"}]}`,
		`{"Configs":[{"Key":"streams.session.timeout.ms","Value":"x"}]}`,
	} {
		if _, err := streams.UnmarshalRecord([]byte(`{"v":1,"type":1001,"group":"g"}`), []byte(value)); err == nil {
			t.Fatalf("%s accepted", value)
		}
	}
	r, err := streams.UnmarshalRecord([]byte(`{"v":1,"type":1001,"group":"g"}`),
		[]byte(`{"Configs":[{"Key":"streams.some.future.config","Value":"1"},{"Key":"streams.num.standby.replicas","Value":"1"}]}`))
	if err != nil {
		t.Fatalf("a config name of a newer release fails the read: %v", err)
	}
	c, err := New(Options{Config: streams.DefaultConfig(), Metadata: NewStaticMetadata()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.loadGroupConfigs([]streams.Record{r}); err != nil {
		t.Fatalf("a config name of a newer release fails the load: %v", err)
	}
	if got := c.groupConfig("g").NumStandbyReplicas; got != 1 {
		t.Fatalf("the known config beside the unknown one: num.standby.replicas %d, want 1", got)
	}
}
