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
// once, while its static-membership clients migrate online and back (issue
// #28, docs/fast-roll.md §2 "Static members, both directions"). Two clients
// start on the classic protocol as static members (group.instance.id
// smoke-1 and smoke-2), one on kafka-streams 4.4 and one on 3.9 (same
// topology). While the driver produces, each is closed cleanly and replaced
// by a 4.4 client with group.protocol=streams, then each of those by a 4.4
// classic client again (the last one hands the group back to the broker);
// the 3.9 one is first bounced as a static member inside the streams group.
// Every successor keeps its predecessor's group.instance.id across the
// protocol change, and its state directory. No roll waits for a session: a
// streams join replaces the classic static member holding its instance id at
// once (the takeover's too), and a classic join takes the place of the
// streams static member that left with epoch -2. Every roll waits for the
// group to settle (every client RUNNING, the group at rest with exactly the
// running clients). The driver verifies every output topic and must print
// SUCCESS; no task processes on two clients at once (from the smoke
// processors' init and close lines); the clients' logs show no task closed
// dirty, no TaskMigratedException, no member fenced, no
// UNRELEASED_INSTANCE_ID or FENCED_INSTANCE_ID; streamshift's log shows each
// cross-protocol roll as a replacement of the instance's member; after the
// hand-back the upstream group is the broker's classic group of the two
// static members, without the anchor.
func TestStreamsProxySmokeMigration(t *testing.T) {
	t.Parallel()
	out, ctx, b := smokeBroker(t, 8*time.Minute)
	// Sessions that outlast a loaded machine (JVM starts of 8 to 35 s,
	// heartbeats late by seconds, other tests running beside this one): a
	// member that keeps running must never lose its session, whether classic
	// upstream, carried over by the takeover with what is left of its
	// session, bounced and rejoining under its instance id, or on the streams
	// protocol; and a stopped one must still be there when its successor
	// joins (a 30 s session ran out first at load 50), or there is nothing to
	// replace. No roll waits for one: the replacements end the stopped
	// members. 60 s is Kafka's largest streams session by default.
	const session = 60 * time.Second
	addr, stop := startStreamshift(ctx, t, out, b.Bootstrap, "smoke-migration",
		append(slices.Clone(nativeTestSettings), fmt.Sprintf("STREAMSHIFT_STREAMS_SESSION_TIMEOUT_MS=%d", session.Milliseconds()))...)
	defer stop()

	// static is a client with a group.instance.id, on the state directory
	// of the client it succeeds (stateOf, "" for a first start).
	static := func(name, version, protocol, instance, stateOf string) harness.SmokeClient {
		return harness.SmokeClient{Name: name, Version: version, GroupProtocol: protocol, InstanceID: instance, SessionTimeout: session, StateOf: stateOf}
	}
	rep, err := harness.RunKafkaSmokeRoll(ctx, harness.SmokeRollOptions{
		Dir:       filepath.Join(out, "smoke"),
		Bootstrap: addr,
		Admin:     b.Bootstrap,
		Guarantee: "exactly_once_v2",
		// Input long enough that all five rolls (a JVM start and one
		// assignment each: 63 s in all at load 18, 24-30 s each at load 50;
		// 168 s in all in a CI run beside the one-address test) happen
		// while the driver produces.
		Duration: 200 * time.Second,
		Start: []harness.SmokeClient{
			static("c1", harness.Kafka44, "classic", "smoke-1", ""),
			static("c2", harness.Kafka39, "classic", "smoke-2", ""),
		},
		Rolls: []harness.SmokeRoll{
			// The takeover: s1's join carries the upstream classic members over
			// and replaces c1's, which holds its instance id.
			{Stop: "c1", Start: static("s1", harness.Kafka44, "streams", "smoke-1", "c1")},
			// A static classic member bounced inside the streams group: it rejoins
			// under its group.instance.id before its session runs out.
			{Stop: "c2", Start: static("c2b", harness.Kafka39, "classic", "smoke-2", "c2")},
			// c2b never left its classic membership: the streams join with its
			// instance id replaces it (on Kafka, UNRELEASED_INSTANCE_ID).
			{Stop: "c2b", Start: static("s2", harness.Kafka44, "streams", "smoke-2", "c2b")},
			// s1 leaves as a static member (epoch -2, tasks kept); c3 takes its place.
			{Stop: "s1", Start: static("c3", harness.Kafka44, "classic", "smoke-1", "s1")},
			// The same for s2, and as the last streams member is gone, the group
			// is handed back.
			{Stop: "s2", Start: static("c4", harness.Kafka44, "classic", "smoke-2", "s2")},
		},
		AfterRolls: func(ctx context.Context) error {
			// Kafka Streams gives each stream thread group.instance.id-<thread>.
			return checkHandedBackStatic(ctx, b.Bootstrap, "SmokeTest", "smoke-1-1", "smoke-2-1")
		},
		Logf: t.Logf,
	})
	if rep != nil {
		writeSmokeRollReport(t, filepath.Join(out, "report.md"), rep)
	}
	if err != nil {
		// The logs' checks often say why (an instance id refused, say).
		t.Fatalf("smoke test with an online migration of its clients (logs in %s): %v; the clients' logs: %v; streamshift's log: %v", out, err,
			checkSmokeClientLogs(filepath.Join(out, "smoke")), checkReplacedByInstance(filepath.Join(out, "streamshift-1.log"), "smoke-1-1", "smoke-2-1"))
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
	if err := checkReplacedByInstance(filepath.Join(out, "streamshift-1.log"), "smoke-1-1", "smoke-2-1"); err != nil {
		t.Fatal(err)
	}
}

// checkReplacedByInstance: streamshift's log shows, for each instance id,
// both protocol changes as replacements of the instance's member: a streams
// join replacing the classic member that held the id (replace.go's line,
// "replaced by identity (instance)"), then later a classic join taking the
// place of the streams member that held it (the static replacement line,
// heartbeat_member.go).
func checkReplacedByInstance(path string, instances ...string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	log := string(b)
	for _, id := range instances {
		toStreams := fmt.Sprintf("Member with instance id %s joins the streams group using the streams protocol", id)
		i := strings.Index(log, toStreams)
		if i < 0 {
			return fmt.Errorf("%s: no %q: the streams join with instance id %s did not replace its classic member (replaced by identity (instance))", path, toStreams, id)
		}
		toClassic := fmt.Sprintf("Static member with instance id %s re-joins the streams group using the classic protocol", id)
		if !strings.Contains(log[i:], toClassic) {
			return fmt.Errorf("%s: no %q after the replacement by the streams member: the classic join with instance id %s did not replace it", path, toClassic, id)
		}
	}
	return nil
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
// a task closed dirty, TaskMigratedException, lost tasks, a member fenced, an
// instance id fenced or refused. The clients do not always name the error
// code: the classic consumer logs the error's message or its own sentence
// (AbstractCoordinator, ConsumerCoordinator), the streams one its own
// (StreamsGroupHeartbeatRequestManager), hence the phrases.
func checkSmokeClientLogs(dir string) error {
	return checkSmokeClientFiles(dir, "log", "Closed dirty", "TaskMigratedException", "as lost", "UNKNOWN_MEMBER_ID", "ILLEGAL_GENERATION",
		"Unknown member", "Illegal generation", "FENCED_INSTANCE_ID", "UNRELEASED_INSTANCE_ID",
		"FencedInstanceId", "UnreleasedInstanceId", "fenced by another instance", "fenced by its group instance id",
		"fenced exception for group.instance.id", "The instance ID is still used by another member",
		"another consumer with the same group.instance.id", "failed because instance id")
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
