//go:build e2e

package e2e_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamshift/streamshift/e2e/harness"
)

// The latency rounds of TestProxyBenchmark run their producer in a separate
// process, so the test process (its GC, the throughput clients' leftovers) is
// not in the measured path. The process is this test binary again, running
// TestProxyBenchLoadgen with its job in the environment.

const loadgenEnv = "STREAMSHIFT_LOADGEN"

// loadgenJob is what one paced producer run does.
type loadgenJob struct {
	Addr   string        `json:"addr"`
	Topic  string        `json:"topic"`
	Rate   float64       `json:"rate"`   // records per second
	Warmup time.Duration `json:"warmup"` // produced at the rate, not counted
	For    time.Duration `json:"for"`    // counted
}

// loadgenResult is the paced producer's report, one JSON line on stdout.
type loadgenResult struct {
	Records  int     `json:"records"`  // counted records
	Achieved float64 `json:"achieved"` // counted records per second actually sent
	P50      float64 `json:"p50_ms"`
	P99      float64 `json:"p99_ms"`
	P999     float64 `json:"p999_ms"`
	Max      float64 `json:"max_ms"`
	// MaxBurst is the most records sent back to back in one wake-up of the
	// pacer: the pacing's granularity (1 when it keeps up record by record).
	MaxBurst int `json:"max_burst"`
	Errors   int `json:"errors"`
}

// TestProxyBenchLoadgen is the load-generator process; it does nothing
// unless TestProxyBenchmark started it.
func TestProxyBenchLoadgen(t *testing.T) {
	spec := os.Getenv(loadgenEnv)
	if spec == "" {
		t.Skip("load-generator process of TestProxyBenchmark")
	}
	var job loadgenJob
	if err := json.Unmarshal([]byte(spec), &job); err != nil {
		t.Fatal(err)
	}
	res, err := pacedProduce(job)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	fmt.Printf("LOADGEN %s\n", b)
}

// pacedProduce sends 1 KiB records on a per-record schedule (record i is due
// at i/rate) and measures each record from its Produce call to its
// acknowledgement. It never waits for acknowledgements before sending
// (open loop), so broker or proxy queueing shows as latency instead of a
// lower rate; when the pacer falls behind it sends what is due at once and
// reports the largest such burst.
func pacedProduce(job loadgenJob) (loadgenResult, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(job.Addr), kgo.DefaultProduceTopic(job.Topic),
		kgo.MaxBufferedRecords(1<<20), kgo.ProducerLinger(0),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		return loadgenResult{}, err
	}
	defer cl.Close()
	ctx := context.Background()
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("warm")}).FirstErr(); err != nil {
		return loadgenResult{}, err
	}
	value := randomValue()
	total := int((job.Warmup + job.For).Seconds() * job.Rate)
	skip := int(job.Warmup.Seconds() * job.Rate)
	lats := make([]float64, total) // ms; -1 for a failed record
	interval := time.Duration(float64(time.Second) / job.Rate)
	maxBurst := 0
	start := time.Now()
	var countedStart, countedEnd time.Time
	for i := 0; i < total; {
		now := time.Now()
		due := min(int(now.Sub(start).Seconds()*job.Rate)+1, total)
		if due <= i {
			time.Sleep(start.Add(time.Duration(i) * interval).Sub(now))
			continue
		}
		maxBurst = max(maxBurst, due-i)
		for ; i < due; i++ {
			if i == skip {
				countedStart = time.Now()
			}
			idx, sent := i, time.Now()
			cl.Produce(ctx, &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
				if err != nil {
					lats[idx] = -1
					return
				}
				lats[idx] = float64(time.Since(sent).Nanoseconds()) / 1e6
			})
		}
	}
	countedEnd = time.Now()
	if err := cl.Flush(ctx); err != nil {
		return loadgenResult{}, err
	}
	var counted []float64
	errs := 0
	for _, l := range lats[skip:] {
		if l < 0 {
			errs++
			continue
		}
		counted = append(counted, l)
	}
	if len(counted) == 0 {
		return loadgenResult{}, fmt.Errorf("no record acknowledged (%d errors)", errs)
	}
	sort.Float64s(counted)
	q := func(p float64) float64 {
		return counted[min(len(counted)-1, int(math.Ceil(p*float64(len(counted))))-1)]
	}
	return loadgenResult{
		Records: total - skip, Achieved: float64(total-skip) / countedEnd.Sub(countedStart).Seconds(),
		P50: q(0.50), P99: q(0.99), P999: q(0.999), Max: counted[len(counted)-1],
		MaxBurst: maxBurst, Errors: errs,
	}, nil
}

