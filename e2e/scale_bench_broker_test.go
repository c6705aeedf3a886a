//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/streamshift/streamshift/e2e/harness"
)

// The broker TestScaleBenchmark's proxies forward to, in a process of its
// own either way, so its CPU is never the proxy's: kfake (the default, a
// child process of this test binary, TestScaleBenchKfake) or, with
// STREAMSHIFT_SCALE_BROKER=kafka, a real Apache Kafka 3.9 broker started by
// the harness (harness.StartBroker), for the headline run.

const scaleBrokerEnv = "STREAMSHIFT_SCALE_BROKER" // kfake (default) or kafka

// scaleBroker is the benchmark's upstream.
type scaleBroker struct {
	addr   string // its bootstrap
	nodeID int    // its node id, which the proxies' node ports map
	name   string // what the report's first line calls it
	// countsAddr answers GET /counts, the requests the broker received by
	// name (kfake's check of streamshift_upstream_requests_total); empty for
	// Kafka, whose request metrics are JMX's, not exposed here.
	countsAddr string
	stop       func()
}

// startScaleBroker starts the broker kind names (kfake or kafka) with the
// source topic of partitions partitions.
func startScaleBroker(ctx context.Context, t *testing.T, out, kind string, partitions int) *scaleBroker {
	t.Helper()
	switch kind {
	case "kfake":
		child := startScaleChild(t, out, "kfake", "TestScaleBenchKfake", scaleKfakeEnv+"="+strconv.Itoa(partitions))
		f := strings.Fields(child.first)
		// kfake's only broker is node 0.
		return &scaleBroker{addr: f[0], countsAddr: f[1], nodeID: 0, name: "kfake (Kafka 3.9 APIs)", stop: child.stop}
	case "kafka":
		b, err := harness.StartBroker(ctx, harness.BrokerOptions{
			Version: harness.Kafka39,
			Dir:     filepath.Join(out, "broker"),
			// The broker sees one upstream connection per member (the
			// proxy's, for what it forwards and its authorization probes)
			// and one classic group per streams group (its anchor member,
			// session 30 min: group.max.session.timeout.ms's default), so
			// neither group.max.size nor the connection limits
			// (max.connections, max.connections.per.ip) bind at 10,000
			// members: all unbounded by default, the first two set here
			// to their defaults so a template change cannot lower them
			// unnoticed. The harness's one offsets-topic
			// partition puts every group on the one coordinator partition,
			// as one broker would anyway. The heap: the suite's 512m is
			// sized for small tests run side by side; thousands of
			// connections get 1g, so a GC pause is not the proxy's p99.
			//
			// The listen backlog does bind: a join storm of N members
			// makes the proxy dial N upstream connections at once, and
			// Kafka's socket.listen.backlog.size (50) overflowed the
			// accept queue (TcpExtListenOverflows +2,088 at 1,000
			// members); those connections looked open to the proxy until
			// the broker reset them about 15 s later, closing their
			// members mid-steady (408 heartbeat errors in 20 s). The
			// kernel caps it at net.core.somaxconn (4096 here).
			Heap:      "1g",
			Overrides: []string{"group.max.size=2147483647", "group.max.session.timeout.ms=1800000", "socket.listen.backlog.size=4096"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := harness.CreateTopics(ctx, b.Bootstrap, int32(partitions), scaleTopic); err != nil {
			_ = b.Stop()
			t.Fatal(err)
		}
		// The harness's broker is node 1 (e2e/config/server.properties.tmpl).
		return &scaleBroker{addr: b.Bootstrap, nodeID: 1, name: "Apache Kafka " + kafkaJarVersion(harness.Kafka39) + " broker",
			stop: func() { _ = b.Stop() }}
	}
	t.Fatalf("%s=%q: kfake or kafka", scaleBrokerEnv, kind)
	return nil
}

// counts is what the broker received so far, by request name; nil when it
// cannot say (Kafka).
func (b *scaleBroker) counts(t *testing.T) map[string]int64 {
	if b.countsAddr == "" {
		return nil
	}
	return scaleCounts(t, b.countsAddr)
}

// kafkaJarVersion is the Apache Kafka release the e2e build put in
// broker-<version> (kafka-server-<release>.jar), or version itself.
func kafkaJarVersion(version string) string {
	jars, _ := filepath.Glob(filepath.Join(harness.Root(), "broker-"+version, "target", "lib", "kafka-server-[0-9]*.jar"))
	for _, j := range jars {
		if v, ok := strings.CutPrefix(strings.TrimSuffix(filepath.Base(j), ".jar"), "kafka-server-"); ok {
			return v
		}
	}
	return version + ".x"
}

// brokerPer is the broker's requests per request served as the report says
// it: "broker n/a" when the broker cannot count them.
func brokerPer(ph scalePhase) string {
	if ph.broker < 0 {
		return "broker n/a"
	}
	return fmt.Sprintf("broker %.3f", float64(ph.broker)/float64(ph.res.Requests))
}

// brokerReceived is the log's "the broker received" figure.
func brokerReceived(ph scalePhase) string {
	if ph.broker < 0 {
		return "n/a"
	}
	return strconv.FormatInt(ph.broker, 10)
}

// scaleBrokerKind is STREAMSHIFT_SCALE_BROKER, kfake unless set.
func scaleBrokerKind() string {
	if k := os.Getenv(scaleBrokerEnv); k != "" {
		return k
	}
	return "kfake"
}
