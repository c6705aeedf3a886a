//go:build e2e

package e2e_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamshift/streamshift/e2e/harness"
	"github.com/streamshift/streamshift/internal/testpki"
)

// TestProxyBenchmarkTLS measures what TLS costs streamshift, against a real
// Kafka 3.9 broker with PLAINTEXT and SSL listeners, in one run with rounds
// interleaved: produce+consume throughput (1 KiB records, acks=all, 8
// partitions) and the proxy process's CPU seconds per GiB for
//   - streamshift in plaintext (PLAINTEXT listener),
//   - streamshift with TLS on both sides (clients → TLS → streamshift →
//     TLS → SSL listener),
//   - e2e/forwarder terminating TLS on both sides with crypto/tls (no
//     Kafka awareness), in front of an SSL listener advertising it.
//
// It asserts nothing; run it with STREAMSHIFT_BENCH=1:
//
//	STREAMSHIFT_BENCH=1 go test -tags e2e -run TestProxyBenchmarkTLS -v -timeout 30m ./e2e/
//
// STREAMSHIFT_BENCH_ROUNDS (3) and _RECORDS (500000) as in TestProxyBenchmark.
func TestProxyBenchmarkTLS(t *testing.T) {
	harness.NeedBench(t)
	records := envInt("STREAMSHIFT_BENCH_RECORDS", 500_000)
	rounds := envInt("STREAMSHIFT_BENCH_ROUNDS", 3)
	out, err := harness.OutDir(t.Name())
	if err != nil {
		t.Fatal(err)
	}
	loadStart := loadAvg()
	ctx := context.Background()

	_, keystore, brokerCA, err := harness.WriteBrokerKeystore(filepath.Join(out, "pki"))
	if err != nil {
		t.Fatal(err)
	}
	pf, err := testpki.NewServerFiles(filepath.Join(out, "pki"), "bench-proxy", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	proxyCA, certFile, keyFile := pf.CA, pf.CertFile, pf.KeyFile
	// SSL for streamshift (it rewrites addresses), SSLFWD advertising the
	// forwarder's address.
	ssl, sslFwd, fwdListen := freeRange(t, 1), freeRange(t, 1), freeRange(t, 1)
	overrides := []string{"max.connections.per.ip=100000", "log.segment.delete.delay.ms=1000",
		fmt.Sprintf("listeners=PLAINTEXT://127.0.0.1:@BPORT@,CONTROLLER://127.0.0.1:@CPORT@,SSL://127.0.0.1:%d,SSLFWD://127.0.0.1:%d", ssl, sslFwd),
		fmt.Sprintf("advertised.listeners=PLAINTEXT://127.0.0.1:@BPORT@,SSL://127.0.0.1:%d,SSLFWD://127.0.0.1:%d", ssl, fwdListen),
		"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SSL:SSL,SSLFWD:SSL",
		"ssl.keystore.type=PEM", "ssl.keystore.location=" + keystore,
	}
	b, err := harness.StartBroker(ctx, harness.BrokerOptions{Version: harness.Kafka39, Dir: filepath.Join(out, "broker"), Overrides: overrides})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Stop()

	src := filepath.Dir(harness.Root())
	plain := startBenchProxy(t, out, "proxy", src, b.Bootstrap, false)
	defer plain.stop()
	secure := startBenchProxy(t, out, "proxy-tls", src, fmt.Sprintf("127.0.0.1:%d", ssl), false,
		"STREAMSHIFT_TLS_CERT_FILE="+certFile, "STREAMSHIFT_TLS_KEY_FILE="+keyFile,
		"STREAMSHIFT_UPSTREAM_TLS_ENABLED=true", "STREAMSHIFT_UPSTREAM_TLS_CA_FILE="+brokerCA)
	defer secure.stop()
	fwd := startBenchForwarder(t, out, "tls-fwd", fmt.Sprintf("127.0.0.1:%d", fwdListen), fmt.Sprintf("127.0.0.1:%d", sslFwd), true,
		"-tls-cert", certFile, "-tls-key", keyFile, "-target-ca", brokerCA)
	defer fwd.stop()

	clientTLS := []kgo.Opt{kgo.DialTLSConfig(&tls.Config{RootCAs: proxyCA.Pool(), MinVersion: tls.VersionTLS12})}
	routes := []struct {
		name, label, addr string
		proxy             *benchProxy
		opts              []kgo.Opt
	}{
		{"proxy", "streamshift, plaintext", plain.addr, plain, nil},
		{"proxy-tls", "streamshift, TLS both sides", secure.addr, secure, clientTLS},
		{"tls-fwd", "Go forwarder, TLS both sides", fwd.addr, fwd, clientTLS},
	}

	adm, err := kgo.NewClient(kgo.SeedBrokers(b.Bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	series := map[string]map[string][]float64{}
	add := func(metric, route string, v float64) {
		if series[metric] == nil {
			series[metric] = map[string][]float64{}
		}
		series[metric][route] = append(series[metric][route], v)
	}
	med := func(metric, route string) float64 { return median(series[metric][route]) }
	gib := float64(records) * 1024 / (1 << 30)
	for round := -1; round < rounds; round++ { // round -1 warms up
		for _, r := range routes {
			topic := fmt.Sprintf("tls-bench-%s-%d", r.name, round+1)
			if _, err := kadm.NewClient(adm).CreateTopic(ctx, 8, 1, nil, topic); err != nil {
				t.Fatal(err)
			}
			cpu0 := r.proxy.cpuSeconds(t)
			p := produceThroughput(t, r.addr, topic, records, r.opts...)
			cpu1 := r.proxy.cpuSeconds(t)
			c := consumeThroughput(t, r.addr, topic, records, r.opts...)
			cpu2 := r.proxy.cpuSeconds(t)
			if _, err := kadm.NewClient(adm).DeleteTopics(ctx, topic); err != nil {
				t.Logf("delete %s: %v", topic, err)
			}
			if round >= 0 {
				add("produce", r.name, p)
				add("consume", r.name, c)
				add("cpu-produce", r.name, (cpu1-cpu0)/gib)
				add("cpu-consume", r.name, (cpu2-cpu1)/gib)
			}
			t.Logf("round %d %-9s produce %8.0f rec/s  consume %8.0f rec/s  CPU %.2f / %.2f s per GiB", round, r.name, p, c, (cpu1-cpu0)/gib, (cpu2-cpu1)/gib)
		}
	}

	var md strings.Builder
	fmt.Fprintf(&md, "load average at start %s, at end %s; %d rounds of %d records\n\n", loadStart, loadAvg(), rounds, records)
	md.WriteString("| metric |")
	for _, r := range routes {
		md.WriteString(" " + r.label + " |")
	}
	md.WriteString(" streamshift TLS / Go TLS forwarder |\n|---|---|---|---|---|\n")
	for _, m := range []struct{ key, label, format string }{
		{"produce", "produce (rec/s, median)", "%.0f"},
		{"consume", "consume (rec/s, median)", "%.0f"},
		{"cpu-produce", "proxy CPU per GiB produced (s, user+system, median)", "%.2f"},
		{"cpu-consume", "proxy CPU per GiB consumed (s, median)", "%.2f"},
	} {
		fmt.Fprintf(&md, "| %s |", m.label)
		for _, r := range routes {
			fmt.Fprintf(&md, " "+m.format+" |", med(m.key, r.name))
		}
		fmt.Fprintf(&md, " %.2f |\n", med(m.key, "proxy-tls")/med(m.key, "tls-fwd"))
	}
	t.Logf("\n%s", md.String())
	if err := os.WriteFile(filepath.Join(out, "report.md"), []byte(md.String()), 0o644); err != nil {
		t.Error(err)
	}
}
