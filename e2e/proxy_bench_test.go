//go:build e2e

package e2e_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
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
// partitions), the p99 produce latency added at half of saturation, and the
// proxy's resident memory with 5,000 idle client connections. It reports
// numbers and asserts nothing; run it with STREAMSHIFT_BENCH=1:
//
//	STREAMSHIFT_BENCH=1 go test -tags e2e -run TestProxyBenchmark -v -timeout 30m ./e2e/
func TestProxyBenchmark(t *testing.T) {
	if os.Getenv("STREAMSHIFT_BENCH") == "" {
		t.Skip("benchmark: set STREAMSHIFT_BENCH=1")
	}
	records := envInt("STREAMSHIFT_BENCH_RECORDS", 200_000)
	rounds := envInt("STREAMSHIFT_BENCH_ROUNDS", 3)
	idle := envInt("STREAMSHIFT_BENCH_IDLE_CONNS", 5000)
	out, err := harness.OutDir(t.Name())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	b, err := harness.StartBroker(ctx, harness.BrokerOptions{Version: harness.Kafka39, Dir: filepath.Join(out, "broker"),
		Overrides: []string{"max.connections.per.ip=100000"}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Stop()

	// The proxy runs as its own process so its RSS is its own.
	bin := filepath.Join(out, "streamshift")
	build := exec.Command("go", "build", "-o", bin, "./cmd/streamshift")
	build.Dir = filepath.Dir(harness.Root())
	if msg, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, msg)
	}
	proxyAddr := "127.0.0.1:" + strconv.Itoa(freeRange(t, 5)) // bootstrap + node ports 0..3
	logf, err := os.Create(filepath.Join(out, "proxy.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(bin, "run", "--upstream", b.Bootstrap, "--listen", proxyAddr, "--admin-listen", "",
		"--node-id-max", "3", "--log-level", "warn")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = withoutBenchEnv(os.Environ())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() }()
	waitListening(t, proxyAddr)

	// Idle footprint first, on the fresh process: 5,000 connections that
	// each completed one ApiVersions, so both sides of each are open.
	rssBefore := rssKiB(t, cmd.Process.Pid)
	conns := openIdle(t, proxyAddr, idle)
	time.Sleep(2 * time.Second)
	rssIdle := rssKiB(t, cmd.Process.Pid)
	for _, c := range conns {
		c.Close()
	}

	adm, err := kgo.NewClient(kgo.SeedBrokers(b.Bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	routes := []struct{ name, addr string }{{"direct", b.Bootstrap}, {"proxy", proxyAddr}}
	type result struct{ produce, consume []float64 }
	res := map[string]*result{"direct": {}, "proxy": {}}
	// Round -1 warms the broker's JIT and page cache and is not counted.
	for round := -1; round < rounds; round++ {
		for _, r := range routes {
			topic := fmt.Sprintf("bench-%s-%d", r.name, round+1)
			if _, err := kadm.NewClient(adm).CreateTopic(ctx, 8, 1, nil, topic); err != nil {
				t.Fatal(err)
			}
			p := produceThroughput(t, r.addr, topic, records)
			c := consumeThroughput(t, r.addr, topic, records)
			if round >= 0 {
				res[r.name].produce = append(res[r.name].produce, p)
				res[r.name].consume = append(res[r.name].consume, c)
			}
			t.Logf("round %d %-6s produce %8.0f rec/s  consume %8.0f rec/s", round, r.name, p, c)
		}
	}
	dp, pp := median(res["direct"].produce), median(res["proxy"].produce)
	dc, pc := median(res["direct"].consume), median(res["proxy"].consume)

	// Half of the direct saturation rate, the same target for both routes.
	rate := dp / 2
	lat := map[string][]float64{}
	for round := 0; round < rounds; round++ {
		for _, r := range routes {
			topic := fmt.Sprintf("lat-%s-%d", r.name, round)
			if _, err := kadm.NewClient(adm).CreateTopic(ctx, 8, 1, nil, topic); err != nil {
				t.Fatal(err)
			}
			p99 := produceP99(t, r.addr, topic, rate, 10*time.Second)
			lat[r.name] = append(lat[r.name], p99)
			t.Logf("round %d %-6s p99 produce latency at %.0f rec/s: %.3f ms", round, r.name, rate, p99)
		}
	}
	dl, pl := median(lat["direct"]), median(lat["proxy"])

	// The same at a low rate, where the broker does not queue: what one
	// extra hop costs by itself.
	lowRate := float64(envInt("STREAMSHIFT_BENCH_LOW_RATE", 2000))
	low := map[string][]float64{}
	for round := 0; round < rounds; round++ {
		for _, r := range routes {
			topic := fmt.Sprintf("low-%s-%d", r.name, round)
			if _, err := kadm.NewClient(adm).CreateTopic(ctx, 8, 1, nil, topic); err != nil {
				t.Fatal(err)
			}
			p99 := produceP99(t, r.addr, topic, lowRate, 5*time.Second)
			low[r.name] = append(low[r.name], p99)
			t.Logf("round %d %-6s p99 produce latency at %.0f rec/s: %.3f ms", round, r.name, lowRate, p99)
		}
	}
	dlow, plow := median(low["direct"]), median(low["proxy"])

	rssAfterLoad := rssKiB(t, cmd.Process.Pid)
	time.Sleep(12 * time.Second) // one period of the proxy's memory reclaimer
	rssSettled := rssKiB(t, cmd.Process.Pid)

	report := fmt.Sprintf(`| metric | direct | proxy | proxy/direct or added |
|---|---|---|---|
| produce 1 KiB, acks=all, 8 partitions (rec/s, median of %d) | %.0f | %.0f | %.3f |
| consume (rec/s, median of %d) | %.0f | %.0f | %.3f |
| p99 produce latency at %.0f rec/s (ms, median of %d) | %.3f | %.3f | +%.3f ms |
| p99 produce latency at %.0f rec/s (ms, median of %d) | %.3f | %.3f | +%.3f ms |
| proxy RSS, %d idle client connections, fresh process (MiB) | | %.1f (%.1f with none) | |
| proxy RSS right after the load above / 12 s later (MiB) | | %.1f / %.1f | |
`, rounds, dp, pp, pp/dp, rounds, dc, pc, pc/dc, rate, rounds, dl, pl, pl-dl, lowRate, rounds, dlow, plow, plow-dlow, idle, float64(rssIdle)/1024, float64(rssBefore)/1024, float64(rssAfterLoad)/1024, float64(rssSettled)/1024)
	t.Log("\n" + report)
	_ = os.WriteFile(filepath.Join(out, "report.md"), []byte(report), 0o644)
}

// randomValue is a 1 KiB record value that does not compress.
func randomValue() []byte {
	v := make([]byte, 1024)
	_, _ = rand.Read(v)
	return v
}

func withoutBenchEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "STREAMSHIFT_BENCH") {
			out = append(out, kv)
		}
	}
	return out
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

