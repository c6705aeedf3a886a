package main

import (
	"crypto/tls"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"

	"github.com/streamshift/streamshift/config"
)

// TestProxyOptionsUpstreamConfig: a SASL_SSL properties file reaches every
// connection to the brokers: the forwarded ones get its TLS, the proxy's
// own client its TLS and SASL, the upstream its bootstrap.servers.
func TestProxyOptionsUpstreamConfig(t *testing.T) {
	file := filepath.Join(t.TempDir(), "client.properties")
	props := "bootstrap.servers=kafka-1:9093\nsecurity.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-256\n" +
		"sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"streamshift\" password=\"secret\";\n"
	if err := os.WriteFile(file, []byte(props), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := config.Load([]string{"--upstream-config", file, "--listen", "127.0.0.1:19092"}, nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	opts := proxyOptions(cfg, zerolog.Nop(), nil)
	if opts.UpstreamTLS == nil || len(opts.Upstream) != 1 || opts.Upstream[0] != "kafka-1:9093" {
		t.Fatalf("forwarded connections: TLS %v, upstream %v", opts.UpstreamTLS != nil, opts.Upstream)
	}
	cl, err := kgo.NewClient(opts.ControlPlane...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	mechs, _ := cl.OptValue(kgo.SASL).([]sasl.Mechanism)
	if len(mechs) != 1 || mechs[0].Name() != "SCRAM-SHA-256" {
		t.Fatalf("proxy control-plane SASL %v, want SCRAM-SHA-256", mechs)
	}
	if tc, _ := cl.OptValue(kgo.DialTLSConfig).(*tls.Config); tc == nil {
		t.Fatal("proxy control-plane client without TLS")
	}
}
