//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/streamshift/streamshift/e2e/harness"
)

// TestStreamsProxySmokeMigration runs Kafka's own Streams smoke test (the
// 4.4 driver and SmokeTestClient: windowed aggregations, suppress, a
// re-keying, a foreign-key join) through streamshift on Kafka 3.9, exactly
// once, while its clients migrate online and back. Two clients start on the
// classic protocol as static members (group.instance.id), one on
// kafka-streams 4.4 and one on 3.9 (same topology). While the driver
// produces, each is closed cleanly and replaced by a 4.4 client with
// group.protocol=streams (the first takes the live classic group over, with
// the static members in it; the 3.9 one is first bounced as a static member
// inside the streams group; the second streams client is a static member
// too), then each of those by a 4.4 classic static member again (the last
// takes the static streams member's instance id and hands the group back to
// the broker). Every roll
// waits for the group to settle (every client RUNNING, the group at rest with
// exactly the running clients). The driver verifies every output topic and
// must print SUCCESS; no task processes on two clients at once (from the
// smoke processors' init and close lines); the clients' logs must show no task closed dirty, no
// TaskMigratedException, no member fenced; after the hand-back the upstream
// group is the broker's classic group of the two static members, without the
// anchor.
func TestStreamsProxySmokeMigration(t *testing.T) {
	t.Parallel()
	out, ctx, b := smokeBroker(t, 8*time.Minute)
	// Sessions that outlast a loaded machine (JVM starts of 8 s, heartbeats
	// late by seconds, other tests running beside this one): a member that
	// keeps running must never lose its session, whether classic upstream,
	// carried over by the takeover with what is left of its session, bounced
	// and rejoining under its instance id, or on the streams protocol. The
	// test waits a whole session only where a stopped static member's
	// classic membership must end (the first and third rolls).
	const session = 30 * time.Second
	addr, stop := startStreamshift(ctx, t, out, b.Bootstrap, "smoke-migration",
		append(slices.Clone(nativeTestSettings), fmt.Sprintf("STREAMSHIFT_STREAMS_SESSION_TIMEOUT_MS=%d", session.Milliseconds()))...)
	defer stop()

	static := func(name, version, protocol, instance string) harness.SmokeClient {
		return harness.SmokeClient{Name: name, Version: version, GroupProtocol: protocol, InstanceID: instance, SessionTimeout: session}
	}
	rep, err := harness.RunKafkaSmokeRoll(ctx, harness.SmokeRollOptions{
		Dir:       filepath.Join(out, "smoke"),
		Bootstrap: addr,
		Admin:     b.Bootstrap,
		Guarantee: "exactly_once_v2",
		// Input long enough that every roll, two of them waiting out a
		// session, happens while the driver produces.
		Duration: 160 * time.Second,
		Start: []harness.SmokeClient{
			static("c1", harness.Kafka44, "classic", "smoke-1"),
			static("c2", harness.Kafka39, "classic", "smoke-2"),
		},
		Rolls: []harness.SmokeRoll{
			{Stop: "c1", Start: static("s1", harness.Kafka44, "streams", "")},
			// A static classic member bounced inside the streams group: it rejoins
			// under its group.instance.id before its session runs out.
			{Stop: "c2", Start: static("c2b", harness.Kafka39, "classic", "smoke-2")},
			// A static streams member. Not "smoke-2": c2b never left its classic
			// membership, so that id stays owned until c2b's session ends and a
			// streams member asking for it gets UNRELEASED_INSTANCE_ID, as on Kafka.
			{Stop: "c2b", Start: static("s2", harness.Kafka44, "streams", "smoke-2s")},
			{Stop: "s1", Start: static("c3", harness.Kafka44, "classic", "smoke-1")},
			// s2 leaves as a static member (epoch -2, tasks kept); a classic
			// static member with its id takes its place, and as the last streams
			// member is gone, the group is handed back.
			{Stop: "s2", Start: static("c4", harness.Kafka44, "classic", "smoke-2s")},
		},
		AfterRolls: func(ctx context.Context) error {
			// Kafka Streams gives each stream thread group.instance.id-<thread>.
			return checkHandedBackStatic(ctx, b.Bootstrap, "SmokeTest", "smoke-1-1", "smoke-2s-1")
		},
		Logf: t.Logf,
	})
	if rep != nil {
		writeSmokeRollReport(t, filepath.Join(out, "report.md"), rep)
	}
	if err != nil {
		t.Fatalf("smoke test with an online migration of its clients (logs in %s): %v", out, err)
	}
	// Where the group was once each step settled: the upstream's classic
	// group, then streamshift's streams group with the classic members still
	// in it, then the upstream's again.
	want := []struct {
		protocol string
		classic  int
	}{{"classic stream", 0}, {"classic stream", 0}, {"streams", 1}, {"streams", 1}, {"streams", 0}, {"streams", 1}, {"classic stream", 0}}
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
}

// smokeBroker starts a smoke migration test: its output dir, a context
// bounding the whole test, and a Kafka 3.9 broker, stopped when the test
// ends.
func smokeBroker(t *testing.T, limit time.Duration, overrides ...string) (string, context.Context, *harness.Broker) {
	out, err := harness.OutDir(t.Name())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	t.Cleanup(cancel)
	b, err := harness.StartBroker(ctx, harness.BrokerOptions{Version: harness.Kafka39, Dir: filepath.Join(out, "broker"), Overrides: overrides})
	if err != nil {
		t.Fatalf("start broker: %v", err)
	}
	t.Cleanup(func() { _ = b.Stop() })
	return out, ctx, b
}

