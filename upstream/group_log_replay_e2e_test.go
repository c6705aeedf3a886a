//go:build e2e

package upstream

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/coordinator/streams"
)

// TestGroupLogReplay10kGroupsOnKafka39 measures what a new owner pays to
// take over a busy partition: one log partition holding 10,000 streams
// groups (one member each, settled) on a real Kafka 3.9 broker, acquired
// (InitProducerId, sentinel, read_committed to the end) and loaded into a
// coordinator. It reports the times (BENCHMARKS material, no threshold)
// and checks the loaded groups are the written ones.
func TestGroupLogReplay10kGroupsOnKafka39(t *testing.T) {
	const groups = 10000
	ctx, b := kafka39(t)
	mem := coordinator.NewMemoryLog()
	c := newCoordinator(t, mem, nil)
	defer c.Close()
	for i := 0; i < groups; i++ {
		g := fmt.Sprintf("app-%05d", i)
		r := heartbeat(t, c, joinReq(g, "m", "p", "foo"))
		heartbeat(t, c, hbReq(g, "m", r.MemberEpoch, assigned(r)))
	}
	recs := mem.All()

	opts := GroupLogOptions{Seeds: []string{b.Bootstrap}, Partitions: 1}
	l, err := OpenSharedGroupLog(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	// Written in bulk, as many owners' appends over time would have.
	prod, err := kgo.NewClient(kgo.SeedBrokers(b.Bootstrap), kgo.DefaultProduceTopic("__streamshift_groups"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	krs := make([]*kgo.Record, 0, len(recs))
	for _, r := range recs {
		k, v, err := streams.MarshalRecord(r)
		if err != nil {
			t.Fatal(err)
		}
		krs = append(krs, &kgo.Record{Key: k, Value: v, Partition: 0})
	}
	if err := prod.ProduceSync(ctx, krs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	prod.Close()

	l2, err := OpenSharedGroupLog(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	start := time.Now()
	got, err := l2.Acquire(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	read := time.Since(start)
	c2 := newCoordinator(t, l2, nil)
	defer c2.Close()
	start = time.Now()
	if err := c2.Load(got); err != nil {
		t.Fatal(err)
	}
	load := time.Since(start)
	t.Logf("partition of %d groups, %d records: acquired and read in %s, loaded in %s", groups, len(got), read.Round(time.Millisecond), load.Round(time.Millisecond))
	if len(got) != len(recs) {
		t.Fatalf("read %d records, wrote %d", len(got), len(recs))
	}
	for _, g := range []string{"app-00000", "app-04711", "app-09999"} {
		if a, b := describe(c, g), describe(c2, g); !reflect.DeepEqual(a, b) {
			t.Fatalf("group %s loaded as\n%+v\nwant\n%+v", g, b, a)
		}
	}
}
