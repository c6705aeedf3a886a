//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamshift/streamshift/e2e/harness"
	"github.com/streamshift/streamshift/proxy"
)

// e2eProxy is a streamshift proxy in this process in front of a real broker.
type e2eProxy struct {
	*proxy.Proxy
	addr  string
	nodes map[string]bool // every address the proxy hands out
}

func startE2EProxy(t *testing.T, upstream, logPath string) *e2eProxy {
	t.Helper()
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logFile.Close() })
	for attempt := 0; attempt < 10; attempt++ {
		ports, err := harness.FreePorts(1)
		if err != nil {
			t.Fatal(err)
		}
		opts := proxy.Options{
			Upstream:  []string{upstream},
			Listen:    "127.0.0.1:" + strconv.Itoa(ports[0]),
			NodeIDMax: 3, // the e2e broker is node 1
			Log:       zerolog.New(logFile).With().Timestamp().Logger(),
		}
		p, err := proxy.New(opts)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		errCh := make(chan error, 1)
		go func() { errCh <- p.Run(ctx) }()
		deadline := time.Now().Add(30 * time.Second)
		for !p.Ready() && time.Now().Before(deadline) {
			select {
			case err := <-errCh:
				cancel()
				if err != nil && strings.Contains(err.Error(), "start listeners") {
					p = nil
				} else {
					t.Fatalf("proxy: %v", err)
				}
			case <-time.After(10 * time.Millisecond):
			}
			if p == nil {
				break
			}
		}
		if p == nil {
			continue
		}
		if !p.Ready() {
			cancel()
			t.Fatal("proxy not ready")
		}
		t.Cleanup(func() {
			cancel()
			if err := <-errCh; err != nil {
				t.Errorf("proxy: %v", err)
			}
		})
		ep := &e2eProxy{Proxy: p, addr: opts.Listen, nodes: map[string]bool{opts.Listen: true}}
		for id := int32(0); id <= 3; id++ {
			ep.nodes[p.NodeAddr(id)] = true
		}
		return ep
	}
	t.Fatal("no free ports for the proxy")
	return nil
}