// checkHandedBackStatic: the upstream group is the broker's classic Streams
// group again (protocol "stream"), Stable, and its members are exactly the
// static members with the given instance ids: no anchor, no leftover.
func checkHandedBackStatic(ctx context.Context, upstream, group string, instances ...string) error {
	g, err := describeUpstream(ctx, upstream, group)
	if err != nil {
		return err
	}
	var got []string
	for _, m := range g.Members {
		id := "(dynamic " + m.MemberID + ")"
		if m.InstanceID != nil {
			id = *m.InstanceID
		}
		got = append(got, id)
	}
	sort.Strings(got)
	want := append([]string(nil), instances...)
	sort.Strings(want)
	if g.State != "Stable" || g.Protocol != "stream" || strings.Join(got, " ") != strings.Join(want, " ") {
		return fmt.Errorf("upstream group %s: state %s protocol %q, members %v; want Stable, stream, static members %v", group, g.State, g.Protocol, got, want)
	}
	return nil
}

// checkSmokeClientLogs fails on what the migration must never cause in the
// clients' Kafka Streams logs (as migrationRoll.check does for the count app):
// a task closed dirty, TaskMigratedException, lost tasks, a member fenced.
func checkSmokeClientLogs(dir string) error {
	return checkSmokeClientFiles(dir, "log", "Closed dirty", "TaskMigratedException", "as lost", "UNKNOWN_MEMBER_ID", "ILLEGAL_GENERATION",
		"Unknown member", "Illegal generation", "FENCED_INSTANCE_ID", "UNRELEASED_INSTANCE_ID")
}

// checkSmokeClientFiles fails on a line of any smoke client's file (log or
// out, not the driver's) containing one of bad.
func checkSmokeClientFiles(dir, file string, bad ...string) error {
	logs, err := filepath.Glob(filepath.Join(dir, "*", file))
	if err != nil {
		return err
	}
	checked := 0
	for _, f := range logs {
		if filepath.Base(filepath.Dir(f)) == "driver" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		checked++
		corrupted := corruptedTasks(string(b))
		for _, line := range strings.Split(string(b), "\n") {
			for _, w := range bad {
				if strings.Contains(line, w) && !(w == "Closed dirty" && corrupted[dirtyTask(line)]) {
					return fmt.Errorf("%s: %q in %s", f, w, line)
				}
			}
		}
	}
	if checked == 0 {
		return fmt.Errorf("no smoke client %s files under %s", file, dir)
	}
	return nil
}

// corruptedTasks is the tasks a Kafka Streams log says it found corrupted
// ("Detected the states of tasks [0_2, 1_2] are corrupted"): under
// exactly-once a store with data and no checkpoint yet (a standby turned
// active before its first checkpoint, e.g. a warm-up whose old owner's
// session ran out meanwhile) is wiped and restored from its changelog, and
// the task is closed dirty on the way. That is Kafka Streams' own recovery,
// with no second owner: its "Closed dirty" line is not a migration fault.
func corruptedTasks(log string) map[string]bool {
	const pre, post = "Detected the states of tasks [", "] are corrupted"
	out := map[string]bool{}
	for _, line := range strings.Split(log, "\n") {
		i := strings.Index(line, pre)
		if i < 0 {
			continue
		}
		rest := line[i+len(pre):]
		j := strings.Index(rest, post)
		if j < 0 {
			continue
		}
		for _, id := range strings.Split(rest[:j], ",") {
			out[strings.TrimSpace(id)] = true
		}
	}
	return out
}

// dirtyTask is the task of a "task [0_2] Closed dirty" line ("" if none).
func dirtyTask(line string) string {
	i := strings.Index(line, "task [")
	if i < 0 {
		return ""
	}
	rest := line[i+len("task ["):]
	j := strings.Index(rest, "]")
	if j < 0 {
		return ""
	}
	return rest[:j]
}

func writeSmokeRollReport(t *testing.T, path string, rep *harness.SmokeRollReport) {
	var sb strings.Builder
	fmt.Fprintf(&sb, "# %s\n\n| step | at (from the driver's start) | settled after |\n|---|---|---|\n", t.Name())
	for _, s := range rep.Steps {
		fmt.Fprintf(&sb, "| %s | %.1f s | %.1f s |\n", s.Name, s.At.Seconds(), s.Settled.Seconds())
		t.Logf("%-60s at %6.1fs settled after %5.1fs: %s", s.Name, s.At.Seconds(), s.Settled.Seconds(), s.Group)
	}
	longest := "none"
	if len(rep.Overlaps) > 0 {
		longest = rep.Overlaps[0].String()
	}
	fmt.Fprintf(&sb, "\ninput ended at %.1f s; run %.1f s; %d changes of the clients' processing tasks, longest overlap: %s\n",
		rep.InputEnd.Seconds(), rep.Total.Seconds(), rep.TaskChanges, longest)
	t.Logf("input ended at %.1fs; run %.1fs; %d changes of the clients' processing tasks, longest overlap: %s",
		rep.InputEnd.Seconds(), rep.Total.Seconds(), rep.TaskChanges, longest)
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		t.Error(err)
	}
}
