package harness

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Broker versions the e2e build provides (e2e/broker-<version>).
const (
	Kafka28 = "2.8" // Apache Kafka 2.8.x in ZooKeeper mode: the oldest broker streamshift supports
	Kafka35 = "3.5" // Apache Kafka 3.5.x: an early KRaft release
	Kafka39 = "3.9" // Apache Kafka 3.9.x: classic groups only, no streams-group APIs
	Kafka44 = "4.4" // Apache Kafka 4.4.0: native streams groups, the reference
)

// brokerVersions are the versions StartBroker knows.
var brokerVersions = []string{Kafka28, Kafka35, Kafka39, Kafka44}

// BrokerOptions configure StartBroker.
type BrokerOptions struct {
	Version string // Kafka28, Kafka35, Kafka39 or Kafka44
	// Dir is the broker's run directory; it must not exist or be empty. Required.
	Dir string
	// Overrides are appended to server.properties (later keys win), e.g.
	// "group.streams.heartbeat.interval.ms=2000".
	Overrides []string
	// ReadyTimeout bounds the wait for ApiVersions + Metadata (default 3 min).
	ReadyTimeout time.Duration
	// Heap is the JVM's -Xmx, e.g. "1g" (default E2E_BROKER_HEAP, else 512m:
	// enough for the suite's brokers, which run several at once).
	Heap string
}

// Broker is a running single-node broker on loopback: combined-mode KRaft, or
// ZooKeeper mode (in the broker's JVM) for Kafka28.
type Broker struct {
	Version   string
	Bootstrap string // 127.0.0.1:<port>
	Dir       string // server.properties, data/, logs/, broker.out
	Log       string // stdout+stderr of the JVM
	p         *proc
}

// StartBroker formats a fresh directory and starts a broker on free loopback ports
// (e2e/bin/broker.sh run), then waits until it answers ApiVersions and Metadata.
func StartBroker(ctx context.Context, o BrokerOptions) (*Broker, error) {
	if !slices.Contains(brokerVersions, o.Version) {
		return nil, fmt.Errorf("broker version %q: want one of %v", o.Version, brokerVersions)
	}
	if err := CheckBuilt("broker-" + o.Version); err != nil {
		return nil, err
	}
	if o.Dir == "" {
		return nil, fmt.Errorf("broker %s: no Dir", o.Version)
	}
	if entries, err := os.ReadDir(o.Dir); err == nil && len(entries) > 0 {
		return nil, fmt.Errorf("broker dir %s is not empty", o.Dir)
	}
	timeout := o.ReadyTimeout
	if timeout == 0 {
		// A broker starts in about 5 s (format included) on the 2-core machine running the
		// suite alone; on one shared with other suites (load 30-57) format and start took
		// 90 s and more, so the wait ended as the broker came up. Only a failure waits longer.
		timeout = 3 * time.Minute
	}
	// The ports were free when FreePorts closed them; the JVMs start seconds later, and
	// tests running in parallel make connections meanwhile, whose local ports come from
	// the same range. A broker that lost a port that way is started again on others.
	for attempt := 1; ; attempt++ {
		b, err := startBrokerOnce(ctx, o, timeout)
		if err == nil || attempt == 3 || !portTaken(filepath.Join(o.Dir, "broker.out")) {
			return b, err
		}
		if err := os.RemoveAll(o.Dir); err != nil {
			return nil, fmt.Errorf("broker dir: %w", err)
		}
	}
}

// portTaken reports whether a broker's log says a listener's port was in use.
func portTaken(log string) bool {
	out, err := os.ReadFile(log)
	return err == nil && bytes.Contains(out, []byte("Address already in use"))
}

