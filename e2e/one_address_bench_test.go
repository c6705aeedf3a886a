//go:build e2e

package e2e_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/e2e/harness"
)

// TestOneAddressBenchmark: what the hop to a group's owner costs a steady
// StreamsGroupHeartbeat (issue #27, docs/one-address.md §7). Kafka 3.9 and
// the three instances of startSSCluster; one streams group, owned by one
// instance, with one joined member. The member's steady heartbeat (one in
// flight, on one plain TCP connection, kmsg-encoded as in
// proxy_bench_small_test.go) is sent STREAMSHIFT_BENCH_SMALL_REQUESTS times
// in a row (default 5,000, after 200 of warm-up) (a) to the owner's own
// address, (b) to another instance's address, from where it hops to the
// owner over the internal link, and (c) to the owner's address behind
// e2e/forwarder (user-space copy): one more loopback hop with no Kafka logic
// at all, the floor no hop can beat on this machine. Reported per route: p50
// and p99 of the round trip, and the processes' CPU per heartbeat (the sum
// over the three instances and the forwarder of /proc/<pid>/stat
// utime+stime over the run, divided by the heartbeats), with the ratios
// hopped/owner and floor/owner. STREAMSHIFT_BENCH_ROUNDS (default 3)
// alternates the routes, each round measuring all, so a load change on the
// shared machine hits each. Opt-in, as the other
// benchmarks: STREAMSHIFT_BENCH=1. STREAMSHIFT_BENCH_PROFILE=1 then takes
// 10 s CPU profiles of the owner and the origin under hopped heartbeats.
// STREAMSHIFT_BENCH_CLIENTS=C (default 1) runs C members at once, each in a
// group of its own owned by s1, each on its own connection per route with
// one heartbeat in flight: the hopped route then has C calls in flight on
// the link, which its two ends may write in one syscall
// (proxy/peer/batch_writer.go). The heartbeats per route and round are
// shared among the clients. Not parallel: it measures.
func TestOneAddressBenchmark(t *testing.T) {
	harness.NeedBench(t)
	n := envInt("STREAMSHIFT_BENCH_SMALL_REQUESTS", 5000)
	rounds := envInt("STREAMSHIFT_BENCH_ROUNDS", 3)
	clients := max(1, envInt("STREAMSHIFT_BENCH_CLIENTS", 1))
	out, err := harness.OutDir(t.Name())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	b, err := harness.StartBroker(ctx, harness.BrokerOptions{Version: harness.Kafka39, Dir: filepath.Join(out, "broker")})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Stop()
	env := []string{"STREAMSHIFT_LOG_LEVEL=info"}
	if os.Getenv("STREAMSHIFT_BENCH_PROFILE") != "" {
		// The profiles are served only with admin.pprof on.
		env = append(env, "STREAMSHIFT_ADMIN_PPROF=true")
	}
	c, err := startSSCluster(ctx, t, out, b.Bootstrap, "", env...)
	if err != nil {
		t.Fatal(err)
	}
	topic := "bench-hop"
	if err := harness.CreateTopics(ctx, b.Bootstrap, 4, topic); err != nil {
		t.Fatal(err)
	}
	// A group per client, each owned by s1 (instance A): the owner's
	// address is s1's, the hop goes through s2.
	var groups []string
	for i := 0; len(groups) < clients; i++ {
		g := fmt.Sprintf("bench-hop-%d", i)
		o, err := c.owner(ctx, 0, g)
		if err != nil {
			t.Fatal(err)
		}
		if o == 0 {
			groups = append(groups, g)
		}
	}
	addr := func(i int) string { return net.JoinHostPort(c.hosts[i], strconv.Itoa(c.port+1)) }
	// The floor: the owner's address behind a copy forwarder, which
	// reads and writes each frame in user space as the link's two ends do.
	fwd := startBenchForwarder(t, out, "forwarder", "127.0.0.1:"+strconv.Itoa(freeRange(t, 1)), addr(0), true)
	defer fwd.stop()
	routes := []hopRoute{{name: "owner (s1)", addr: addr(0)}, {name: "hopped (s2 → s1)", addr: addr(1)},
		{name: "forwarder → s1", addr: fwd.addr}}
	for i := range routes {
		for range clients {
			sc, err := dialSmall(routes[i].addr)
			if err != nil {
				t.Fatal(err)
			}
			defer sc.close()
			routes[i].scs = append(routes[i].scs, sc)
		}
	}
	// Each member joins at the owner; its heartbeats then go on any
	// connection (a member is its id, not its connection).
	var hb smallRequest
	for _, k := range smallRequests {
		if k.name == "StreamsGroupHeartbeat" {
			hb = k
		}
	}
	nexts := make([]func() (kmsg.Request, func(kmsg.Response) error), clients)
	for i, g := range groups {
		if nexts[i], err = hb.setup(routes[0].scs[i], topic, g); err != nil {
			t.Fatal(err)
		}
	}
	for i := range routes {
		if _, err := routes[i].run(nexts, 200*clients, nil); err != nil {
			t.Fatalf("warm-up %s: %v", routes[i].name, err)
		}
	}
	pids := make([]int, len(c.procs), len(c.procs)+1)
	for i, p := range c.procs {
		pids[i] = p.cmd.Process.Pid
	}
	// Counted on every route (idle on the first two), like the proxies.
	pids = append(pids, fwd.cmd.Process.Pid)
	t.Logf("load average before: %s", loadAvg())
	for r := 0; r < rounds; r++ {
		for i := range routes {
			cpu, err := routes[i].run(nexts, n, pids)
			if err != nil {
				t.Fatalf("round %d, %s: %v", r+1, routes[i].name, err)
			}
			rt := &routes[i]
			rt.cpu = append(rt.cpu, cpu)
			t.Logf("round %d %-17s p50 %6.0f µs  p99 %6.0f µs  CPU %5.1f µs/heartbeat  write syscalls/heartbeat s1 %.2f s2 %.2f", r+1, rt.name,
				rt.lastP50, rt.lastP99, cpu, rt.lastWrites[0], rt.lastWrites[1])
		}
	}
	t.Logf("load average after: %s", loadAvg())
	var rep strings.Builder
	fmt.Fprintf(&rep, "StreamsGroupHeartbeat, %d client(s) with one in flight each, %d per route and round, %d rounds (Kafka 3.9, three instances)\n", clients, n, rounds)
	fmt.Fprintf(&rep, "| route | p50 | p99 | processes' CPU per heartbeat | write syscalls per heartbeat, s1 + s2 |\n|---|---|---|---|---|\n")
	for _, rt := range routes {
		fmt.Fprintf(&rep, "| %s | %.0f µs | %.0f µs | %.1f µs | %.2f |\n", rt.name, percentile(rt.lat, 0.50), percentile(rt.lat, 0.99), median(rt.cpu), median(rt.writes))
	}
	d := routes[0]
	for _, h := range routes[1:] {
		fmt.Fprintf(&rep, "ratios %s / owner: p50 %.2f×, p99 %.2f×, CPU %.2f× (+%.0f µs p50, +%.1f µs CPU)\n", h.name,
			percentile(h.lat, 0.5)/percentile(d.lat, 0.5), percentile(h.lat, 0.99)/percentile(d.lat, 0.99), median(h.cpu)/median(d.cpu),
			percentile(h.lat, 0.5)-percentile(d.lat, 0.5), median(h.cpu)-median(d.cpu))
	}
	t.Log("\n" + rep.String())
	if err := os.WriteFile(filepath.Join(out, "report.md"), []byte(rep.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if os.Getenv("STREAMSHIFT_BENCH_PROFILE") != "" {
		// CPU profiles of the owner and the origin while the hopped
		// heartbeats run (go tool pprof <file>).
		const d = 10 * time.Second
		waits := []func() error{
			(&benchProxy{admin: c.admin[0]}).cpuProfile(filepath.Join(out, "owner-s1.pprof"), d),
			(&benchProxy{admin: c.admin[1]}).cpuProfile(filepath.Join(out, "origin-s2.pprof"), d),
		}
		sent := 0
		for end := time.Now().Add(d + time.Second); time.Now().Before(end); sent += 500 {
			if _, err := routes[1].run(nexts, 500, nil); err != nil {
				t.Fatal(err)
			}
		}
		for _, w := range waits {
			if err := w(); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("profiles of %d hopped heartbeats in %s: owner-s1.pprof, origin-s2.pprof", sent, out)
	}
}

// hopRoute is one address the member's heartbeats are sent to.
type hopRoute struct {
	name, addr string
	// scs are the clients' connections, one each.
	scs []*smallConn
	// lat is every measured round trip in µs; cpu the proxies' CPU µs
	// per heartbeat of each round.
	lat, cpu         []float64
	lastP50, lastP99 float64
	// writes is s1's and s2's write syscalls (/proc/<pid>/io syscw: write
	// and writev) per heartbeat of each round, summed; lastWrites the
	// last round's of each: a batch written in one syscall shows here.
	writes     []float64
	lastWrites [2]float64
}

// run sends n heartbeats, shared among the clients (nexts[i] on the
// route's connection i), each client's one after the other, and returns
// the proxies' CPU µs per heartbeat (pids: the instances; nil for a
// warm-up, not measured).
func (rt *hopRoute) run(nexts []func() (kmsg.Request, func(kmsg.Response) error), n int, pids []int) (float64, error) {
	cpu0, err := procsCPUSeconds(pids)
	if err != nil {
		return 0, err
	}
	var w0 [2]float64
	if pids != nil {
		if w0, err = writeSyscalls(pids[:2]); err != nil {
			return 0, err
		}
	}
	lats := make([][]float64, len(nexts))
	errs := make([]error, len(nexts))
	var wg sync.WaitGroup
	for c := range nexts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			share := n / len(nexts)
			if c < n%len(nexts) {
				share++
			}
			lats[c] = make([]float64, 0, share)
			for i := 0; i < share; i++ {
				req, check := nexts[c]()
				start := time.Now()
				resp, err := rt.scs[c].do(req)
				took := time.Since(start)
				if err == nil {
					err = check(resp)
				}
				if err != nil {
					errs[c] = fmt.Errorf("client %d, heartbeat %d: %w", c, i, err)
					return
				}
				lats[c] = append(lats[c], float64(took.Nanoseconds())/1e3)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	if pids == nil {
		return 0, nil
	}
	cpu1, err := procsCPUSeconds(pids)
	if err != nil {
		return 0, err
	}
	cpu := (cpu1 - cpu0) * 1e6 / float64(n)
	w1, err := writeSyscalls(pids[:2])
	if err != nil {
		return 0, err
	}
	for i := range w1 {
		rt.lastWrites[i] = (w1[i] - w0[i]) / float64(n)
	}
	rt.writes = append(rt.writes, rt.lastWrites[0]+rt.lastWrites[1])
	lat := make([]float64, 0, n)
	for _, l := range lats {
		lat = append(lat, l...)
	}
	rt.lat = append(rt.lat, lat...)
	rt.lastP50, rt.lastP99 = percentile(lat, 0.5), percentile(lat, 0.99)
	return cpu, nil
}

// procsCPUSeconds is the user+system CPU seconds the processes used so far.
func procsCPUSeconds(pids []int) (float64, error) {
	var sum float64
	for _, pid := range pids {
		s, err := procCPUSeconds(pid)
		if err != nil {
			return 0, err
		}
		sum += s
	}
	return sum, nil
}

// writeSyscalls is the write syscalls two processes made so far
// (/proc/<pid>/io syscw, write and writev alike).
func writeSyscalls(pids []int) ([2]float64, error) {
	var out [2]float64
	for i, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
		if err != nil {
			return out, err
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "syscw: "); ok {
				out[i], _ = strconv.ParseFloat(v, 64)
			}
		}
	}
	return out, nil
}

// percentile is the q-quantile of xs (nearest rank).
func percentile(xs []float64, q float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	i := int(q*float64(len(s))+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}
