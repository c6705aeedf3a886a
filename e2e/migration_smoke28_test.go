//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/streamshift/streamshift/e2e/harness"
)

// TestStreamsProxySmokeMigration28 runs Kafka's StreamsSmokeTest through
// streamshift on Kafka 3.9, exactly once, with kafka-streams 2.8.2 classic
// clients (Kafka's own SmokeTestClient of 2.8: SubscriptionInfo v9,
// exactly-once v2 named exactly_once_beta) rolled online to 4.4 streams and
// back. Two 2.8 clients start; while the driver produces, one is replaced by a
// 4.4 streams client (the takeover: the other 2.8 client stays on, a classic
// member of the streams group), then the streams client by a 2.8 classic
// client again (with no streams member left, the group is handed back to the
// broker). Every roll waits for the group to settle. The driver verifies every
// output topic and must print SUCCESS; no task processes on two clients at
// once; the clients' logs show no task closed dirty, no member fenced, no
// client in ERROR; the upstream group ends as the broker's classic group of
// the two 2.8 clients, without the anchor.
func TestStreamsProxySmokeMigration28(t *testing.T) {
	t.Parallel()
	out, ctx, b := smokeBroker(t, 10*time.Minute)
	// Sessions and transactions that outlast a loaded machine (JVM starts of
	// seconds, a thread blocked opening RocksDB stores): at Kafka Streams'
	// exactly-once default of 10 s the broker aborts a transaction held up
	// that long and fences its producer, which closes the tasks dirty.
	const session = 30 * time.Second
	addr, stop := startStreamshift(ctx, t, out, b.Bootstrap, "smoke-migration-28",
		append(slices.Clone(nativeTestSettings), fmt.Sprintf("STREAMSHIFT_STREAMS_SESSION_TIMEOUT_MS=%d", session.Milliseconds()))...)
	defer stop()

	client := func(name, version, protocol string) harness.SmokeClient {
		return harness.SmokeClient{Name: name, Version: version, GroupProtocol: protocol, SessionTimeout: session}
	}
	rep, err := harness.RunKafkaSmokeRoll(ctx, harness.SmokeRollOptions{
		Dir:       filepath.Join(out, "smoke"),
		Bootstrap: addr,
		Admin:     b.Bootstrap,
		Guarantee: "exactly_once_v2",
		Props:     map[string]string{"transaction.timeout.ms": "60000"},
		// Input long enough that both rolls, the first waiting out the
		// stopped classic client's session, happen while the driver produces.
		Duration: 100 * time.Second,
		Start: []harness.SmokeClient{
			client("c1", harness.Kafka28, "classic"),
			client("c2", harness.Kafka28, "classic"),
		},
		Rolls: []harness.SmokeRoll{
			{Stop: "c1", Start: client("s1", harness.Kafka44, "streams")},
			{Stop: "s1", Start: client("c3", harness.Kafka28, "classic")},
		},
		AfterRolls: func(ctx context.Context) error {
			return checkHandedBack(ctx, b.Bootstrap, "SmokeTest", 2)
		},
		Logf: t.Logf,
	})
	if rep != nil {
		writeSmokeRollReport(t, filepath.Join(out, "report.md"), rep)
	}
	if err != nil {
		t.Fatalf("smoke test with 2.8 clients migrated online (logs in %s): %v", out, err)
	}
	want := []struct {
		protocol string
		classic  int
	}{{"classic stream", 0}, {"classic stream", 0}, {"streams", 1}, {"classic stream", 0}}
	if len(rep.Steps) != len(want) {
		t.Fatalf("%d steps reported, want %d", len(rep.Steps), len(want))
	}
	for i, s := range rep.Steps {
		if s.Protocol != want[i].protocol || s.Classic != want[i].classic {
			t.Errorf("after %s: %s; want a %s group with %d classic members", s.Name, s.Group, want[i].protocol, want[i].classic)
		}
	}
	if err := checkSmokeClientLogs(filepath.Join(out, "smoke")); err != nil {
		t.Fatal(err)
	}
	if err := checkSmokeClientFiles(filepath.Join(out, "smoke"), "out", "-> ERROR", "-> PENDING_ERROR"); err != nil {
		t.Fatal(err)
	}
}
