package upstream

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/coordinator/streams"
)

// Two instances' logs on one topic: the second acquiring a partition
// fences the first, whose next append fails NOT_COORDINATOR and reports
// the fencing; the second reads back exactly what the first committed and
// appends on; partitions are independent, and a count mismatch is refused.
func TestGroupLogPartitionFencing(t *testing.T) {
	ctx, opts := newKfakeGroupLog(t)
	opts.Partitions = 3
	fenced := make(chan int32, 4)
	optsA := opts
	optsA.OnFenced = func(p int32, err error) { fenced <- p }
	a, err := OpenSharedGroupLog(ctx, optsA)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := OpenSharedGroupLog(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	g, other := "g", "word-count-4.4" // partitions 1 and 0 (partitions_test.go)
	if coordinator.PartitionFor(g, 3) != 1 || coordinator.PartitionFor(other, 3) != 0 {
		t.Fatal("test groups moved partitions")
	}
	if _, err := a.Acquire(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Acquire(ctx, 0); err != nil {
		t.Fatal(err)
	}
	recs := []streams.Record{
		{Type: streams.RecordOwnership, GroupID: g, Value: &streams.OwnershipValue{Source: streams.OwnershipNew, ClaimedAtMs: 1}},
		{Type: streams.RecordGroupMetadata, GroupID: g, Value: &streams.GroupMetadataValue{Epoch: 1}},
	}
	if err := a.Append(g, recs); err != nil {
		t.Fatal(err)
	}
	if err := b.Append(g, recs[1:]); !errors.Is(err, kerr.NotCoordinator) {
		t.Fatalf("append to a partition not acquired: %v, want NOT_COORDINATOR", err)
	}

	got, err := b.Acquire(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, recs) {
		t.Fatalf("the new owner read %v, want %v", got, recs)
	}
	// The zombie's next write is refused and reported.
	next := []streams.Record{{Type: streams.RecordGroupMetadata, GroupID: g, Value: &streams.GroupMetadataValue{Epoch: 2}}}
	if err := a.Append(g, next); !errors.Is(err, kerr.NotCoordinator) {
		t.Fatalf("zombie append: %v, want NOT_COORDINATOR", err)
	}
	select {
	case p := <-fenced:
		if p != 1 {
			t.Fatalf("fenced partition %d, want 1", p)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the fencing was not reported")
	}
	if err := a.Append(g, next); !errors.Is(err, kerr.NotCoordinator) {
		t.Fatalf("zombie append after fencing: %v", err)
	}
	if owned := a.Owned(); !reflect.DeepEqual(owned, []int32{0}) {
		t.Fatalf("zombie still owns %v, want [0]", owned)
	}
	// Its other partition is untouched.
	if err := a.Append(other, []streams.Record{{Type: streams.RecordOwnership, GroupID: other, Value: &streams.OwnershipValue{Source: streams.OwnershipNew}}}); err != nil {
		t.Fatalf("append to the zombie's unfenced partition: %v", err)
	}
	// The new owner carries on; what it holds is what was committed.
	if err := b.Append(g, next); err != nil {
		t.Fatal(err)
	}
	if l, _ := b.Load(g); len(l) != 2 || l[1].Value.(*streams.GroupMetadataValue).Epoch != 2 {
		t.Fatalf("new owner's records %v", l)
	}
	c, err := OpenSharedGroupLog(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	final, err := c.Acquire(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(final) != 3 {
		t.Fatalf("partition 1 holds %v: the zombie's refused write must not be there", final)
	}

	wrong := opts
	wrong.Partitions = 4
	if _, err := OpenSharedGroupLog(ctx, wrong); err == nil {
		t.Fatal("a partition count other than the topic's was accepted")
	}
}
