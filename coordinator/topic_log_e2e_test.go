//go:build e2e

package coordinator

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	e2e "github.com/streamshift/streamshift/e2e/harness"
)

// TestTopicLogOnKafka39: the durable group log on a real Kafka 3.9 broker
// (no streams groups there; transactions and compaction are all it needs).
func TestTopicLogOnKafka39(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b, err := e2e.StartBroker(ctx, e2e.BrokerOptions{Version: e2e.Kafka39, Dir: filepath.Join(t.TempDir(), "broker")})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Stop()
	opts := TopicLogOptions{Seeds: []string{b.Bootstrap}}
	l, recs, err := OpenTopicLog(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 0 {
		t.Fatalf("fresh log has %d records", len(recs))
	}
	h := newHarness(t, nil)
	h.md.SetTopic("foo", 4)
	h.ok(joinReq("g", "m1", "p1", sourceTopology("foo")))
	h.ok(joinReq("g", "m2", "p2", sourceTopology("foo")))
	h.ok(hbReq("g", "m2", -1, nil))
	want := h.log.All()
	if err := l.Append("g", want); err != nil {
		t.Fatal(err)
	}
	l.Close()
	l2, got, err := OpenTopicLog(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	checkCodecRoundTrip(t, got)
	a, _ := Replay(nil, want)
	g, _ := Replay(nil, got)
	if d := diffGroups(a["g"], g["g"]); d != "" {
		t.Fatalf("reopened log: %s", d)
	}
}