func startBrokerOnce(ctx context.Context, o BrokerOptions, timeout time.Duration) (*Broker, error) {
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("broker dir: %w", err)
	}
	ports, err := FreePorts(2)
	if err != nil {
		return nil, err
	}
	b := &Broker{
		Version:   o.Version,
		Bootstrap: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0])),
		Dir:       o.Dir,
		Log:       filepath.Join(o.Dir, "broker.out"),
	}
	args := append([]string{"run", o.Version, o.Dir, strconv.Itoa(ports[0]), strconv.Itoa(ports[1])}, o.Overrides...)
	var env []string
	if o.Heap != "" {
		env = []string{"E2E_BROKER_HEAP=" + o.Heap} // broker.sh's -Xmx
	}
	if jvm := brokerJVM(); jvm != "" {
		env = append(env, "E2E_BROKER_JVM="+jvm)
	}
	b.p, err = startProc("broker-"+o.Version, b.Log, b.Log, nil, nil, env, filepath.Join(Root(), "bin", "broker.sh"), args...)
	if err != nil {
		return nil, err
	}
	if err := WaitKafkaReady(ctx, b.Bootstrap, timeout, b.p.done); err != nil {
		_ = b.Stop()
		return nil, fmt.Errorf("broker %s (log %s): %w", o.Version, b.Log, err)
	}
	return b, nil
}

// PID is the broker JVM's process id.
func (b *Broker) PID() int { return b.p.pid() }

// Stop stops the broker by PID: TERM, then KILL after 30s.
func (b *Broker) Stop() error { return b.p.stop(30 * time.Second) }

// Kill9 crashes the broker.
func (b *Broker) Kill9() { b.p.kill9() }

// WaitKafkaReady polls addr until it answers ApiVersions and a Metadata response lists at
// least one broker. died (may be nil) aborts the wait early when the process exits. opts
// are more options of the probing client (TLS, SASL for a secured listener).
func WaitKafkaReady(ctx context.Context, addr string, timeout time.Duration, died <-chan struct{}, opts ...kgo.Opt) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		if last = probeKafka(ctx, addr, opts...); last == nil {
			return nil
		}
		select {
		case <-died:
			return fmt.Errorf("process exited before %s was ready (last: %v)", addr, last)
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after %s: %v", addr, timeout, last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func probeKafka(ctx context.Context, addr string, opts ...kgo.Opt) error {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.DialTimeout(2 * time.Second),
		kgo.RequestRetries(0), kgo.RetryTimeout(2 * time.Second)}, opts...)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	av := kmsg.NewPtrApiVersionsRequest()
	av.ClientSoftwareName, av.ClientSoftwareVersion = "streamshift-e2e", "0"
	avr, err := av.RequestWith(rctx, cl)
	if err != nil {
		return fmt.Errorf("ApiVersions: %w", err)
	}
	if avr.ErrorCode != 0 || len(avr.ApiKeys) == 0 {
		return fmt.Errorf("ApiVersions: error code %d, %d keys", avr.ErrorCode, len(avr.ApiKeys))
	}
	md := kmsg.NewPtrMetadataRequest()
	mdr, err := md.RequestWith(rctx, cl)
	if err != nil {
		return fmt.Errorf("Metadata: %w", err)
	}
	if len(mdr.Brokers) == 0 {
		return fmt.Errorf("Metadata lists no broker yet")
	}
	return nil
}

// FreePorts returns n distinct loopback ports that were free a moment ago.
func FreePorts(n int) ([]int, error) {
	ls := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// brokerJVM is how the suite's brokers run (broker.sh's E2E_BROKER_JVM,
// unless the environment sets it): Kafka's collector (G1) with the client
// JIT alone, as the suite's apps and tools already run. A test's broker
// serves little traffic, and the server JIT's compilations were about a
// quarter of a migration test's CPU on 2 cores (broker 63 → 34 CPU-s,
// the whole of TestStreamsProxySmokeMigration28 122 → 85), on a suite that
// is CPU-bound. The collector stays G1: under the serial one a broker
// sent 8 Produce size prefixes of 100 MiB (TestOverload) collected
// without end and stopped answering. The benchmarks (STREAMSHIFT_BENCH)
// keep both JITs: their baseline is a broker as production runs it.
func brokerJVM() string {
	if os.Getenv("E2E_BROKER_JVM") != "" || os.Getenv("STREAMSHIFT_BENCH") != "" {
		return ""
	}
	return "-XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:TieredStopAtLevel=1"
}
