//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamshift/streamshift/e2e/harness"
)

// TestStreamsProxyTakeoverMissingChangelog: a classic Kafka Streams app
// (kafka-streams 3.6, exactly once) runs through streamshift on Kafka 3.9;
// its changelog topic is deleted while no input flows (the classic app does
// not notice: it writes there only when it processes). First it is
// recreated with 2 partitions instead of 4: a kafka-streams 4.4 instance
// with group.protocol=streams joining must be told, in its log, that the
// takeover cannot succeed (STREAMS_INVALID_TOPOLOGY naming
// INCORRECTLY_PARTITIONED_TOPICS), and the classic group stays as it was.
// Then it is deleted again and another 4.4 instance joins: the takeover
// must go on.
// streamshift recreates the changelog as a Kafka 4.4 join does (4
// partitions, compacted), the 4.4 instance logs status
// MISSING_INTERNAL_TOPICS meanwhile, the takeover completes, both instances
// run the topology's tasks, and records produced afterwards are counted
// exactly (1, 2, ..., N per key: the counts of the earlier keys start again
// from nothing, as on Kafka, since their changelog is gone); no task is
// closed dirty and no member fenced. The group's flight recorder writes at
// most a few files. Before the fix every join
// failed ("the topology is not ready") for as long as the instance retried,
// and every failure wrote a flight-recorder file.
func TestStreamsProxyTakeoverMissingChangelog(t *testing.T) {
	t.Parallel()
	out, ctx, b := smokeBroker(t, 3*time.Minute)
	flightDir := filepath.Join(out, "flight")
	if err := os.MkdirAll(flightDir, 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(slices.Clone(nativeTestSettings), "STREAMSHIFT_CAPTURE_FLIGHT_DIR="+flightDir)
	addr, stop := startStreamshift(ctx, t, out, b.Bootstrap, "missing-topics", env...)
	defer stop()
	const input, output, changelog = "e2e-input", "e2e-output", "e2e-count-counts-changelog"
	if err := harness.CreateTopics(ctx, b.Bootstrap, 4, input, output); err != nil {
		t.Fatal(err)
	}
	col, err := harness.StartCollector(b.Bootstrap, output, true)
	if err != nil {
		t.Fatal(err)
	}
	defer col.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Bootstrap), kgo.DefaultProduceTopic(input))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	// produce writes n records for each of keys and adds them to expected.
	produce := func(expected map[string]int64, n int, keys ...string) {
		t.Helper()
		var recs []*kgo.Record
		for i := range n {
			for _, k := range keys {
				recs = append(recs, &kgo.Record{Key: []byte(fmt.Sprintf("%s-%d", k, i)), Value: []byte(k)})
				expected[k]++
			}
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	start := func(name, build, protocol string) *harness.App {
		t.Helper()
		a, err := harness.StartApp(harness.AppOptions{Name: name, Build: build, Dir: filepath.Join(out, "app-"+name), Bootstrap: addr,
			GroupProtocol: protocol, Guarantee: "exactly_once_v2"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = a.Stop() })
		return a
	}

	// The classic app runs and counts.
	c1 := start("c1", harness.App36, "classic")
	before := map[string]int64{}
	produce(before, 20, "a0", "a1", "a2", "a3")
	if err := col.WaitCaughtUp(ctx, before); err != nil {
		t.Fatalf("classic app before the deletion: %v", err)
	}
	t.Logf("classic app counted %v", col.Latest())

	// Its changelog goes, and comes back with the wrong partition count: a
	// takeover that cannot succeed. The streams instance is told why
	// (fatal, as Kafka answers a topology it cannot take); the classic
	// group goes on upstream.
	deleteTopic := func() {
		t.Helper()
		if _, err := adm.DeleteTopic(ctx, changelog); err != nil {
			t.Fatalf("delete %s: %v", changelog, err)
		}
		waitTopic(ctx, t, adm, changelog, false)
	}
	deleteTopic()
	if err := harness.CreateTopics(ctx, b.Bootstrap, 2, changelog); err != nil {
		t.Fatal(err)
	}
	s0 := start("s0", harness.App44, "streams")
	if err := waitLogLine(ctx, s0.Log, "failed due to STREAMS_INVALID_TOPOLOGY: Takeover of classic group e2e-count cannot succeed: INCORRECTLY_PARTITIONED_TOPICS"); err != nil {
		t.Fatalf("the streams instance was not told why the takeover cannot succeed: %v", err)
	}
	if err := s0.Stop(); err != nil {
		t.Logf("stop s0: %v", err)
	}
	if g, err := describeUpstream(ctx, b.Bootstrap, "e2e-count"); err != nil || g.Protocol != "stream" || len(g.Members) != 1 {
		t.Fatalf("after the refused takeover the upstream group is %+v (%v), want the classic app alone", g, err)
	}
	t.Logf("refused takeover: the streams instance was told INCORRECTLY_PARTITIONED_TOPICS, the classic group goes on")

	// The changelog gone altogether: the takeover goes on.
	deleteTopic()
	t.Logf("%s deleted; a 4.4 streams instance joins", changelog)
	joined := time.Now()

	s1 := start("s1", harness.App44, "streams")
	if err := waitLogLine(ctx, s1.Log, "Membership is in the following statuses: (3)"); err != nil {
		t.Fatalf("the streams instance never saw MISSING_INTERNAL_TOPICS: %v", err)
	}
	if err := waitLogLine(ctx, filepath.Join(out, "streamshift-1.log"), "takeover done"); err != nil {
		t.Fatalf("no takeover: %v", err)
	}
	parts := waitTopic(ctx, t, adm, changelog, true)
	if parts != 4 {
		t.Fatalf("%s recreated with %d partitions, want 4", changelog, parts)
	}
	t.Logf("takeover done and %s recreated %v after the streams instance started", changelog, time.Since(joined).Round(time.Millisecond))
	// Both instances run the topology's tasks.
	want := harness.TopologyTasks(4)
	for {
		a1, _ := c1.LastTasks()
		a2, _ := s1.LastTasks()
		all := append(slices.Clone(a1), a2...)
		slices.Sort(all)
		if slices.Equal(all, want) && len(a1) > 0 && len(a2) > 0 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("tasks never spread over both instances: c1 %v, s1 %v", a1, a2)
		case <-time.After(200 * time.Millisecond):
		}
	}

	t.Logf("tasks spread over both instances %v after the streams instance started", time.Since(joined).Round(time.Millisecond))
	// New input is counted exactly.
	after := map[string]int64{}
	produce(after, 25, "b0", "b1", "b2", "b3", "b4", "b5")
	if err := col.WaitCaughtUp(ctx, after); err != nil {
		t.Fatalf("after the takeover: %v", err)
	}
	var updates []harness.Update
	for _, u := range col.Updates() {
		if strings.HasPrefix(u.Key, "b") {
			updates = append(updates, u)
		}
	}
	if err := harness.VerifyCounts(after, updates, true); err != nil {
		t.Fatal(err)
	}

	// The takeover moved the classic instance as any takeover does: no
	// task closed dirty, no member fenced.
	if err := checkSmokeClientFiles(out, "app.log", "Closed dirty", "TaskMigratedException", "as lost", "UNKNOWN_MEMBER_ID", "ILLEGAL_GENERATION",
		"Unknown member", "Illegal generation"); err != nil {
		t.Fatal(err)
	}

	files, err := filepath.Glob(filepath.Join(flightDir, "streamshift-flight-*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("flight-recorder files: %d", len(files))
	if len(files) > 2 {
		t.Fatalf("%d flight-recorder files for one takeover, want at most 2: %v", len(files), files)
	}
}

// waitTopic waits until topic exists (exists) or is gone, and returns its
// partition count.
func waitTopic(ctx context.Context, t *testing.T, adm *kadm.Client, topic string, exists bool) int {
	t.Helper()
	for {
		td, err := adm.ListTopics(ctx, topic)
		if err == nil {
			d, ok := td[topic]
			there := ok && d.Err == nil
			if there == exists {
				return len(d.Partitions)
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("topic %s never %s: %v", topic, map[bool]string{true: "appeared", false: "went"}[exists], ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// waitLogLine waits until the file has a line containing s.
func waitLogLine(ctx context.Context, file, s string) error {
	for {
		if b, err := os.ReadFile(file); err == nil && strings.Contains(string(b), s) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%q not in %s: %w", s, file, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
