//go:build e2e

package upstream

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/coordinator/streams"
	e2e "github.com/streamshift/streamshift/e2e/harness"
)

// TestGroupLogOnKafka39: the durable group log on a real Kafka 3.9 broker
// (no streams groups there; transactions and compaction are all it needs).
func TestGroupLogOnKafka39(t *testing.T) {
	ctx, b := kafka39(t)
	opts := GroupLogOptions{Seeds: []string{b.Bootstrap}}
	l, recs, err := OpenGroupLog(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 0 {
		t.Fatalf("fresh log has %d records", len(recs))
	}
	mem := coordinator.NewMemoryLog()
	c := newCoordinator(t, mem, nil)
	defer c.Close()
	heartbeat(t, c, joinReq("g", "m1", "p1", "foo"))
	heartbeat(t, c, joinReq("g", "m2", "p2", "foo"))
	heartbeat(t, c, hbReq("g", "m2", -1, nil))
	want := mem.All()
	if err := l.Append("g", want); err != nil {
		t.Fatal(err)
	}
	l.Close()
	l2, got, err := OpenGroupLog(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	// Every record read back encodes and decodes to itself...
	for _, r := range got {
		k, v, err := streams.MarshalRecord(r)
		if err != nil {
			t.Fatalf("marshal %v: %v", r, err)
		}
		if d, err := streams.UnmarshalRecord(k, v); err != nil || !reflect.DeepEqual(r, d) {
			t.Fatalf("round trip of %s: %+v, %v; want %+v", k, d, err, r)
		}
	}
	// ...and the reopened log replays to the state that was appended.
	a, err := streams.Replay(nil, want)
	if err != nil {
		t.Fatal(err)
	}
	g, err := streams.Replay(nil, got)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a["g"], g["g"]) {
		t.Fatalf("reopened log: %+v, want %+v", g["g"], a["g"])
	}
}

// kafka39 starts a Kafka 3.9 broker for the test, and a context bounding
// it; both end with the test.
func kafka39(t *testing.T) (context.Context, *e2e.Broker) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	b, err := e2e.StartBroker(ctx, e2e.BrokerOptions{Version: e2e.Kafka39, Dir: filepath.Join(t.TempDir(), "broker")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Stop() })
	return ctx, b
}
