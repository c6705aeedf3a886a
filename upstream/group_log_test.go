package upstream

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/coordinator/streams"
)

// newKfakeGroupLog returns the options of a group log on a new kfake
// cluster, and a context bounding the test; both end with the test.
func newKfakeGroupLog(t *testing.T) (context.Context, GroupLogOptions) {
	t.Helper()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx, GroupLogOptions{Seeds: cluster.ListenAddrs(), Timeout: 5 * time.Second}
}

// The durable log on a kfake cluster: a coordinator's records survive a
// restart, and a new coordinator loads the same state, record by record
// (the groups "g" and "g2" live on partitions 1 and 0 of 3).
func TestGroupLogRestart(t *testing.T) {
	ctx, opts := newKfakeGroupLog(t)
	opts.Partitions = 3
	if coordinator.PartitionFor("g", 3) == coordinator.PartitionFor("g2", 3) {
		t.Fatal("the groups share a partition")
	}

	open := func() (*coordinator.Coordinator, *GroupLog) {
		log, recs, err := OpenGroupLog(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		return newCoordinator(t, log, recs), log
	}

	c1, log1 := open()
	r1 := heartbeat(t, c1, joinReq("g", "m1", "p1", "foo"))
	r2 := heartbeat(t, c1, joinReq("g", "m2", "p2", "foo"))
	heartbeat(t, c1, hbReq("g", "m1", r1.MemberEpoch, assigned(r1)))
	heartbeat(t, c1, hbReq("g", "m2", r2.MemberEpoch, &ownedTasks{}))
	heartbeat(t, c1, joinReq("g2", "x", "p1", "foo"))
	heartbeat(t, c1, hbReq("g2", "x", -1, nil))
	// The state as clients see it, and the group's live records (what a
	// coordinator replays).
	before := describe(c1, "g", "g2")
	recsBefore := map[string][]streams.Record{}
	for _, id := range []string{"g", "g2"} {
		recsBefore[id], _ = log1.Load(id)
	}
	c1.Close()
	log1.Close()

	c2, log2 := open()
	defer log2.Close()
	defer c2.Close()
	after := describe(c2, "g", "g2")
	for i, g := range before {
		if g.ErrorCode != 0 || !reflect.DeepEqual(g, after[i]) {
			t.Fatalf("group %s after restart:\n%+v\nwant\n%+v", g.Group, after[i], g)
		}
		if recs, _ := log2.Load(g.Group); !reflect.DeepEqual(recs, recsBefore[g.Group]) {
			t.Fatalf("group %s: records after restart\n%v\nwant\n%v", g.Group, recs, recsBefore[g.Group])
		}
	}
	// The restarted coordinator carries on from there.
	var epoch int32
	for _, m := range after[0].Members {
		if m.MemberID == "m2" {
			epoch = m.MemberEpoch
		}
	}
	if r := heartbeat(t, c2, hbReq("g", "m2", epoch, nil)); r.MemberEpoch != 3 {
		t.Fatalf("after restart: epoch %d", r.MemberEpoch)
	}
}

// TestGroupLogSkipsUnknownRecordTypes: a record of a type a newer
// streamshift wrote is skipped with a warning, and the load goes on.
func TestGroupLogSkipsUnknownRecordTypes(t *testing.T) {
	ctx, opts := newKfakeGroupLog(t)

	log, _, err := OpenGroupLog(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	known := []streams.Record{
		{Type: streams.RecordOwnership, GroupID: "g", Value: &streams.OwnershipValue{Source: streams.OwnershipNew, ClaimedAtMs: 1}},
		{Type: streams.RecordGroupMetadata, GroupID: "g", Value: &streams.GroupMetadataValue{Epoch: 1}},
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
	log, recs, err := OpenGroupLog(ctx, opts)
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
