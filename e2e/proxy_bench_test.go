//go:build e2e

package e2e_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamshift/streamshift/e2e/harness"
)

// TestProxyBenchmark measures the proxy against a real Kafka 3.9 broker, direct
// vs through the proxy in the same run (rounds interleaved so machine noise
// hits both): produce+consume throughput of 1 KiB records (acks=all, 8
// partitions, 500k records a round) with the proxy's CPU seconds per GiB,
// the produce latency at half of the direct saturation rate and at a low
// rate, and the proxy's resident memory with 5,000 idle client connections.
//
// Latency comes from a paced producer in its own process (this test binary
// again, TestProxyBenchLoadgen): record i is sent at i/rate whatever the
// acknowledgements do, and timed from its Produce call to its
// acknowledgement; and, when e2e/tools-4.4 is built, from Kafka's own
// kafka-producer-perf-test at the same rate. Both report the rate they
// actually achieved, so a generator that could not keep up shows.
//
// It reports a ready-to-paste Markdown table (also written to
// e2e/out/TestProxyBenchmark/report.md) with the load average, and asserts
// nothing; run it with STREAMSHIFT_BENCH=1:
//
//	STREAMSHIFT_BENCH=1 go test -tags e2e -run TestProxyBenchmark -v -timeout 30m ./e2e/
//
// STREAMSHIFT_BENCH_BASELINE=<git rev> adds a third route, a proxy built
// from that revision, interleaved with the others (A/B of a change in one
// run). STREAMSHIFT_BENCH_PROFILE=1 first saves 5 s CPU profiles of each
// proxy under produce and consume load to the out folder.
// STREAMSHIFT_BENCH_FORWARDERS=1 adds two routes through e2e/forwarder, a TCP
// forwarder that knows nothing of Kafka (splicing, and copying through user
// space) in front of a second broker listener: the floor of what any proxy
// costs on this machine. STREAMSHIFT_BENCH_PIN=1 gives each proxy a core
// of its own (CPU 1; everything else on CPU 0).
// STREAMSHIFT_BENCH_KROXYLICIOUS=1 adds Kroxylicious 0.12 (Java/Netty,
// e2e/kroxylicious: passthrough, no filters, port per node) as a route.
// Every proxy route also gets its CPU per small
// request (proxy_bench_small_test.go: Metadata, a classic Heartbeat,
// StreamsGroupHeartbeat; _SMALL_REQUESTS each, default 20000) and its RSS
// fresh, with the idle connections, at the peak of the throughput rounds
// and after. Other knobs: STREAMSHIFT_BENCH_ROUNDS (3), _RECORDS (500000),
// _LATENCY_SECONDS (10), _LOW_RATE (2000), _IDLE_CONNS (5000).
func TestProxyBenchmark(t *testing.T) {
	harness.NeedBench(t)
	records := envInt("STREAMSHIFT_BENCH_RECORDS", 500_000)
	rounds := envInt("STREAMSHIFT_BENCH_ROUNDS", 3)
	idle := envInt("STREAMSHIFT_BENCH_IDLE_CONNS", 5000)
	latFor := time.Duration(envInt("STREAMSHIFT_BENCH_LATENCY_SECONDS", 10)) * time.Second
	baselineRev := os.Getenv("STREAMSHIFT_BENCH_BASELINE")
	profile := os.Getenv("STREAMSHIFT_BENCH_PROFILE") != ""
	forwarders := os.Getenv("STREAMSHIFT_BENCH_FORWARDERS") != ""
	kroxylicious := os.Getenv("STREAMSHIFT_BENCH_KROXYLICIOUS") != ""
	smallN := envInt("STREAMSHIFT_BENCH_SMALL_REQUESTS", 20000)
	unpin, _ := pinBenchProxies(t)
	defer unpin()
	out, err := harness.OutDir(t.Name())
	if err != nil {
		t.Fatal(err)
	}
	loadStart := loadAvg()
	ctx := context.Background()
	// Topics are deleted after their round (a run writes tens of GiB), and
	// their files go at once.
	overrides := []string{"max.connections.per.ip=100000", "log.segment.delete.delay.ms=1000", "socket.listen.backlog.size=1024"}
	var fwdPorts []int
	if forwarders {
		// A second listener that advertises the forwarders' address, so
		// their clients never learn the broker's own.
		fwdPorts = []int{freeRange(t, 2), freeRange(t, 1), freeRange(t, 1)} // listeners SPLICE and COPY, the two forwarders
		overrides = append(overrides,
			fmt.Sprintf("listeners=PLAINTEXT://127.0.0.1:@BPORT@,CONTROLLER://127.0.0.1:@CPORT@,SPLICE://127.0.0.1:%d,COPY://127.0.0.1:%d", fwdPorts[0], fwdPorts[0]+1),
			fmt.Sprintf("advertised.listeners=PLAINTEXT://127.0.0.1:@BPORT@,SPLICE://127.0.0.1:%d,COPY://127.0.0.1:%d", fwdPorts[1], fwdPorts[2]),
			"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SPLICE:PLAINTEXT,COPY:PLAINTEXT")
	}
	b, err := harness.StartBroker(ctx, harness.BrokerOptions{Version: harness.Kafka39, Dir: filepath.Join(out, "broker"), Overrides: overrides})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Stop()

	// Each proxy runs as its own process so its RSS and CPU are its own.
	cur := startBenchProxy(t, out, "proxy", filepath.Dir(harness.Root()), b.Bootstrap, profile)
	defer cur.stop()
	routes := []benchRoute{{name: "direct", addr: b.Bootstrap}, {name: "proxy", addr: cur.addr, proxy: cur}}
	if baselineRev != "" {
		src := exportRev(t, out, baselineRev)
		base := startBenchProxy(t, out, "baseline", src, b.Bootstrap, profile)
		defer base.stop()
		routes = append(routes, benchRoute{name: "baseline", addr: base.addr, proxy: base})
	}
	if kroxylicious {
		kp := startBenchKroxylicious(t, out, "kroxylicious", b.Bootstrap)
		defer kp.stop()
		routes = append(routes, benchRoute{name: "kroxylicious", addr: kp.addr, proxy: kp})
	}

	if forwarders {
		for i, name := range []string{"splice-fwd", "copy-fwd"} {
			target := fmt.Sprintf("127.0.0.1:%d", fwdPorts[0]+i)
			fw := startBenchForwarder(t, out, name, fmt.Sprintf("127.0.0.1:%d", fwdPorts[1+i]), target, name == "copy-fwd")
			defer fw.stop()
			routes = append(routes, benchRoute{name: name, addr: fw.addr, proxy: fw})
		}
	}

	// Idle footprint first, on the fresh processes: 5,000 connections that
	// each completed one ApiVersions, so both sides of each are open.
	rssFresh, rssIdle := map[string]int{}, map[string]int{}
	for _, r := range routes[1:] {
		rssFresh[r.name] = rssKiB(t, r.proxy.cmd.Process.Pid)
		if r.name == "splice-fwd" {
			// Go's splice holds a pipe per blocked copy: 6 descriptors a
			// connection, past the 20,000 of RLIMIT_NOFILE here.
			continue
		}
		conns := openIdle(t, r.addr, idle)
		time.Sleep(2 * time.Second)
		rssIdle[r.name] = rssKiB(t, r.proxy.cmd.Process.Pid)
		for _, c := range conns {
			c.Close()
		}
	}

	adm, err := kgo.NewClient(kgo.SeedBrokers(b.Bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	newTopic := func(name string) string {
		if _, err := kadm.NewClient(adm).CreateTopic(ctx, 8, 1, nil, name); err != nil {
			t.Fatal(err)
		}
		return name
	}
	dropTopic := func(name string) {
		if _, err := kadm.NewClient(adm).DeleteTopics(ctx, name); err != nil {
			t.Logf("delete topic %s: %v", name, err)
		}
	}
	series := map[string]map[string][]float64{} // metric -> route -> values
	add := func(metric, route string, v float64) {
		if series[metric] == nil {
			series[metric] = map[string][]float64{}
		}
		series[metric][route] = append(series[metric][route], v)
	}
	med := func(metric, route string) float64 { return median(series[metric][route]) }

	if profile {
		// Profiles of each proxy under produce and then consume load, long
		// enough for a 5 s CPU profile each; not counted.
		for _, r := range routes[1:] {
			if r.proxy.admin == "" {
				continue // a forwarder
			}
			topic := newTopic("profile-" + r.name)
			n := envInt("STREAMSHIFT_BENCH_PROFILE_RECORDS", 2_000_000)
			wait := r.proxy.cpuProfile(filepath.Join(out, "cpu-produce-"+r.name+".pprof"), 5*time.Second)
			produceThroughput(t, r.addr, topic, n)
			if err := wait(); err != nil {
				t.Errorf("profile %s: %v", r.name, err)
			}
			wait = r.proxy.cpuProfile(filepath.Join(out, "cpu-consume-"+r.name+".pprof"), 2*time.Second)
			consumeThroughput(t, r.addr, topic, n)
			if err := wait(); err != nil {
				t.Errorf("profile %s: %v", r.name, err)
			}
			dropTopic(topic)
		}
	}

	// Round -1 warms the broker's JIT and page cache and is not counted.
	stopPeak := samplePeakRSS(routes[1:])
	for round := -1; round < rounds; round++ {
		for _, r := range routes {
			topic := newTopic(fmt.Sprintf("bench-%s-%d", r.name, round+1))
			cpu0 := r.proxy.cpuSeconds(t)
			p := produceThroughput(t, r.addr, topic, records)
			cpu1 := r.proxy.cpuSeconds(t)
			c := consumeThroughput(t, r.addr, topic, records)
			cpu2 := r.proxy.cpuSeconds(t)
			dropTopic(topic)
			// CPU seconds of the proxy process per GiB of record values:
			// its own cost, which machine noise hardly changes.
			gib := float64(records) * 1024 / (1 << 30)
			if round >= 0 {
				add("produce", r.name, p)
				add("consume", r.name, c)
				if r.proxy != nil {
					add("cpu-produce", r.name, (cpu1-cpu0)/gib)
					add("cpu-consume", r.name, (cpu2-cpu1)/gib)
				}
			}
			t.Logf("round %d %-8s produce %8.0f rec/s  consume %8.0f rec/s  proxy CPU %.2f / %.2f s per GiB", round, r.name, p, c, (cpu1-cpu0)/gib, (cpu2-cpu1)/gib)
		}
	}

	rssPeak := stopPeak()

	// Half of the direct saturation rate, the same target for every route,
	// from a paced producer in its own process (and from Kafka's
	// kafka-producer-perf-test when the tools are built).
	rate := math.Round(med("produce", "direct") / 2)
	lowRate := float64(envInt("STREAMSHIFT_BENCH_LOW_RATE", 2000))
	perf := perfTestAvailable()
	for round := 0; round < rounds; round++ {
		for _, r := range routes {
			for _, x := range []struct {
				name string
				rate float64
			}{{"half", rate}, {"low", lowRate}} {
				topic := newTopic(fmt.Sprintf("lat-%s-%s-%d", x.name, r.name, round))
				cpu0 := r.proxy.cpuSeconds(t)
				res := runLoadgen(t, loadgenJob{Addr: r.addr, Topic: topic, Rate: x.rate, Warmup: 2 * time.Second, For: latFor})
				if r.proxy != nil && x.name == "half" {
					// Below saturation: what the proxy costs where sockets
					// are rarely full (warm-up included in both terms).
					gib := res.Achieved * (latFor + 2*time.Second).Seconds() * 1024 / (1 << 30)
					add("cpu-half", r.name, (r.proxy.cpuSeconds(t)-cpu0)/gib)
				}
				dropTopic(topic)
				add("p99-"+x.name, r.name, res.P99)
				add("p50-"+x.name, r.name, res.P50)
				add("achieved-"+x.name, r.name, res.Achieved)
				t.Logf("round %d %-8s paced %.0f rec/s (sent %.0f, max burst %d): p50 %.3f p99 %.3f p99.9 %.3f max %.3f ms",
					round, r.name, x.rate, res.Achieved, res.MaxBurst, res.P50, res.P99, res.P999, res.Max)
			}
			if perf {
				topic := newTopic(fmt.Sprintf("perf-%s-%d", r.name, round))
				res := runPerfTest(t, r.addr, topic, rate, latFor)
				dropTopic(topic)
				add("perf-p99", r.name, res.P99)
				add("perf-p50", r.name, res.P50)
				add("perf-achieved", r.name, res.Achieved)
				t.Logf("round %d %-8s kafka-producer-perf-test %.0f rec/s (sent %.0f): p50 %.0f p99 %.0f p99.9 %.0f max %.0f ms",
					round, r.name, rate, res.Achieved, res.P50, res.P99, res.P999, res.Max)
			}
		}
	}

	// Small requests, rounds interleaved as above.
	smallRoutes := routes[1:]
	smallFailed := map[string]string{} // kind/route -> why it could not be measured
	for _, r := range smallRoutes {
		newTopic("small-" + r.name)
	}
	for round := 0; round < rounds; round++ {
		for _, k := range smallRequests {
			for _, r := range smallRoutes {
				if smallFailed[k.name+"/"+r.name] != "" {
					continue
				}
				cpu, rtt, err := smallRequestCost(t, r, k, "small-"+r.name, fmt.Sprintf("small-%s-%s-%d", k.name, r.name, round), smallN)
				if err != nil {
					smallFailed[k.name+"/"+r.name] = err.Error()
					t.Logf("small %s via %s: %v", k.name, r.name, err)
					continue
				}
				add("small-"+k.name, r.name, cpu)
				add("small-rtt-"+k.name, r.name, rtt)
				t.Logf("round %d %-16s %-22s proxy CPU %.1f µs per request, round trip %.1f µs", round, r.name, k.name, cpu, rtt)
			}
		}
	}

	rssAfterLoad, rssSettled := map[string]int{}, map[string]int{}
	for _, r := range routes[1:] {
		rssAfterLoad[r.name] = rssKiB(t, r.proxy.cmd.Process.Pid)
	}
	time.Sleep(12 * time.Second) // one period of the proxy's memory reclaimer
	for _, r := range routes[1:] {
		rssSettled[r.name] = rssKiB(t, r.proxy.cmd.Process.Pid)
	}

	var sb strings.Builder
	proxies := routes[1:]
	fmt.Fprintf(&sb, "| metric | direct |")
	for _, r := range proxies {
		fmt.Fprintf(&sb, " %s | %s/direct or added |", r.label(baselineRev), r.name)
	}
	sb.WriteString("\n|---|---|" + strings.Repeat("---|---|", len(proxies)) + "\n")
	ratioRow := func(title, metric string, format string) {
		fmt.Fprintf(&sb, "| %s | "+format+" |", title, med(metric, "direct"))
		for _, r := range proxies {
			v := med(metric, r.name)
			fmt.Fprintf(&sb, " "+format+" | %.3f |", v, v/med(metric, "direct"))
		}
		sb.WriteString("\n")
	}
	addedRow := func(title, metric string) {
		fmt.Fprintf(&sb, "| %s | %.3f |", title, med(metric, "direct"))
		for _, r := range proxies {
			v := med(metric, r.name)
			fmt.Fprintf(&sb, " %.3f | %+.3f ms |", v, v-med(metric, "direct"))
		}
		sb.WriteString("\n")
	}
	ratioRow(fmt.Sprintf("produce 1 KiB, acks=all, 8 partitions (rec/s, median of %d)", rounds), "produce", "%.0f")
	ratioRow(fmt.Sprintf("consume (rec/s, median of %d)", rounds), "consume", "%.0f")
	proxyRow := func(title, metric string) {
		fmt.Fprintf(&sb, "| %s | |", title)
		for _, r := range proxies {
			fmt.Fprintf(&sb, " %.2f | |", med(metric, r.name))
		}
		sb.WriteString("\n")
	}
	proxyRow("proxy CPU per GiB produced (s, user+system, median)", "cpu-produce")
	proxyRow("proxy CPU per GiB consumed (s, user+system, median)", "cpu-consume")
	proxyRow(fmt.Sprintf("proxy CPU per GiB produced, paced at %.0f rec/s (s, user+system, median)", rate), "cpu-half")
	addedRow(fmt.Sprintf("p99 produce latency, paced %.0f rec/s = half of direct saturation (ms, median of %d)", rate, rounds), "p99-half")
	addedRow(fmt.Sprintf("p50 produce latency, paced %.0f rec/s (ms, median of %d)", rate, rounds), "p50-half")
	ratioRow(fmt.Sprintf("rate the paced producer achieved at %.0f rec/s (rec/s)", rate), "achieved-half", "%.0f")
	addedRow(fmt.Sprintf("p99 produce latency, paced %.0f rec/s (ms, median of %d)", lowRate, rounds), "p99-low")
	if perf {
		addedRow(fmt.Sprintf("kafka-producer-perf-test p99 at %.0f rec/s (ms, whole ms, median of %d)", rate, rounds), "perf-p99")
		addedRow(fmt.Sprintf("kafka-producer-perf-test p50 at %.0f rec/s (ms, median of %d)", rate, rounds), "perf-p50")
		ratioRow(fmt.Sprintf("rate kafka-producer-perf-test achieved at %.0f rec/s (rec/s)", rate), "perf-achieved", "%.0f")
	}
	rssRow := func(title string, f func(name string) string) {
		fmt.Fprintf(&sb, "| %s | |", title)
		for _, r := range proxies {
			fmt.Fprintf(&sb, " %s | |", f(r.name))
		}
		sb.WriteString("\n")
	}
	mib := func(kib int) float64 { return float64(kib) / 1024 }
	rssRow("proxy RSS, fresh process (MiB)", func(n string) string { return fmt.Sprintf("%.1f", mib(rssFresh[n])) })
	rssRow(fmt.Sprintf("proxy RSS with %d idle client connections (MiB)", idle), func(n string) string {
		if _, ok := rssIdle[n]; !ok {
			return "n/a"
		}
		return fmt.Sprintf("%.1f", mib(rssIdle[n]))
	})
	rssRow("proxy RSS, peak during the throughput rounds (MiB, sampled every 250 ms)", func(n string) string { return fmt.Sprintf("%.1f", mib(rssPeak[n])) })
	rssRow("proxy RSS after all the load / 12 s later (MiB)", func(n string) string {
		return fmt.Sprintf("%.1f / %.1f", mib(rssAfterLoad[n]), mib(rssSettled[n]))
	})
	for _, k := range smallRequests {
		fmt.Fprintf(&sb, "| proxy CPU per %s request (µs, user+system over %d in a row, one in flight, median of %d) | |", k.name, smallN, rounds)
		for _, r := range proxies {
			if why := smallFailed[k.name+"/"+r.name]; why != "" || len(series["small-"+k.name][r.name]) == 0 {
				fmt.Fprintf(&sb, " n/a | |")
				continue
			}
			fmt.Fprintf(&sb, " %.1f (round trip %.0f) | |", med("small-"+k.name, r.name), med("small-rtt-"+k.name, r.name))
		}
		sb.WriteString("\n")
	}
	for key, why := range smallFailed {
		fmt.Fprintf(&sb, "\nNot measured: %s: %s\n", key, why)
	}
	if benchProxyCPU >= 0 {
		fmt.Fprintf(&sb, "\nPinned: clients, broker and load generators on CPU 0, each proxy on CPU %d.\n", benchProxyCPU)
	}
	fmt.Fprintf(&sb, "\nLoad average (1/5/15 min) at the start: %s; at the end: %s. %s UTC.\n", loadStart, loadAvg(), time.Now().UTC().Format("2006-01-02 15:04"))
	report := sb.String()
	t.Log("\n" + report)
	_ = os.WriteFile(filepath.Join(out, "report.md"), []byte(report), 0o644)
}

// benchRoute is where a round's clients connect: the broker itself or a proxy.
type benchRoute struct {
	name, addr string
	proxy      *benchProxy
}

func (r benchRoute) label(baselineRev string) string {
	switch r.name {
	case "baseline":
		return "baseline (" + baselineRev + ")"
	case "splice-fwd":
		return "TCP forwarder, splice"
	case "copy-fwd":
		return "TCP forwarder, user-space copy"
	case "kroxylicious":
		return "Kroxylicious 0.12, passthrough"
	}
	return "through streamshift"
}

// benchProxy is a streamshift process under test.
type benchProxy struct {
	cmd   *exec.Cmd
	addr  string
	admin string // pprof, when profiling
	log   *os.File
}

// startBenchProxy builds the streamshift binary from the module at src and
// runs it in front of upstream.
func startBenchProxy(t *testing.T, out, name, src, upstream string, profile bool, env ...string) *benchProxy {
	t.Helper()
	bin := filepath.Join(out, name+"-streamshift")
	if err := harness.GoBuild(src, "./cmd/streamshift", bin); err != nil {
		t.Fatalf("build %s: %v", name, err)
	}
	bp := &benchProxy{addr: "127.0.0.1:" + strconv.Itoa(freeRange(t, 5))} // bootstrap + node ports 0..3
	if profile {
		bp.admin = "127.0.0.1:" + strconv.Itoa(freeRange(t, 1))
	}
	logf, err := os.Create(filepath.Join(out, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	bp.log = logf
	bp.cmd = exec.Command(bin, "run", "--upstream", upstream, "--listen", bp.addr, "--admin-listen", bp.admin,
		"--node-id-max", "3", "--log-level", "warn")
	bp.cmd.Stdout, bp.cmd.Stderr = logf, logf
	// Profiles (cpuProfile) are off unless asked for; a baseline build
	// older than admin.pprof ignores the variable with a warning.
	bp.cmd.Env = append(append(harness.Environ(), "STREAMSHIFT_COORDINATOR_DURABLE_LOG=false", "STREAMSHIFT_ADMIN_PPROF=true"), env...)
	if benchProxyCPU >= 0 {
		// Pinned after its start, the Go runtime would keep the two Ps
		// it sized from the machine and time-slice them on one core (4 ms
		// slices in the latency); on a host of one core it has one.
		bp.cmd.Env = append(bp.cmd.Env, "GOMAXPROCS=1")
	}
	if err := bp.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	bp.pin(t)
	waitListening(t, bp.addr)
	return bp
}

// startBenchForwarder builds and runs e2e/forwarder: a TCP forwarder that
// knows nothing of Kafka, the floor of what any proxy costs on this machine.
func startBenchForwarder(t *testing.T, out, name, listen, target string, copyMode bool, args ...string) *benchProxy {
	t.Helper()
	bin := filepath.Join(out, "forwarder")
	if err := harness.GoBuild(filepath.Dir(harness.Root()), "./e2e/forwarder", bin); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(out, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	bp := &benchProxy{addr: listen, log: logf}
	bp.cmd = exec.Command(bin, append([]string{"-listen", listen, "-target", target, "-copy=" + strconv.FormatBool(copyMode)}, args...)...)
	bp.start(t)
	return bp
}

// start runs the process with its output to the log, pins it and waits
// until it listens.
func (bp *benchProxy) start(t *testing.T) {
	t.Helper()
	bp.cmd.Stdout, bp.cmd.Stderr = bp.log, bp.log
	if err := bp.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	bp.pin(t)
	waitListening(t, bp.addr)
}

// pin moves the proxy process to benchProxyCPU, if set.
func (bp *benchProxy) pin(t *testing.T) {
	if benchProxyCPU < 0 {
		return
	}
	if err := pinProcess(bp.cmd.Process.Pid, benchProxyCPU); err != nil {
		t.Fatal(err)
	}
}

func (bp *benchProxy) stop() {
	_ = bp.cmd.Process.Signal(os.Interrupt)
	_ = bp.cmd.Wait()
	_ = bp.log.Close()
}

// cpuSeconds is the user+system CPU time the proxy process used so far; 0
// for no proxy (the direct route).
func (bp *benchProxy) cpuSeconds(t *testing.T) float64 {
	if bp == nil {
		return 0
	}
	s, err := procCPUSeconds(bp.cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// procCPUSeconds is the user+system CPU time process pid used so far.
func procCPUSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// Fields after the parenthesised command name: state is field 3,
	// utime and stime are fields 14 and 15, in clock ticks (USER_HZ 100).
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / 100, nil
}

// cpuProfile takes a CPU profile of the proxy (pprof on its admin listener)
// for d in the background; wait returns once it is written to file.
func (bp *benchProxy) cpuProfile(file string, d time.Duration) (wait func() error) {
	done := make(chan error, 1)
	go func() {
		resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", bp.admin, int(d.Seconds())))
		if err != nil {
			done <- err
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			// Not a profile (admin.pprof off): say so, do not write it.
			msg, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
			done <- fmt.Errorf("CPU profile from %s: %s: %s", bp.admin, resp.Status, msg)
			return
		}
		f, err := os.Create(file)
		if err != nil {
			done <- err
			return
		}
		defer f.Close()
		_, err = io.Copy(f, resp.Body)
		done <- err
	}()
	return func() error { return <-done }
}

// exportRev writes the source tree of a git revision to out/baseline-src.
func exportRev(t *testing.T, out, rev string) string {
	t.Helper()
	dst := filepath.Join(out, "baseline-src")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	repo := filepath.Dir(harness.Root())
	cmd := exec.Command("sh", "-c", `git -C "$1" archive "$2" | tar -x -C "$3"`, "sh", repo, rev, dst)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("export %s: %v\n%s", rev, err, msg)
	}
	return dst
}

// loadAvg is /proc/loadavg's first three fields.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// randomValue is a 1 KiB record value that does not compress.
func randomValue() []byte {
	v := make([]byte, 1024)
	_, _ = rand.Read(v)
	return v
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// freeRange returns the first of n consecutive free loopback ports, below the
// ephemeral range so no outgoing connection takes one meanwhile.
func freeRange(t *testing.T, n int) int {
	for attempt := 0; attempt < 100; attempt++ {
		base := 20000 + mrand.IntN(10000)
		var ls []net.Listener
		ok := true
		for p := base; p < base+n && ok; p++ {
			l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
			if err != nil {
				ok = false
				break
			}
			ls = append(ls, l)
		}
		for _, l := range ls {
			l.Close()
		}
		if ok {
			return base
		}
	}
	t.Fatal("no free port range")
	return 0
}

func waitListening(t *testing.T, addr string) {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s not listening", addr)
}

func produceThroughput(t *testing.T, addr, topic string, n int, opts ...kgo.Opt) float64 {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic), kgo.MaxBufferedRecords(20000),
		kgo.ProducerBatchMaxBytes(1 << 20), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()),
		kgo.ProducerBatchCompression(kgo.NoCompression())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("warm")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	value := randomValue()
	var failed sync.Once
	start := time.Now()
	for i := 0; i < n; i++ {
		cl.Produce(ctx, &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				failed.Do(func() { t.Errorf("produce: %v", err) })
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	return float64(n) / time.Since(start).Seconds()
}

func consumeThroughput(t *testing.T, addr, topic string, n int, opts ...kgo.Opt) float64 {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// Timed from the first records on, which excludes the client's start
	// (metadata, offset lookups); those first records are not counted.
	first := 0
	for first == 0 && ctx.Err() == nil {
		first = cl.PollFetches(ctx).NumRecords()
	}
	start := time.Now()
	got := first
	for got < n+1 && ctx.Err() == nil {
		got += cl.PollFetches(ctx).NumRecords()
	}
	if got < n+1 {
		t.Fatalf("consumed %d of %d", got, n+1)
	}
	return float64(got-first) / time.Since(start).Seconds()
}

// openIdle opens n client connections and completes one ApiVersions on each,
// so the proxy has both sides of every connection established.
func openIdle(t *testing.T, addr string, n int) []net.Conn {
	req := []byte{0, 0, 0, 20, 0, 18, 0, 3, 0, 0, 0, 1, 0, 4, 'b', 'e', 'n', 'c', 0, 2, 'b', 2, '1', 0}
	binary.BigEndian.PutUint32(req, uint32(len(req)-4))
	conns := make([]net.Conn, 0, n)
	// In batches, each answered before the next is dialled: a proxy dials
	// the broker for every connection, and thousands of dials at once
	// overflow the broker's accept backlog on a loaded machine (the dials
	// then time out).
	const batch = 200
	for start := 0; start < n; start += batch {
		for i := start; i < min(n, start+batch); i++ {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatalf("connection %d: %v", i, err)
			}
			conns = append(conns, c)
			if _, err := c.Write(req); err != nil {
				t.Fatal(err)
			}
		}
		for i, c := range conns[start:] {
			_ = c.SetReadDeadline(time.Now().Add(time.Minute))
			var size [4]byte
			if _, err := io.ReadFull(c, size[:]); err != nil {
				t.Fatalf("connection %d ApiVersions: %v", start+i, err)
			}
			if _, err := io.CopyN(io.Discard, c, int64(binary.BigEndian.Uint32(size[:]))); err != nil {
				t.Fatal(err)
			}
		}
	}
	return conns
}

// samplePeakRSS samples the RSS of the routes' processes every 250 ms until
// stop, which returns the largest seen per route.
func samplePeakRSS(routes []benchRoute) (stop func() map[string]int) {
	done := make(chan struct{})
	result := make(chan map[string]int)
	go func() {
		peak := map[string]int{}
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			for _, r := range routes {
				if kib, err := readRSS(r.proxy.cmd.Process.Pid); err == nil {
					peak[r.name] = max(peak[r.name], kib)
				}
			}
			select {
			case <-done:
				result <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return func() map[string]int { close(done); return <-result }
}

func rssKiB(t *testing.T, pid int) int {
	kib, err := readRSS(pid)
	if err != nil {
		t.Fatal(err)
	}
	return kib
}

// readRSS is VmRSS of process pid in KiB.
func readRSS(pid int) (int, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmRSS:"); ok {
			return strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
		}
	}
	return 0, fmt.Errorf("no VmRSS for %d", pid)
}