// TestProxyJavaClients runs the Java ClientCheck (idempotent and transactional
// producers, classic and KIP-848 consumer groups) through the proxy against
// real 3.9 and 4.4 brokers: it must behave exactly as it does direct
// (e2e/scenarios TestClientCheck).
func TestProxyJavaClients(t *testing.T) {
	t.Parallel()
	cases := []struct {
		broker, protocol, build string
		txn                     bool
	}{
		{harness.Kafka39, "classic", harness.App39, false},
		{harness.Kafka39, "classic", "", true},
		{harness.Kafka44, "classic", "", true},
		{harness.Kafka44, "consumer", "", false},
		{harness.Kafka44, "consumer", "", true},
	}
	out, err := harness.OutDir(t.Name())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	brokers := map[string]*harness.Broker{}
	proxies := map[string]*e2eProxy{}
	defer func() {
		for _, b := range brokers {
			_ = b.Stop()
		}
	}()
	outer := t // the proxies live as long as the whole test, not one case
	for i, tc := range cases {
		name := fmt.Sprintf("%s-%s-txn=%t", tc.broker, tc.protocol, tc.txn)
		t.Run(name, func(t *testing.T) {
			if brokers[tc.broker] == nil {
				b, err := harness.StartBroker(ctx, harness.BrokerOptions{Version: tc.broker, Dir: filepath.Join(out, "broker-"+tc.broker)})
				if err != nil {
					t.Fatalf("start broker %s: %v", tc.broker, err)
				}
				brokers[tc.broker] = b
				proxies[tc.broker] = startE2EProxy(outer, b.Bootstrap, filepath.Join(out, "proxy-"+tc.broker+".log"))
			}
			p := proxies[tc.broker]
			cctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
			defer cancel()
			res, err := harness.RunClientCheck(cctx, harness.ClientCheckOptions{
				Build: tc.build, Dir: filepath.Join(out, fmt.Sprintf("check-%d", i)), Bootstrap: p.addr,
				Topic: fmt.Sprintf("pcheck-%d", i), GroupID: fmt.Sprintf("pcheck-%d", i),
				GroupProtocol: tc.protocol, Transactional: tc.txn, Records: 500,
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Produced != 500 || res.Consumed != 500 || res.Duplicates != 0 {
				t.Fatalf("got %+v, want 500 produced and consumed exactly once", res)
			}
		})
	}
	// DescribeQuorum v2 (KIP-853) through the proxy: kafka-metadata-quorum
	// works and shows the voters' CONTROLLER endpoints as the upstream
	// reports them (the proxy has no controller ports, so it passes them).
	t.Run("4.4-metadata-quorum", func(t *testing.T) {
		b, p := brokers[harness.Kafka44], proxies[harness.Kafka44]
		if b == nil {
			t.Skip("no 4.4 case ran")
		}
		props, err := os.ReadFile(filepath.Join(b.Dir, "server.properties"))
		if err != nil {
			t.Fatal(err)
		}
		var voter string // controller.quorum.voters=1@host:port
		for _, line := range strings.Split(string(props), "\n") {
			if v, ok := strings.CutPrefix(line, "controller.quorum.voters="); ok {
				_, voter, _ = strings.Cut(v, "@")
			}
		}
		java := "java"
		if h := os.Getenv("JAVA_HOME"); h != "" {
			java = filepath.Join(h, "bin", "java")
		}
		cmd := exec.Command(java, "-Xmx256m", "-XX:TieredStopAtLevel=1",
			"-Dlog4j2.configurationFile="+filepath.Join(harness.Root(), "config", "log4j2-tools.properties"),
			"-cp", filepath.Join(harness.Root(), "tools-4.4", "target", "lib", "*"),
			"org.apache.kafka.tools.MetadataQuorumCommand", "--bootstrap-server", p.addr, "describe", "--status")
		outb, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kafka-metadata-quorum describe --status: %v\n%s", err, outb)
		}
		if want := `"CONTROLLER://` + voter + `"`; voter == "" || !strings.Contains(string(outb), "LeaderId:") || !strings.Contains(string(outb), want) {
			t.Fatalf("want the leader and voter endpoint %s, got:\n%s", want, outb)
		}
	})
}

// addrWatch records every endpoint a kgo client connects to.
type addrWatch struct {
	mu    sync.Mutex
	addrs map[string]bool
}

func (w *addrWatch) OnBrokerConnect(meta kgo.BrokerMetadata, _ time.Duration, _ net.Conn, _ error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.addrs == nil {
		w.addrs = map[string]bool{}
	}
	w.addrs[net.JoinHostPort(meta.Host, strconv.Itoa(int(meta.Port)))] = true
}

// TestProxyFranzGo produces, consumes in classic and (4.4) KIP-848 groups,
// and runs a transaction through the proxy with franz-go, asserting the
// client never learns an upstream address.
func TestProxyFranzGo(t *testing.T) {
	t.Parallel()
	out, err := harness.OutDir(t.Name())
	if err != nil {
		t.Fatal(err)
	}
	for _, version := range []string{harness.Kafka39, harness.Kafka44} {
		t.Run(version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			b, err := harness.StartBroker(ctx, harness.BrokerOptions{Version: version, Dir: filepath.Join(out, "broker-"+version)})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Stop()
			p := startE2EProxy(t, b.Bootstrap, filepath.Join(out, "proxy-"+version+".log"))
			var w addrWatch
			newClient := func(opts ...kgo.Opt) *kgo.Client {
				cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(p.addr), kgo.WithHooks(&w)}, opts...)...)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(cl.Close)
				return cl
			}
			adm := kadm.NewClient(newClient())
			if _, err := adm.CreateTopic(ctx, 8, 1, nil, "franz"); err != nil {
				t.Fatal(err)
			}
			txn := newClient(kgo.TransactionalID("franz-txn"))
			if err := txn.BeginTransaction(); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 1000; i++ {
				txn.Produce(ctx, &kgo.Record{Topic: "franz", Value: []byte(strconv.Itoa(i))}, nil)
			}
			if err := txn.Flush(ctx); err != nil { // EndTransaction does not flush
				t.Fatal(err)
			}
			if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
				t.Fatal(err)
			}
			groups := map[string][]kgo.Opt{"classic": {kgo.Balancers(kgo.CooperativeStickyBalancer())}}
			if version == harness.Kafka44 {
				groups["kip848"] = []kgo.Opt{kgo.Balancers(kgo.RangeBalancer()), kgo.ServerSideBalancer()}
			}
			for name, gopts := range groups {
				cons := newClient(append([]kgo.Opt{kgo.ConsumerGroup("franz-" + name), kgo.ConsumeTopics("franz"),
					kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted())}, gopts...)...)
				seen := map[string]bool{}
				for len(seen) < 1000 && ctx.Err() == nil {
					cons.PollFetches(ctx).EachRecord(func(r *kgo.Record) { seen[string(r.Value)] = true })
				}
				if len(seen) != 1000 {
					t.Fatalf("%s group consumed %d of 1000", name, len(seen))
				}
				if err := cons.CommitUncommittedOffsets(ctx); err != nil {
					t.Fatal(err)
				}
			}
			w.mu.Lock()
			defer w.mu.Unlock()
			for a := range w.addrs {
				if !p.nodes[a] {
					t.Errorf("client connected to %s, not a proxy address (upstream %s)", a, b.Bootstrap)
				}
			}
		})
	}
}

// TestProxyKafkaSmokeClassic runs Kafka's own Streams smoke test (driver and
// two clients, the second joining mid-run: windowed aggregations, suppress,
// re-keying, a foreign-key join) on the classic protocol through the proxy,
// against 3.9 (at-least-once) and 4.4 (exactly-once v2).
func TestProxyKafkaSmokeClassic(t *testing.T) {
	t.Parallel()
	out, err := harness.OutDir(t.Name())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ version, guarantee string }{
		{harness.Kafka39, "at_least_once"},
		{harness.Kafka44, "exactly_once_v2"},
	} {
		t.Run(tc.version, func(t *testing.T) {
			t.Parallel() // a broker of its own each
			b, err := harness.StartBroker(context.Background(), harness.BrokerOptions{Version: tc.version, Dir: filepath.Join(out, "broker-"+tc.version)})
			if err != nil {
				t.Fatalf("start broker: %v", err)
			}
			defer b.Stop()
			p := startE2EProxy(t, b.Bootstrap, filepath.Join(out, "proxy-"+tc.version+".log"))
			ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
			defer cancel()
			err = harness.RunKafkaSmoke(ctx, harness.SmokeOptions{
				Version: tc.version, Dir: filepath.Join(out, "smoke-"+tc.version), Bootstrap: p.addr,
				GroupProtocol: "classic", Guarantee: tc.guarantee, Clients: 2,
			})
			if err != nil {
				t.Fatalf("smoke test through the proxy (logs in %s): %v", out, err)
			}
		})
	}
}
