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
// STREAMSHIFT_BENCH_ROUNDS times (default 3):
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
// it); the time until the group is served again (a StreamsGroupDescribe
// through the apps' bootstrap, every 100 ms from the kill, answered without
// error); and the time until every member of the group (its describe just
// before the kill) got a StreamsGroupHeartbeat answered without error
// again, with the heartbeats answered with an error meanwhile, from the
// instances' capture of the group's heartbeats (one JSON-lines file they
// all append to). Members heartbeat every 5 s (the default
// streams.heartbeat.interval.ms) and sooner after an error: when the group
// is served again before a member's next heartbeat is due, that member's
// time is the wait for it.
//
// Opt-in, as the other benchmarks: STREAMSHIFT_BENCH=1. Not parallel: it
// measures.
func TestOneAddressFailoverBenchmark(t *testing.T) {
	harness.NeedBench(t)
	haproxy := needHAProxy(t)
	rounds := envInt("STREAMSHIFT_BENCH_ROUNDS", 3)
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
	ms := func(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
	var rep strings.Builder
	fmt.Fprintf(&rep, "kill -9 of the instance serving the group, %d rounds per setup (Kafka 3.9; three Kafka Streams 4.4 instances, streams protocol, exactly once, 100 records/s)\n\n", rounds)
	fmt.Fprintf(&rep, "| setup | round | output gap | longest gap on one partition | group served again | every member heartbeats again | heartbeats failed meanwhile |\n|---|---|---|---|---|---|---|\n")
	for _, fr := range runs {
		for i, k := range fr.kills {
			fmt.Fprintf(&rep, "| %s | %d | %s | %s | %s | %s | %d |\n", fr.setup, i+1, ms(k.gap), ms(k.partGap), ms(k.served), ms(k.heartbeats), k.failed)
		}
	}
	lb, single := runs[0].medians(), runs[1].medians()
	for _, m := range []struct {
		name string
		k    failoverKill
	}{{"haproxy", lb}, {"single", single}} {
		fmt.Fprintf(&rep, "\nmedians %s: output gap %s, group served again %s, every member heartbeats again %s", m.name, ms(m.k.gap), ms(m.k.served), ms(m.k.heartbeats))
	}
	fmt.Fprintf(&rep, "\nratios haproxy/single: output gap %.2f×, group served again %.2f×, every member heartbeats again %.2f×\n",
		lb.gap.Seconds()/single.gap.Seconds(), lb.served.Seconds()/single.served.Seconds(), lb.heartbeats.Seconds()/single.heartbeats.Seconds())
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
	served     time.Duration // kill → the group described without error (probeGroup)
	failed     int           // heartbeats answered with an error meanwhile
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
		probed := make(chan error, 1)
		go func() {
			var err error
			k.served, err = probeGroup(ctx, seed, k.at)
			probed <- err
		}()
		err = kill9(ctx)
		if perr := <-probed; err == nil {
			err = perr
		}
		if err != nil {
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
		k.failed = beats.failedIn(k.at, k.heartbeats)
		t.Logf("%s kill %d: output gap %s (one partition %s), the group served again after %s, every member heartbeats again after %s (%d heartbeats failed meanwhile)",
			fr.setup, i+1, k.gap.Round(time.Millisecond), k.partGap.Round(time.Millisecond), k.served.Round(time.Millisecond), k.heartbeats.Round(time.Millisecond), k.failed)
	}
}

func (fr *failoverRun) medians() failoverKill {
	var gaps, served, beats []time.Duration
	for _, k := range fr.kills {
		gaps, served, beats = append(gaps, k.gap), append(served, k.served), append(beats, k.heartbeats)
	}
	return failoverKill{gap: medianOf(gaps), served: medianOf(served), heartbeats: medianOf(beats)}
}

// heartbeats are the times of each member's StreamsGroupHeartbeats
// answered without error, and of those answered with one (any member), in
// the order captured (the instances' lines interleave).
type heartbeats struct {
	ok     map[string][]time.Time
	failed []time.Time
}

// readHeartbeats reads a capture file of StreamsGroupHeartbeat exchanges.
func readHeartbeats(file string) (heartbeats, error) {
	f, err := os.Open(file)
	if err != nil {
		return heartbeats{}, err
	}
	defer f.Close()
	hb := heartbeats{ok: map[string][]time.Time{}}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var l capture.Line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return heartbeats{}, fmt.Errorf("%s: %w", file, err)
		}
		if l.Type != "exchange" || l.APIName != "StreamsGroupHeartbeat" || len(l.Response) == 0 {
			continue
		}
		if len(l.ErrorCodes) > 0 {
			hb.failed = append(hb.failed, l.Wall)
			continue
		}
		var req struct {
			MemberID string `json:"memberId"`
		}
		if err := json.Unmarshal(l.Request, &req); err != nil {
			return heartbeats{}, fmt.Errorf("%s: request: %w", file, err)
		}
		hb.ok[req.MemberID] = append(hb.ok[req.MemberID], l.Wall)
	}
	return hb, sc.Err()
}

// allAgain is the time from at until the last of members got its first
// heartbeat after at answered without error.
func (hb heartbeats) allAgain(at time.Time, members []string) (time.Duration, error) {
	var last time.Duration
	for _, m := range members {
		first := time.Duration(-1)
		for _, w := range hb.ok[m] {
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

// failedIn counts the heartbeats answered with an error from at for d.
func (hb heartbeats) failedIn(at time.Time, d time.Duration) int {
	n := 0
	for _, w := range hb.failed {
		if !w.Before(at) && w.Sub(at) <= d {
			n++
		}
	}
	return n
}

// probeGroup describes the group through seed every 100 ms from at until
// an answer without error names members, and returns how long that took:
// when the group can be served again, whatever the members' heartbeat
// interval.
func probeGroup(ctx context.Context, seed func() string, at time.Time) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		pctx, pcancel := context.WithTimeout(ctx, time.Second)
		g, err := describeStreamsGroup(pctx, seed(), failoverGroup)
		pcancel()
		if err == nil && g.ErrorCode == 0 && len(g.Members) > 0 {
			return time.Since(at), nil
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("the group was not described without error after the kill: last %v, error code %d", err, g.ErrorCode)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