// runLoadgen runs one paced producer job in a child process.
func runLoadgen(t *testing.T, job loadgenJob) loadgenResult {
	t.Helper()
	spec, _ := json.Marshal(job)
	cmd := exec.Command(os.Args[0], "-test.run=^TestProxyBenchLoadgen$", "-test.count=1")
	cmd.Env = append(harness.Environ(), loadgenEnv+"="+string(spec))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("load generator: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "LOADGEN "); ok {
			var res loadgenResult
			if err := json.Unmarshal([]byte(rest), &res); err != nil {
				t.Fatalf("load generator output %q: %v", rest, err)
			}
			if res.Errors > 0 {
				t.Errorf("load generator: %d records failed", res.Errors)
			}
			return res
		}
	}
	t.Fatalf("load generator printed no result:\n%s", out)
	return loadgenResult{}
}

// perfTestResult is the summary line of Kafka's kafka-producer-perf-test.
type perfTestResult struct {
	Achieved, P50, P99, P999, Max float64
}

var perfTestSummary = regexp.MustCompile(`(\d+) records sent, ([\d.]+) records/sec .* ([\d.]+) ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th, (\d+) ms 99.9th`)

// perfTestAvailable says whether the Maven-built Kafka 4.4 tools classpath
// (e2e/tools-4.4) is there for kafka-producer-perf-test.
func perfTestAvailable() bool {
	return harness.CheckBuilt("tools-4.4") == nil
}

// runPerfTest runs Kafka's own producer benchmark (ProducerPerformance, the
// class behind kafka-producer-perf-test.sh) at a fixed rate: a second,
// independent load generator (Java client, its own pacing and its own
// per-record latency from send() to the callback).
func runPerfTest(t *testing.T, addr, topic string, rate float64, d time.Duration) perfTestResult {
	t.Helper()
	java := "java"
	if h := os.Getenv("JAVA_HOME"); h != "" {
		java = filepath.Join(h, "bin", "java")
	}
	n := int(rate * d.Seconds())
	cmd := exec.Command(java, "-Xmx512m", "-cp", filepath.Join(harness.Root(), "tools-4.4", "target", "lib", "*"),
		"-Dlog4j2.configurationFile="+filepath.Join(harness.Root(), "config", "log4j2-tools.properties"),
		"org.apache.kafka.tools.ProducerPerformance",
		"--topic", topic, "--num-records", strconv.Itoa(n), "--record-size", "1024",
		"--throughput", strconv.FormatFloat(rate, 'f', 0, 64),
		"--producer-props", "bootstrap.servers="+addr, "acks=all", "compression.type=none")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kafka-producer-perf-test: %v\n%s", err, out)
	}
	var last []string
	s := bufio.NewScanner(strings.NewReader(string(out)))
	for s.Scan() {
		if m := perfTestSummary.FindStringSubmatch(s.Text()); m != nil {
			last = m
		}
	}
	if last == nil {
		t.Fatalf("kafka-producer-perf-test printed no summary:\n%s", out)
	}
	f := func(i int) float64 { v, _ := strconv.ParseFloat(last[i], 64); return v }
	return perfTestResult{Achieved: f(2), Max: f(3), P50: f(4), P99: f(6), P999: f(7)}
}
