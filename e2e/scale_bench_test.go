//go:build e2e

package e2e_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/streamshift/streamshift/e2e/harness"
)

// TestScaleBenchmark: a fleet of Kafka Streams members heartbeating through
// streamshift (issue #43, items 1 and 4). G groups × M members (one
// connection each, as a Kafka Streams client has) of a topology reading one
// topic of P partitions, in a member process of their own
// (scale_bench_loadgen_test.go), against kfake in a broker process of its
// own or, with STREAMSHIFT_SCALE_BROKER=kafka, a real Apache Kafka 3.9
// broker (harness.StartBroker, scale_bench_broker_test.go: the headline
// run), so the proxy's CPU (/proc/<pid>/stat, user+system) is the proxy's
// alone either way. One instance, or three (STREAMSHIFT_SCALE_INSTANCES=3, startSSCluster:
// members spread over the three addresses, a heartbeat hops to its group's
// owner). In order:
//
//   - idle: the proxy's CPU with nothing connected (subtracted below);
//   - floor: one connection per member sending Metadata (a request the
//     proxy forwards) at the heartbeat interval: the same request rate as
//     steady, the cost of any forwarded request;
//   - storm: every member joins at once; the time until every group is
//     Stable on the proxies' /metrics, and each member's join round trip;
//   - steady: each member heartbeats at its group's interval (5 s);
//   - closed: each member heartbeats back to back, one in flight;
//   - churn: steady, and STREAMSHIFT_SCALE_CHURN_PER_MIN members a minute
//     leave and join again as new members.
//
// Per phase: the proxies' CPU per 1,000 requests above idle, the ratio to
// the floor, round-trip p50/p99/max, and the requests sent upstream per
// request served, by kind (streamshift_upstream_requests_total{api}; what
// kfake received, its check, in brackets: "n/a" for Kafka, whose request
// metrics are JMX's). Per fleet: RSS and goroutines per member (after steady, against
// the fresh proxy) and members fenced (streamshift_group_fencings_total).
// It writes a ready-to-paste Markdown table to
// e2e/out/TestScaleBenchmark/report.md and asserts nothing. Opt-in:
//
//	STREAMSHIFT_BENCH=1 STREAMSHIFT_SCALE_GROUPS=100 STREAMSHIFT_SCALE_MEMBERS=10 \
//	  go test -tags e2e -count=1 -v -timeout 60m -run 'TestScaleBenchmark$' ./e2e/
//
// Knobs: STREAMSHIFT_SCALE_BROKER (kfake, or kafka: needs `make e2e-build`
// and Java), STREAMSHIFT_SCALE_GROUPS (100), _MEMBERS (10 per group),
// _PARTITIONS (10), _INSTANCES (1 or 3), _SECONDS (30, each measured phase),
// _CLOSED_SECONDS (10), _CHURN_PER_MIN (60). STREAMSHIFT_BENCH_PROFILE=1
// saves a CPU profile of (the first) proxy during steady;
// STREAMSHIFT_BENCH_PIN=1 puts the proxy (one instance) on a core of its own. Each member costs
// the proxy two descriptors (its connection and its upstream connection).
// Not parallel: it measures.
func TestScaleBenchmark(t *testing.T) {
	harness.NeedBench(t)
	groups := envInt("STREAMSHIFT_SCALE_GROUPS", 100)
	perGroup := envInt("STREAMSHIFT_SCALE_MEMBERS", 10)
	partitions := envInt("STREAMSHIFT_SCALE_PARTITIONS", 10)
	instances := envInt("STREAMSHIFT_SCALE_INSTANCES", 1)
	window := time.Duration(envInt("STREAMSHIFT_SCALE_SECONDS", 30)) * time.Second
	closedFor := time.Duration(envInt("STREAMSHIFT_SCALE_CLOSED_SECONDS", 10)) * time.Second
	churnPerMin := envInt("STREAMSHIFT_SCALE_CHURN_PER_MIN", 60)
	idleFor := 10 * time.Second
	const interval = 5 * time.Second // streams heartbeat interval's default
	members := groups * perGroup
	if instances != 1 && instances != 3 {
		t.Fatalf("STREAMSHIFT_SCALE_INSTANCES=%d: 1 or 3", instances)
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil && lim.Max < uint64(2*members/instances+1000) {
		t.Logf("descriptor limit %d: %d members need about %d at one instance", lim.Max, members, 2*members/instances+1000)
	}
	out, err := harness.OutDir(t.Name())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Minute)
	defer cancel()
	loadStart := loadAvg()
	// STREAMSHIFT_BENCH_PIN=1 (one instance): the proxy on CPU 1, the
	// members and the broker on CPU 0, so its latency is that of a proxy
	// with a core of its own (item 4's "on one core").
	if instances != 1 && os.Getenv("STREAMSHIFT_BENCH_PIN") != "" {
		t.Fatal("STREAMSHIFT_BENCH_PIN: one instance only")
	}
	unpin, pinned := pinBenchProxies(t)
	defer unpin()

	broker := startScaleBroker(ctx, t, out, scaleBrokerKind(), partitions)
	defer broker.stop()

	var tgt scaleTarget
	if instances == 1 {
		bp := startBenchProxy(t, out, "proxy", filepath.Dir(harness.Root()), broker.addr, true)
		defer bp.stop()
		// Members connect to the broker's node port (listen port + 1 +
		// node id), as a Kafka Streams client heartbeats at its
		// coordinator's address, not at the bootstrap (where streamshift
		// cannot batch a principal's authorization answers by broker).
		host, port, _ := net.SplitHostPort(bp.addr)
		p, _ := strconv.Atoi(port)
		tgt = scaleTarget{pids: []int{bp.cmd.Process.Pid}, admins: []string{bp.admin}, addrs: []string{net.JoinHostPort(host, strconv.Itoa(p+1+broker.nodeID))}}
	} else {
		c, err := startScaleCluster(ctx, t, out, broker.addr, broker.nodeID)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range c.procs {
			tgt.pids = append(tgt.pids, p.cmd.Process.Pid)
			tgt.admins = append(tgt.admins, c.admin[i])
			tgt.addrs = append(tgt.addrs, net.JoinHostPort(c.hosts[i], strconv.Itoa(c.port+1)))
		}
	}

	// Idle: nothing connected.
	time.Sleep(2 * time.Second)
	cpu0 := tgt.cpu(t)
	time.Sleep(idleFor)
	idleRate := (tgt.cpu(t) - cpu0) / idleFor.Seconds() // CPU seconds a second
	rss0, gor0 := tgt.rss(t), tgt.metric(t, "go_goroutines", "")

	spec, _ := json.Marshal(scaleJob{Addrs: tgt.addrs, Groups: groups, Members: perGroup})
	gen := startScaleChild(t, out, "members", "TestScaleBenchLoadgen", scaleLoadgenEnv+"="+string(spec))
	defer gen.stop()

	var rows []scalePhase
	measure := func(name string, cmd scaleCmd) scalePhase {
		up0, m0, c0, t0 := broker.counts(t), tgt.byAPI(t, "streamshift_upstream_requests_total"), tgt.cpu(t), time.Now()
		res := gen.do(t, cmd)
		ph := scalePhase{name: name, res: res, cpu: tgt.cpu(t) - c0, took: time.Since(t0)}
		up1, m1 := broker.counts(t), tgt.byAPI(t, "streamshift_upstream_requests_total")
		ph.upstream = map[string]int64{}
		for k, v := range m1 {
			if d := v - m0[k]; d > 0 {
				ph.upstream[k] = d
			}
		}
		if up1 == nil {
			ph.broker = -1 // the broker cannot say
		}
		for k, v := range up1 {
			ph.broker += v - up0[k]
		}
		t.Logf("%-7s %6d requests %7.1f/s  p50 %6.2f ms p99 %6.2f ms max %7.1f ms  errors %d  CPU %.2f s in %.1f s  upstream %v (the broker received %s)",
			name, res.Requests, res.Rate, res.P50, res.P99, res.Max, res.Errors, ph.cpu, ph.took.Seconds(), ph.upstream, brokerReceived(ph))
		return ph
	}

	gen.do(t, scaleCmd{Do: "floor-start", Interval: interval})
	floor := measure("floor", scaleCmd{Do: "steady", For: window})
	gen.do(t, scaleCmd{Do: "floor-stop"})
	rows = append(rows, floor)

	// The storm: every member at once, until every group is Stable.
	fenced0 := tgt.metric(t, "streamshift_group_fencings_total", "")
	stormStart := time.Now()
	stable := make(chan time.Duration, 1)
	go func() {
		for ctx.Err() == nil {
			if n, err := tgt.metricErr("streamshift_groups", `state="Stable"`); err == nil && int(n) == groups {
				stable <- time.Since(stormStart)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	storm := gen.do(t, scaleCmd{Do: "storm"})
	var stormStable time.Duration
	select {
	case stormStable = <-stable:
	case <-time.After(5 * time.Minute):
		t.Errorf("groups not all Stable 5 min after the storm began")
	}
	t.Logf("storm: %d members joined in %.1f s (join p50 %.0f ms, p99 %.0f ms, max %.0f ms, %d errors); all %d groups Stable after %.1f s",
		members, float64(members)/storm.Rate, storm.P50, storm.P99, storm.Max, storm.Errors, groups, stormStable.Seconds())
	time.Sleep(interval + time.Second) // the reports after the storm

	var profWait func() error
	if os.Getenv("STREAMSHIFT_BENCH_PROFILE") != "" {
		profWait = (&benchProxy{admin: tgt.admins[0]}).cpuProfile(filepath.Join(out, "steady.pprof"), min(window, 30*time.Second))
	}
	steady := measure("steady", scaleCmd{Do: "steady", For: window})
	if profWait != nil {
		if err := profWait(); err != nil {
			t.Errorf("profile: %v", err)
		}
	}
	rss1, gor1 := tgt.rss(t), tgt.metric(t, "go_goroutines", "")
	rows = append(rows, steady)
	rows = append(rows, measure("closed", scaleCmd{Do: "closed", For: closedFor}))
	time.Sleep(interval) // back to steady
	rows = append(rows, measure("churn", scaleCmd{Do: "churn", For: window, PerMin: churnPerMin}))
	fenced := tgt.metric(t, "streamshift_group_fencings_total", "") - fenced0
	probes := tgt.metric(t, "streamshift_authorization_probes_total", "")
	loadEnd := loadAvg()

	// The report.
	var rep strings.Builder
	fmt.Fprintf(&rep, "%d groups × %d members (%d members, one connection each), %d partitions, %d instance(s), %s in its own process; load average %s → %s\n\n",
		groups, perGroup, members, partitions, instances, broker.name, loadStart, loadEnd)
	fmt.Fprintf(&rep, "| phase | requests/s | proxy CPU per 1k above idle | × floor | p50 | p99 | max | upstream per request | errors |\n|---|---|---|---|---|---|---|---|---|\n")
	per1k := func(ph scalePhase) float64 {
		if ph.res.Requests == 0 {
			return 0
		}
		return (ph.cpu - idleRate*ph.took.Seconds()) * 1e3 / float64(ph.res.Requests) * 1e3 // ms per 1k
	}
	for _, ph := range rows {
		fmt.Fprintf(&rep, "| %s | %.0f | %.1f ms | %.2f× | %.2f ms | %.2f ms | %.1f ms | %s | %d |\n", ph.name, ph.res.Rate, per1k(ph),
			per1k(ph)/per1k(floor), ph.res.P50, ph.res.P99, ph.res.Max, upstreamPer(ph), ph.res.Errors)
	}
	fmt.Fprintf(&rep, "\nidle: %.1f%% of a core (all instances). Storm: %d members joined at once, all %d groups Stable after %.1f s (join round trip p50 %.0f ms, p99 %.0f ms, max %.0f ms). ",
		idleRate*100, members, groups, stormStable.Seconds(), storm.P50, storm.P99, storm.Max)
	fmt.Fprintf(&rep, "RSS %.0f → %.0f MiB: %.1f KiB per member; goroutines %.0f → %.0f: %.2f per member. Members fenced: %.0f; churned: %d; authorization probes in all: %.0f.\n",
		float64(rss0)/1024, float64(rss1)/1024, float64(rss1-rss0)/float64(members), gor0, gor1, (gor1-gor0)/float64(members), fenced, rows[len(rows)-1].res.Churned, probes)
	if pinned {
		fmt.Fprintf(&rep, "\nPinned: the proxy on CPU %d, the members and the broker on CPU 0.\n", benchProxyCPU)
	}
	t.Log("\n" + rep.String())
	if err := os.WriteFile(filepath.Join(out, "report.md"), []byte(rep.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// scalePhase is one measured phase.
type scalePhase struct {
	name     string
	res      scaleResult
	cpu      float64 // proxies' CPU seconds over the phase
	took     time.Duration
	upstream map[string]int64 // streamshift_upstream_requests_total's increase, by api
	broker   int64            // the requests the broker received (a check of the metric); -1: it cannot say (Kafka)
}

// upstreamPer is the broker's requests per request served, by kind, the
// largest first (kinds under 0.0005 left out).
func upstreamPer(ph scalePhase) string {
	if ph.res.Requests == 0 {
		return "—"
	}
	type kv struct {
		k string
		v float64
	}
	var kvs []kv
	var sum float64
	for k, v := range ph.upstream {
		x := float64(v) / float64(ph.res.Requests)
		sum += x
		if x >= 0.0005 {
			kvs = append(kvs, kv{k, x})
		}
	}
	sort.Slice(kvs, func(i, j int) bool { return kvs[i].v > kvs[j].v })
	parts := []string{fmt.Sprintf("**%.3f** (%s)", sum, brokerPer(ph))}
	for _, e := range kvs {
		parts = append(parts, fmt.Sprintf("%s %.3f", e.k, e.v))
	}
	return strings.Join(parts, ", ")
}

// scaleTarget is the instances under test.
type scaleTarget struct {
	pids   []int
	admins []string // admin listeners (/metrics)
	addrs  []string // where members connect
}

func (tg scaleTarget) cpu(t *testing.T) float64 {
	s, err := procsCPUSeconds(tg.pids)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (tg scaleTarget) rss(t *testing.T) int {
	sum := 0
	for _, p := range tg.pids {
		sum += rssKiB(t, p)
	}
	return sum
}

func (tg scaleTarget) metric(t *testing.T, name, labels string) float64 {
	v, err := tg.metricErr(name, labels)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// byAPI sums the series of a counter labelled api over the instances.
func (tg scaleTarget) byAPI(t *testing.T, name string) map[string]int64 {
	out := map[string]int64{}
	for _, a := range tg.admins {
		resp, err := http.Get("http://" + a + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		s := bufio.NewScanner(resp.Body)
		s.Buffer(make([]byte, 1<<20), 1<<20)
		for s.Scan() {
			series, val, ok := strings.Cut(s.Text(), " ")
			api, found := strings.CutPrefix(series, name+`{api="`)
			if !ok || !found {
				continue
			}
			if v, err := strconv.ParseFloat(val, 64); err == nil {
				out[strings.TrimSuffix(api, `"}`)] += int64(v)
			}
		}
		resp.Body.Close()
	}
	return out
}

// metricErr sums the series of name whose labels contain labels over the
// instances' /metrics.
func (tg scaleTarget) metricErr(name, labels string) (float64, error) {
	var sum float64
	for _, a := range tg.admins {
		resp, err := http.Get("http://" + a + "/metrics")
		if err != nil {
			return 0, err
		}
		s := bufio.NewScanner(resp.Body)
		s.Buffer(make([]byte, 1<<20), 1<<20)
		for s.Scan() {
			line := s.Text()
			series, val, ok := strings.Cut(line, " ")
			if !ok || strings.HasPrefix(line, "#") {
				continue
			}
			n, l, _ := strings.Cut(series, "{")
			if n != name || !strings.Contains(l, labels) {
				continue
			}
			if v, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
				sum += v
			}
		}
		resp.Body.Close()
	}
	return sum, nil
}

func scaleCounts(t *testing.T, addr string) map[string]int64 {
	resp, err := http.Get("http://" + addr + "/counts")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	m := map[string]int64{}
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

// scaleChild is a helper process: this test binary running one test,
// commands on its stdin, answers on its stdout.
type scaleChild struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   *bufio.Scanner
	log   *os.File
	first string // the rest of its first announced line
}

func startScaleChild(t *testing.T, out, name, test, env string) *scaleChild {
	t.Helper()
	logf, err := os.Create(filepath.Join(out, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	c := &scaleChild{log: logf}
	c.cmd = exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1", "-test.timeout=0")
	c.cmd.Env = append(harness.Environ(), env)
	c.cmd.Stderr = logf
	if c.in, err = c.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c.out = bufio.NewScanner(stdout)
	c.out.Buffer(make([]byte, 1<<20), 1<<20)
	if name == "kfake" {
		c.first = c.line(t, "KFAKE ")
	}
	return c
}

// line is the rest of the child's next line with prefix; other lines go to
// its log.
func (c *scaleChild) line(t *testing.T, prefix string) string {
	t.Helper()
	for c.out.Scan() {
		if rest, ok := strings.CutPrefix(c.out.Text(), prefix); ok {
			return rest
		}
		fmt.Fprintln(c.log, c.out.Text())
	}
	t.Fatalf("%s ended without a %q line (see %s)", c.cmd.Path, prefix, c.log.Name())
	return ""
}

func (c *scaleChild) do(t *testing.T, cmd scaleCmd) scaleResult {
	t.Helper()
	b, _ := json.Marshal(cmd)
	if _, err := fmt.Fprintf(c.in, "%s\n", b); err != nil {
		t.Fatal(err)
	}
	var res scaleResult
	if err := json.Unmarshal([]byte(c.line(t, "SCALE ")), &res); err != nil {
		t.Fatal(err)
	}
	if res.Err != "" {
		t.Fatalf("%s: %s", cmd.Do, res.Err)
	}
	return res
}

func (c *scaleChild) stop() {
	_ = c.in.Close() // the broker ends at EOF; the members at EOF leave
	done := make(chan struct{})
	go func() { _ = c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = c.cmd.Process.Kill()
		<-done
	}
	_ = c.log.Close()
}

// startScaleCluster is startSSCluster in front of the benchmark's broker,
// node nodeID (kfake's is node 0, a Kafka broker of the e2e set-ups node 1):
// each instance's node port stays P+1 (node-port-base P+1-nodeID), the
// bootstrap P, /cluster P+2, the internal listener P+3; durable log on,
// logging at warn.
func startScaleCluster(ctx context.Context, t *testing.T, dir, upstream string, nodeID int) (*ssCluster, error) {
	bin, err := harness.BuildStreamshift(dir)
	if err != nil {
		return nil, err
	}
	c := &ssCluster{hosts: [3]string{"127.0.0.1", "127.0.0.2", "127.0.0.3"}}
	if c.port, err = harness.FreePortsOnHosts(c.hosts[:], 4); err != nil {
		return nil, err
	}
	env := []string{
		"STREAMSHIFT_COORDINATOR_DURABLE_LOG=true",
		"STREAMSHIFT_COORDINATOR_CLUSTER_ID=e2e-scale",
		"STREAMSHIFT_COORDINATOR_LOG_PARTITIONS=" + strconv.Itoa(instancesLogPartitions),
		"STREAMSHIFT_COORDINATOR_INSTANCE_SESSION_TIMEOUT=" + instanceSession.String(),
		"STREAMSHIFT_ADMIN_PPROF=true",
	}
	for i, h := range c.hosts {
		listen := net.JoinHostPort(h, strconv.Itoa(c.port))
		c.admin[i] = net.JoinHostPort(h, strconv.Itoa(c.port+2))
		pdir := filepath.Join(dir, fmt.Sprintf("streamshift-s%d", i+1))
		if err := os.MkdirAll(pdir, 0o755); err != nil {
			return nil, err
		}
		penv := append(append([]string(nil), env...), "STREAMSHIFT_CLUSTER_LISTEN="+net.JoinHostPort(h, strconv.Itoa(c.port+3)))
		p := &streamshiftProc{t: t, bin: bin, dir: pdir, env: penv, listen: listen, args: []string{"run", "--upstream", upstream,
			"--listen", listen, "--advertised-host", h, "--node-port-base", strconv.Itoa(c.port + 1 - nodeID), "--node-id-min", strconv.Itoa(nodeID), "--node-id-max", strconv.Itoa(nodeID),
			"--admin-listen", c.admin[i], "--proxy-id", fmt.Sprintf("s%d", i+1), "--shutdown-timeout", "10s", "--log-level", "warn"}}
		if err := p.start(ctx); err != nil {
			return nil, err
		}
		c.procs[i] = p
		t.Cleanup(p.stop)
	}
	return c, c.settled(ctx, 0, 1, 2)
}
