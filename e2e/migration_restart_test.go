//go:build e2e

package e2e_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/streamshift/streamshift/e2e/harness"
)

// TestStreamsProxySmokeMigrationRestart: streamshift, without the durable
// log, is killed -9 and restarted three times during an online migration
// of Kafka's StreamsSmokeTest clients on Kafka 3.9, exactly once: right
// after the takeover (a 4.4 streams client took over the classic group of a
// 4.4 and a 3.9 classic client), with the 3.9 classic client inside the
// streams group, and as the last streams client leaves (the hand-back
// begins, with the anchor still upstream). After each restart the restarted
// streamshift knows nothing of the group: the classic client's rejoin, which
// the upstream group (holding only the anchor) would refuse with the fatal
// INCONSISTENT_GROUP_PROTOCOL, waits (COORDINATOR_LOAD_IN_PROGRESS) until
// the streams client's rejoin brings the topology back, or, with no streams
// client left, until the group is handed back to the broker. Tasks may be
// closed dirty (the members get UNKNOWN_MEMBER_ID, as the README says), but
// no client ever reaches ERROR, the driver verifies every output (SUCCESS),
// and the group ends as the broker's classic group of the two classic
// clients, without the anchor.
func TestStreamsProxySmokeMigrationRestart(t *testing.T) {
	t.Parallel()
	out, ctx, b := smokeBroker(t, 7*time.Minute)
	ss := newStreamshift(ctx, t, out, b.Bootstrap, "smoke-restart", nativeTestSettings...)
	defer ss.stop()

	client := func(name, version, protocol string) harness.SmokeClient {
		return harness.SmokeClient{Name: name, Version: version, GroupProtocol: protocol}
	}
	restart := func(ctx context.Context, _ harness.SmokeControl) error { return ss.restart(ctx) }
	rep, err := harness.RunKafkaSmokeRoll(ctx, harness.SmokeRollOptions{
		Dir:       filepath.Join(out, "smoke"),
		Bootstrap: ss.listen,
		Admin:     b.Bootstrap,
		Guarantee: "exactly_once_v2",
		Duration:  130 * time.Second,
		Start: []harness.SmokeClient{
			client("c1", harness.Kafka44, "classic"),
			client("c2", harness.Kafka39, "classic"),
		},
		Rolls: []harness.SmokeRoll{
			{Name: "roll c1 to s1 (4.4 streams: takeover), kill -9 streamshift right after the takeover",
				Stop: "c1", Start: client("s1", harness.Kafka44, "streams"),
				After: func(ctx context.Context, _ harness.SmokeControl) error {
					if err := ss.waitLog(ctx, "takeover done", 60*time.Second); err != nil {
						return err
					}
					return ss.restart(ctx)
				}},
			// The streams client is frozen across the restart, so the classic
			// client's rejoin reaches the restarted streamshift first (as in the
			// issue's report) and must wait for the streams client's.
			{Name: "kill -9 streamshift with the 3.9 classic client inside the streams group, the streams client frozen until the classic one rejoined",
				After: func(ctx context.Context, c harness.SmokeControl) error {
					if err := c.Pause("s1"); err != nil {
						return err
					}
					defer c.Resume("s1")
					if err := ss.restart(ctx); err != nil {
						return err
					}
					return ss.waitLog(ctx, "restart recovery: the group is held upstream", 30*time.Second)
				}},
			{Name: "roll s1 to c3 (4.4 classic), kill -9 streamshift as s1 leaves (the hand-back begins)",
				Stop: "s1", Between: restart, Start: client("c3", harness.Kafka44, "classic")},
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
		t.Fatalf("smoke test with streamshift restarted during an online migration (logs in %s): %v", out, err)
	}
	want := []struct {
		protocol string
		classic  int
	}{{"classic stream", 0}, {"classic stream", 0}, {"streams", 1}, {"streams", 1}, {"classic stream", 0}}
	if len(rep.Steps) != len(want) {
		t.Fatalf("%d steps reported, want %d", len(rep.Steps), len(want))
	}
	for i, s := range rep.Steps {
		if s.Protocol != want[i].protocol || s.Classic != want[i].classic {
			t.Errorf("after %s: %s; want a %s group with %d classic members", s.Name, s.Group, want[i].protocol, want[i].classic)
		}
	}
	// What a restart must never cause: a fatal group error, an instance in
	// ERROR (SmokeTestClient prints its state changes).
	if err := checkSmokeClientFiles(filepath.Join(out, "smoke"), "log", "INCONSISTENT_GROUP_PROTOCOL",
		"incompatible with those of existing members", "GROUP_ID_NOT_FOUND", "GroupIdNotFoundException",
		"FENCED_INSTANCE_ID", "UNRELEASED_INSTANCE_ID"); err != nil {
		t.Fatal(err)
	}
	if err := checkSmokeClientFiles(filepath.Join(out, "smoke"), "out", "-> ERROR", "-> PENDING_ERROR"); err != nil {
		t.Fatal(err)
	}
}