func produceThroughput(t *testing.T, addr, topic string, n int) float64 {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic), kgo.MaxBufferedRecords(20000),
		kgo.ProducerBatchMaxBytes(1<<20), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
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

func consumeThroughput(t *testing.T, addr, topic string, n int) float64 {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
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

// produceP99 produces at a fixed rate for d and returns the p99 of the time
// from Produce to its acknowledgement, in milliseconds.
func produceP99(t *testing.T, addr, topic string, rate float64, d time.Duration) float64 {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic), kgo.MaxBufferedRecords(100000),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("warm")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	value := randomValue()
	var mu sync.Mutex
	var lats []float64
	// Open loop in 1 ms ticks: each tick sends its share of the rate,
	// whatever the acknowledgements do, so queueing shows in the latency.
	const tick = time.Millisecond
	perTick := rate * tick.Seconds()
	start := time.Now()
	sentTotal := 0
	for ticks := 1; time.Since(start) < d; ticks++ {
		if w := time.Until(start.Add(time.Duration(ticks) * tick)); w > 0 {
			time.Sleep(w)
		}
		for due := int(float64(ticks) * perTick); sentTotal < due; sentTotal++ {
			sent := time.Now()
			cl.Produce(ctx, &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
				if err != nil {
					return
				}
				l := float64(time.Since(sent).Microseconds()) / 1000
				mu.Lock()
				lats = append(lats, l)
				mu.Unlock()
			})
		}
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	sort.Float64s(lats)
	return lats[len(lats)*99/100]
}

// openIdle opens n client connections and completes one ApiVersions on each,
// so the proxy has both sides of every connection established.
func openIdle(t *testing.T, addr string, n int) []net.Conn {
	req := []byte{0, 0, 0, 20, 0, 18, 0, 3, 0, 0, 0, 1, 0, 4, 'b', 'e', 'n', 'c', 0, 2, 'b', 2, '1', 0}
	binary.BigEndian.PutUint32(req, uint32(len(req)-4))
	conns := make([]net.Conn, 0, n)
	for i := 0; i < n; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		conns = append(conns, c)
		if _, err := c.Write(req); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(time.Minute))
		var size [4]byte
		if _, err := io.ReadFull(c, size[:]); err != nil {
			t.Fatalf("connection %d ApiVersions: %v", i, err)
		}
		if _, err := io.CopyN(io.Discard, c, int64(binary.BigEndian.Uint32(size[:]))); err != nil {
			t.Fatal(err)
		}
	}
	return conns
}

func rssKiB(t *testing.T, pid int) int {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return n
		}
	}
	t.Fatal("no VmRSS")
	return 0
}
