package coordinator

import (
	"bytes"
	"context"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// newKfakeTopicLog returns the options of a group log on a new kfake
// cluster, and a context bounding the test; both end with the test.
func newKfakeTopicLog(t *testing.T) (context.Context, TopicLogOptions) {
	t.Helper()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx, TopicLogOptions{Seeds: cluster.ListenAddrs(), Timeout: 5 * time.Second}
}

// The durable log on a kfake cluster: a coordinator's records survive a
// restart, and a new coordinator loads the same state.
func TestTopicLogRestart(t *testing.T) {
	ctx, opts := newKfakeTopicLog(t)

	open := func() (*Coordinator, *TopicLog, *StaticMetadata) {
		log, recs, err := OpenTopicLog(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		md := NewStaticMetadata()
		md.SetTopic("foo", 4)
		cfg := DefaultConfig()
		cfg.Defaults.InitialRebalanceDelay = 0
		cfg.Defaults.AssignmentInterval = 0
		c, err := New(Options{Config: cfg, Clock: NewManualClock(testStart), Log: log, Metadata: md})
		if err != nil {
			t.Fatal(err)
		}
		c.inline = true
		if err := c.Load(recs); err != nil {
			t.Fatal(err)
		}
		return c, log, md
	}
	hb := func(c *Coordinator, req *kmsg.StreamsGroupHeartbeatRequest) *kmsg.StreamsGroupHeartbeatResponse {
		var resp *kmsg.StreamsGroupHeartbeatResponse
		c.StreamsGroupHeartbeat(req, ClientInfo{ClientID: "c"}, func(r *kmsg.StreamsGroupHeartbeatResponse) { resp = r })
		if resp.ErrorCode != 0 {
			t.Fatalf("heartbeat: %d %s", resp.ErrorCode, deref(resp.ErrorMessage))
		}
		return resp
	}

	c1, log1, _ := open()
	r1 := hb(c1, joinReq("g", "m1", "p1", sourceTopology("foo")))
	r2 := hb(c1, joinReq("g", "m2", "p2", sourceTopology("foo")))
	got, _ := assigned(r1)
	hb(c1, hbReq("g", "m1", r1.MemberEpoch, &got))
	hb(c1, hbReq("g", "m2", r2.MemberEpoch, &TaskSets{}))
	hb(c1, joinReq("g2", "x", "p1", sourceTopology("foo")))
	hb(c1, hbReq("g2", "x", -1, nil))
	before := map[string]string{}
	for _, id := range []string{"g", "g2"} {
		before[id] = fmtSnapshot(c1.shards[id].group)
	}
	c1.Close()
	log1.Close()

	c2, log2, _ := open()
	defer log2.Close()
	defer c2.Close()
	for id, want := range before {
		s := c2.shards[id]
		if s == nil || fmtSnapshot(s.group) != want {
			t.Fatalf("group %s after restart:\n%v\nwant\n%s", id, s, want)
		}
	}
	// The restarted coordinator carries on from there.
	r := hb(c2, hbReq("g", "m2", c2.shards["g"].group.Members["m2"].MemberEpoch(), nil))
	if r.MemberEpoch != 3 {
		t.Fatalf("after restart: epoch %d", r.MemberEpoch)
	}
}

// TestTopicLogSkipsUnknownRecordTypes: a record of a type a newer
// streamshift wrote is skipped with a warning, and the load goes on.
func TestTopicLogSkipsUnknownRecordTypes(t *testing.T) {
	ctx, opts := newKfakeTopicLog(t)

	log, _, err := OpenTopicLog(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	known := []Record{
		{Type: RecordOwnership, GroupID: "g", Value: &OwnershipValue{Source: OwnershipNew, ClaimedAtMs: 1}},
		{Type: RecordGroupMetadata, GroupID: "g", Value: &GroupMetadataValue{Epoch: 1}},
	}
	if err := log.Append("g", known[:1]); err != nil {
		t.Fatal(err)
	}
	newer, err := kgo.NewClient(kgo.SeedBrokers(opts.Seeds...))
	if err != nil {
		t.Fatal(err)
	}
	unknown := &kgo.Record{Topic: "__streamshift_groups", Key: []byte(`{"v":1,"type":1999,"group":"g"}`), Value: []byte(`{"x":1}`)}
	if err := newer.ProduceSync(ctx, unknown).FirstErr(); err != nil {
		t.Fatal(err)
	}
	newer.Close()
	if err := log.Append("g", known[1:]); err != nil {
		t.Fatal(err)
	}
	log.Close()

	var out bytes.Buffer
	opts.Log = zerolog.New(&out)
	log, recs, err := OpenTopicLog(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	log.Close()
	if !reflect.DeepEqual(recs, known) {
		t.Fatalf("loaded %v, want %v", recs, known)
	}
	if line := out.String(); !strings.Contains(line, `"level":"warn"`) || !strings.Contains(line, `"type":1999`) || !strings.Contains(line, `"group":"g"`) {
		t.Fatalf("log: %q", line)
	}
}

func fmtSnapshot(g *Group) string {
	if g == nil {
		return "<nil>"
	}
	s := snapshot(g)
	out := ""
	out += printed(s.GroupEpoch, s.AssignmentEpoch, s.ValidatedTopologyEpoch, s.MetadataHash, s.LastAssignmentConfigs, s.Topology, s.Target, s.Static)
	ids := make([]string, 0, len(g.Members))
	for id := range g.Members {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		m := g.Members[id]
		out += "|" + id + printed(m.Meta, m.current())
	}
	return out
}
