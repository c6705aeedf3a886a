//go:build e2e

package e2e_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamshift/streamshift/capture"
	"github.com/streamshift/streamshift/e2e/harness"
)

// TestOneAddressFailoverBenchmark: what an instance's death costs a Kafka
// Streams app behind the one address (issue #27, docs/one-address.md §8
// step 11), against the restart of a lone instance. Both setups run the
// count app (three Kafka Streams 4.4 instances on the streams protocol,
// exactly once, commit every 100 ms) on Kafka 3.9 under continuous input
// (100 records/s), and kill -9 the streamshift process serving the group
// STREAMSHIFT_BENCH_ROUNDS times (default 2):
//
//   - haproxy: the three instances of TestOneAddressMigration behind
//     HAProxy, all advertising its address, the apps' only bootstrap, on
//     the durable group log. The instance owning the group's log partition
//     is killed and stays dead: its partitions move to a live instance once
//     its session in the instances' upstream group expires
//     (coordinator.instance-session-timeout, 6 s here). It is then started
//     again (a step of its own, not measured) before the next round.
//   - single: one instance (no cluster) on the durable log, killed and
//     started again at once on the same ports.
//
// Measured per kill: the output gap (the longest time without a new output
// record, from the kill step until the next step, as the scenarios report
// it) and the time from the kill until every member of the group (its
// describe just before the kill) got a StreamsGroupHeartbeat answered
// without error again, from the instances' capture of the group's
// heartbeats (one JSON-lines file they all append to). Members heartbeat
// every 5 s (the default streams.heartbeat.interval.ms), so that time is at
// least the wait for each member's next heartbeat.
//
// Opt-in, as the other benchmarks: STREAMSHIFT_BENCH=1. Not parallel: it
// measures.
func TestOneAddressFailoverBenchmark(t *testing.T) {
	if os.Getenv("STREAMSHIFT_BENCH") == "" {
		t.Skip("benchmark: set STREAMSHIFT_BENCH=1")
	}
	haproxy := needHAProxy(t)
	rounds := envInt("STREAMSHIFT_BENCH_ROUNDS", 2)
	runs := []*failoverRun{{setup: "haproxy"}, {setup: "single"}}
	runs[0].scenario = runs[0].behindHAProxy(haproxy, rounds)
	runs[1].scenario = runs[1].restartedInPlace(rounds)
	t.Logf("load average before: %s", loadAvg())
	for _, fr := range runs {
		if !t.Run(fr.setup, fr.run) {
			t.FailNow()
		}
	}
	t.Logf("load average after: %s", loadAvg())
	var rep strings.Builder
	fmt.Fprintf(&rep, "kill -9 of the instance serving the group, %d rounds per setup (Kafka 3.9; three Kafka Streams 4.4 instances, streams protocol, exactly once, 100 records/s)\n", rounds)
	fmt.Fprintf(&rep, "| setup | round | output gap | longest gap on one partition | every member heartbeats again |\n|---|---|---|---|---|\n")
	for _, fr := range runs {
		for i, k := range fr.kills {
			fmt.Fprintf(&rep, "| %s | %d | %s | %s | %s |\n", fr.setup, i+1, k.gap.Round(10*time.Millisecond), k.partGap.Round(10*time.Millisecond), k.heartbeats.Round(10*time.Millisecond))
		}
	}
	lb, single := runs[0].medians(), runs[1].medians()
	fmt.Fprintf(&rep, "medians: haproxy output gap %s, heartbeats %s; single output gap %s, heartbeats %s\n",
		lb.gap.Round(10*time.Millisecond), lb.heartbeats.Round(10*time.Millisecond), single.gap.Round(10*time.Millisecond), single.heartbeats.Round(10*time.Millisecond))
	fmt.Fprintf(&rep, "ratios haproxy/single: output gap %.2f×, heartbeats %.2f×\n",
		lb.gap.Seconds()/single.gap.Seconds(), lb.heartbeats.Seconds()/single.heartbeats.Seconds())
	t.Log("\n" + rep.String())
	out, err := harness.OutDir(t.Name())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "report.md"), []byte(rep.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// failoverGroup is the count app's group (harness.AppOptions' default
// application id).
const failoverGroup = "e2e-count"

// failoverRun is one setup of the benchmark: its scenario and what each
// kill cost.
type failoverRun struct {
	setup    string
	scenario harness.Scenario
	capture  string // the capture file its instances append to
	kills    []failoverKill
}

// failoverKill is one kill -9: when, the group's members then, and what it
// cost.
type failoverKill struct {
	at         time.Time
	members    []string
	step       int // its index in the scenario's steps
	gap        time.Duration
	partGap    time.Duration
	heartbeats time.Duration
}

// captureEnv makes an instance capture the group's heartbeats to the run's
// file (opened for appending: the instances of a run share it).
func (fr *failoverRun) captureEnv(dir string) []string {
	fr.capture = filepath.Join(dir, "heartbeats.jsonl")
	return []string{"STREAMSHIFT_CAPTURE_FILE=" + fr.capture, "STREAMSHIFT_CAPTURE_GROUPS=" + failoverGroup,
		"STREAMSHIFT_CAPTURE_API_KEYS=StreamsGroupHeartbeat"}
}

// scenarioBase is the count app's scenario both setups share.
func (fr *failoverRun) scenarioBase() harness.Scenario {
	return harness.Scenario{
		Name:          "failover (" + fr.setup + ")",
		Broker:        harness.Kafka39,
		AppBuild:      harness.App44,
		GroupProtocol: "streams",
		Guarantee:     "exactly_once_v2",
		// Longer than a failover: the output gap is measured until the
		// next step.
		Hold:  25 * time.Second,
		Steps: []harness.Step{harness.StartInstances("a1", "a2", "a3")},
	}
}

// killStep kills the instance kill9 picks, after describing the group
// through seed (the members that must heartbeat again).
func (fr *failoverRun) killStep(name string, seed func() string, kill9 func(ctx context.Context) error, index int) harness.Step {
	return harness.Step{Name: name, Do: func(ctx context.Context, r *harness.Run) error {
		g, err := describeStreamsGroup(ctx, seed(), failoverGroup)
		if err != nil {
			return err
		}
		if g.ErrorCode != 0 || len(g.Members) == 0 {
			return fmt.Errorf("describe %s before the kill: error %d, %d members", failoverGroup, g.ErrorCode, len(g.Members))
		}
		k := failoverKill{at: time.Now(), step: index}
		for _, m := range g.Members {
			k.members = append(k.members, m.MemberID)
		}
		if err := kill9(ctx); err != nil {
			return err
		}
		fr.kills = append(fr.kills, k)
		return nil
	}}
}

// behindHAProxy: the three instances behind HAProxy; each round kills the
// group's owner, then starts it again.
func (fr *failoverRun) behindHAProxy(haproxy string, rounds int) harness.Scenario {
	sc := fr.scenarioBase()
	var c *ssCluster
	var lb *harness.HAProxy
	var servers []harness.HAProxyServer
	var bootstrap string
	sc.Route = func(ctx context.Context, r *harness.Run) (string, error) {
		var err error
		env := append(slices.Clone(nativeTestSettings), fr.captureEnv(r.Dir)...)
		if c, err = startSSCluster(ctx, r.T, r.Dir, r.Broker.Bootstrap, oneAddress, env...); err != nil {
			return "", err
		}
		for i, h := range c.hosts {
			servers = append(servers, harness.HAProxyServer{Name: fmt.Sprintf("s%d", i+1), Host: h, AdminPort: c.port + 2})
		}
		if lb, err = harness.StartHAProxy(ctx, harness.HAProxyOptions{Bin: haproxy, Dir: filepath.Join(r.Dir, "haproxy"), Bind: oneAddress,
			Ports: []int{c.port, c.port + 1}, Servers: servers}); err != nil {
			return "", err
		}
		r.T.Cleanup(func() { _ = lb.Stop() })
		if err := lb.WaitServers(ctx, "UP", "s1", "s2", "s3"); err != nil {
			return "", err
		}
		bootstrap = net.JoinHostPort(oneAddress, strconv.Itoa(c.port))
		return bootstrap, nil
	}
	killed := -1
	for range rounds {
		sc.Steps = append(sc.Steps,
			fr.killStep("kill -9 the owner", func() string { return bootstrap }, func(ctx context.Context) error {
				o, err := c.owner(ctx, 0, failoverGroup)
				if err != nil {
					return err
				}
				c.procs[o].kill9()
				killed = o
				return lb.WaitServers(ctx, "DOWN", servers[o].Name)
			}, len(sc.Steps)),
			harness.Step{Name: "start the killed instance again", Do: func(ctx context.Context, r *harness.Run) error {
				if err := c.procs[killed].start(ctx); err != nil {
					return err
				}
				if err := c.settled(ctx, 0, 1, 2); err != nil {
					return err
				}
				return lb.WaitServers(ctx, "UP", servers[killed].Name)
			}})
	}
	return sc
}

// restartedInPlace: one instance on the durable log, killed and started
// again on the same ports each round.
func (fr *failoverRun) restartedInPlace(rounds int) harness.Scenario {
	sc := fr.scenarioBase()
	var ss *streamshiftProc
	sc.Route = func(ctx context.Context, r *harness.Run) (string, error) {
		env := append(slices.Clone(nativeTestSettings), "STREAMSHIFT_COORDINATOR_DURABLE_LOG=true", "STREAMSHIFT_COORDINATOR_CLUSTER_ID=e2e-single")
		ss = newStreamshift(ctx, r.T, r.Dir, r.Broker.Bootstrap, "single", append(env, fr.captureEnv(r.Dir)...)...)
		r.T.Cleanup(ss.stop)
		return ss.listen, nil
	}
	for range rounds {
		sc.Steps = append(sc.Steps, fr.killStep("kill -9 streamshift, start it again", func() string { return ss.listen },
			func(ctx context.Context) error {
				ss.kill9()
				return ss.start(ctx)
			}, len(sc.Steps)))
	}
	return sc
}

// run runs the setup's scenario (its output verified exactly once), then
// reads each kill's output gaps from its report and the members'
// heartbeats from the capture.
func (fr *failoverRun) run(t *testing.T) {
	rep := harness.RunScenario(t, fr.scenario)
	beats, err := readHeartbeats(fr.capture)
	if err != nil {
		t.Fatal(err)
	}
	for i := range fr.kills {
		k := &fr.kills[i]
		k.gap, k.partGap = rep.Steps[k.step].OutputGap, rep.Steps[k.step].PartGap
		if k.heartbeats, err = beats.allAgain(k.at, k.members); err != nil {
			t.Errorf("kill %d: %v", i+1, err)
		}
		t.Logf("%s kill %d: output gap %s (one partition %s), every member heartbeats again after %s", fr.setup, i+1,
			k.gap.Round(time.Millisecond), k.partGap.Round(time.Millisecond), k.heartbeats.Round(time.Millisecond))
	}
}

func (fr *failoverRun) medians() failoverKill {
	var gaps, beats []time.Duration
	for _, k := range fr.kills {
		gaps, beats = append(gaps, k.gap), append(beats, k.heartbeats)
	}
	return failoverKill{gap: medianOf(gaps), heartbeats: medianOf(beats)}
}

// heartbeats are the times of each member's StreamsGroupHeartbeats
// answered without error, in the order captured (the instances' lines
// interleave).
type heartbeats map[string][]time.Time

// readHeartbeats reads a capture file of StreamsGroupHeartbeat exchanges.
func readHeartbeats(file string) (heartbeats, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	hb := heartbeats{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var l capture.Line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if l.Type != "exchange" || l.APIName != "StreamsGroupHeartbeat" || len(l.ErrorCodes) > 0 || len(l.Response) == 0 {
			continue
		}
		var req struct {
			MemberID string `json:"memberId"`
		}
		if err := json.Unmarshal(l.Request, &req); err != nil {
			return nil, fmt.Errorf("%s: request: %w", file, err)
		}
		hb[req.MemberID] = append(hb[req.MemberID], l.Wall)
	}
	return hb, sc.Err()
}

// allAgain is the time from at until the last of members got its first
// heartbeat after at answered without error.
func (hb heartbeats) allAgain(at time.Time, members []string) (time.Duration, error) {
	var last time.Duration
	for _, m := range members {
		first := time.Duration(-1)
		for _, w := range hb[m] {
			if d := w.Sub(at); d > 0 && (first < 0 || d < first) {
				first = d
			}
		}
		if first < 0 {
			return 0, fmt.Errorf("member %s has no heartbeat answered without error after the kill", m)
		}
		last = max(last, first)
	}
	return last, nil
}
