package config

import (
	"crypto/tls"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamshift/streamshift/internal/testpki"
)

// brokerPKI is a broker's CA and certificate (for localhost only, so that a
// dial of 127.0.0.1 fails the host name check), a client certificate of
// the same CA, and stores of both in every type, written to dir.
type brokerPKI struct {
	dir          string
	ca           *testpki.CA
	server       tls.Certificate
	client       *testpki.Pair
	trust        map[string]string // type → truststore file
	keystore     map[string]string // type → keystore file
	otherCATrust string            // a JKS truststore of another CA
}

const storePass = "store-secret"

func newBrokerPKI(t *testing.T) *brokerPKI {
	t.Helper()
	dir := t.TempDir()
	ca, err := testpki.NewCA("broker-ca")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ca.IssueNow("broker", "localhost")
	if err != nil {
		t.Fatal(err)
	}
	client, err := ca.IssueNow("streamshift")
	if err != nil {
		t.Fatal(err)
	}
	server, err := srv.TLS()
	if err != nil {
		t.Fatal(err)
	}
	p := &brokerPKI{dir: dir, ca: ca, server: server, client: client, trust: map[string]string{}, keystore: map[string]string{}}
	write := func(name string) func([]byte, error) string {
		return func(b []byte, err error) string {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
			f := filepath.Join(dir, name)
			if err := os.WriteFile(f, b, 0o600); err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	p.trust["JKS"] = write("trust.jks")(ca.TrustJKS(storePass))
	p.trust["PKCS12"] = write("trust.p12")(ca.TrustPKCS12(storePass))
	p.trust["PEM"] = write("trust.pem")(ca.CertPEM, nil)
	p.keystore["JKS"] = write("key.jks")(client.JKS("streamshift", storePass, storePass))
	p.keystore["PKCS12"] = write("key.p12")(client.PKCS12(storePass))
	p.keystore["PEM"] = write("key.pem")(append(append([]byte{}, client.KeyPEM...), client.CertPEM...), nil)
	other, err := testpki.NewCA("other-ca")
	if err != nil {
		t.Fatal(err)
	}
	p.otherCATrust = write("other.jks")(other.TrustJKS(storePass))
	return p
}

// props writes a properties file of lines and returns its path.
func (p *brokerPKI) props(t *testing.T, lines ...string) string {
	t.Helper()
	f, err := os.CreateTemp(p.dir, "client-*.properties")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(strings.Join(lines, "\n") + "\n"); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}

// handshake runs a TLS handshake of client against a broker serving p's
// certificate (requiring a client certificate of p's CA when mtls), as
// streamshift dials host; it returns the client's error and the common
// name of the certificate the broker got.
func (p *brokerPKI) handshake(t *testing.T, client *tls.Config, host string, mtls bool) (string, error) {
	t.Helper()
	srvCfg := &tls.Config{Certificates: []tls.Certificate{p.server}, ClientCAs: p.ca.Pool()}
	if mtls {
		srvCfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	// Loopback TCP, not net.Pipe: a side failing the handshake writes
	// its alert while the other writes too, which an unbuffered pipe
	// never completes.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan string, 1)
	go func() {
		a, err := ln.Accept()
		if err != nil {
			got <- ""
			return
		}
		defer a.Close()
		srv := tls.Server(a, srvCfg)
		if srv.Handshake() != nil {
			got <- ""
			return
		}
		cn := ""
		if pc := srv.ConnectionState().PeerCertificates; len(pc) > 0 {
			cn = pc[0].Subject.CommonName
		}
		// A TLS 1.3 client learns it was refused on its first read.
		_, _ = srv.Write([]byte{1})
		got <- cn
	}()
	b, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cfg := client.Clone()
	if cfg.ServerName == "" && !cfg.InsecureSkipVerify {
		cfg.ServerName = host // what the proxy and kgo do per address
	}
	tc := tls.Client(b, cfg)
	err = tc.Handshake()
	if err == nil {
		_, err = tc.Read(make([]byte, 1))
	}
	b.Close()
	return <-got, err
}

func loadProps(t *testing.T, file string, args ...string) (*Config, []string, error) {
	t.Helper()
	return Load(append([]string{"--upstream-config", file}, args...), nil, io.Discard)
}

// TestUpstreamConfigProtocols: each security.protocol sets TLS and the
// control plane's SASL as Kafka's clients would, and bootstrap.servers is
// the upstream when --upstream is left out.
func TestUpstreamConfigProtocols(t *testing.T) {
	p := newBrokerPKI(t)
	jaas := `sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="streamshift" password="s3cr=t;x";`
	for _, tc := range []struct {
		protocol  string
		tls, sasl bool
	}{
		{"PLAINTEXT", false, false},
		{"SSL", true, false},
		{"SASL_PLAINTEXT", false, true},
		{"sasl_ssl", true, true}, // Kafka takes it in any case
	} {
		t.Run(tc.protocol, func(t *testing.T) {
			file := p.props(t, "bootstrap.servers=kafka-1:9093, kafka-2:9093", "security.protocol="+tc.protocol,
				"ssl.truststore.location="+p.trust["PEM"], "ssl.truststore.type=PEM",
				"sasl.mechanism=SCRAM-SHA-512", jaas)
			cfg, warnings, err := loadProps(t, file)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(cfg.Upstream, ",") != "kafka-1:9093,kafka-2:9093" {
				t.Errorf("upstream %v, want bootstrap.servers", cfg.Upstream)
			}
			if (cfg.UpstreamTLSConfig() != nil) != tc.tls {
				t.Errorf("upstream TLS %v, want on=%v", cfg.UpstreamTLSConfig() != nil, tc.tls)
			}
			cp := cfg.ControlPlane
			if tc.sasl && (cp.SASLMechanism != "SCRAM-SHA-512" || cp.SASLUsername != "streamshift" || cp.SASLPassword != "s3cr=t;x") {
				t.Errorf("control plane SASL %+v", cp)
			}
			if !tc.sasl && cp != (ControlPlane{}) {
				t.Errorf("control plane SASL %+v without SASL", cp)
			}
			// Keys the protocol does not use are said to be ignored.
			unused := strings.Join(warnings, "\n")
			if tc.tls == strings.Contains(unused, "ssl.truststore.location is set but") {
				t.Errorf("warnings %q", warnings)
			}
			if tc.sasl == strings.Contains(unused, "sasl.jaas.config is set but") {
				t.Errorf("warnings %q", warnings)
			}
		})
	}
}

// TestUpstreamConfigTruststores: a JKS, PKCS#12 or PEM truststore (file or
// inline) makes the brokers' certificates trusted; another CA's is not.
func TestUpstreamConfigTruststores(t *testing.T) {
	p := newBrokerPKI(t)
	inline := "ssl.truststore.certificates=" + strings.ReplaceAll(strings.TrimSpace(string(p.ca.CertPEM)), "\n", "\\n\\\n")
	for _, tc := range []struct {
		name  string
		lines []string
		ok    bool
	}{
		{"JKS", []string{"ssl.truststore.location=" + p.trust["JKS"], "ssl.truststore.password=" + storePass}, true},
		{"JKS by default type", []string{"ssl.truststore.location=" + p.trust["JKS"]}, true},
		{"PKCS12", []string{"ssl.truststore.type=PKCS12", "ssl.truststore.location=" + p.trust["PKCS12"], "ssl.truststore.password=" + storePass}, true},
		{"PEM file", []string{"ssl.truststore.type=PEM", "ssl.truststore.location=" + p.trust["PEM"]}, true},
		{"PEM inline", []string{"ssl.truststore.type=PEM", inline}, true},
		{"another CA", []string{"ssl.truststore.location=" + p.otherCATrust, "ssl.truststore.password=" + storePass}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, _, err := loadProps(t, p.props(t, append([]string{"bootstrap.servers=localhost:9093", "security.protocol=SSL"}, tc.lines...)...))
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.handshake(t, cfg.UpstreamTLSConfig(), "localhost", false)
			if (err == nil) != tc.ok {
				t.Fatalf("handshake: %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

// TestUpstreamConfigKeystores: a JKS, PKCS#12 or PEM keystore (file or
// inline) is the client certificate brokers with ssl.client.auth=required
// get.
func TestUpstreamConfigKeystores(t *testing.T) {
	p := newBrokerPKI(t)
	oneLine := func(pem []byte) string {
		return strings.ReplaceAll(strings.TrimSpace(string(pem)), "\n", "\\n")
	}
	for _, tc := range []struct {
		name  string
		lines []string
	}{
		{"JKS", []string{"ssl.keystore.location=" + p.keystore["JKS"], "ssl.keystore.password=" + storePass, "ssl.key.password=" + storePass}},
		{"PKCS12", []string{"ssl.keystore.type=PKCS12", "ssl.keystore.location=" + p.keystore["PKCS12"], "ssl.keystore.password=" + storePass}},
		{"PEM file", []string{"ssl.keystore.type=PEM", "ssl.keystore.location=" + p.keystore["PEM"]}},
		{"PEM inline", []string{"ssl.keystore.type=PEM", "ssl.keystore.certificate.chain=" + oneLine(p.client.CertPEM), "ssl.keystore.key=" + oneLine(p.client.KeyPEM)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines := append([]string{"bootstrap.servers=localhost:9093", "security.protocol=SSL", "ssl.truststore.type=PEM", "ssl.truststore.location=" + p.trust["PEM"]}, tc.lines...)
			cfg, _, err := loadProps(t, p.props(t, lines...))
			if err != nil {
				t.Fatal(err)
			}
			cn, err := p.handshake(t, cfg.UpstreamTLSConfig(), "localhost", true)
			if err != nil || cn != "streamshift" {
				t.Fatalf("mutual TLS: %v, the broker got %q", err, cn)
			}
		})
	}
}

// TestUpstreamConfigEndpointIdentification: by default (https) the
// broker's host name is checked; set empty, it is not, but its chain still
// is.
func TestUpstreamConfigEndpointIdentification(t *testing.T) {
	p := newBrokerPKI(t)
	for _, tc := range []struct {
		name  string
		lines []string
		ok    bool
	}{
		{"https by default: 127.0.0.1 is not localhost", nil, false},
		{"https", []string{"ssl.endpoint.identification.algorithm=https"}, false},
		{"empty: no host name check", []string{"ssl.endpoint.identification.algorithm="}, true},
		{"empty, another CA: the chain is still checked", []string{"ssl.endpoint.identification.algorithm=", "ssl.truststore.type=JKS", "ssl.truststore.location=" + p.otherCATrust}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines := append([]string{"bootstrap.servers=127.0.0.1:9093", "security.protocol=SSL", "ssl.truststore.type=PEM", "ssl.truststore.location=" + p.trust["PEM"]}, tc.lines...)
			cfg, _, err := loadProps(t, p.props(t, lines...))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.handshake(t, cfg.UpstreamTLSConfig(), "127.0.0.1", false); (err == nil) != tc.ok {
				t.Fatalf("handshake: %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

// TestUpstreamConfigErrors: a bad value stops the start naming the file
// and the key.
func TestUpstreamConfigErrors(t *testing.T) {
	p := newBrokerPKI(t)
	base := []string{"bootstrap.servers=localhost:9093"}
	for _, tc := range []struct {
		name  string
		lines []string
		want  string // after "upstream-config FILE: "
	}{
		{"truststore type", []string{"security.protocol=SSL", "ssl.truststore.type=FOO"}, `ssl.truststore.type "FOO": want JKS, PKCS12 or PEM`},
		{"keystore type", []string{"security.protocol=SSL", "ssl.keystore.type=jceks"}, `ssl.keystore.type "jceks": want JKS, PKCS12 or PEM`},
		{"protocol", []string{"security.protocol=TLS"}, `security.protocol "TLS": want PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL`},
		{"bootstrap", []string{"bootstrap.servers=kafka"}, `bootstrap.servers "kafka": address kafka: missing port in address`},
		{"truststore password", []string{"security.protocol=SSL", "ssl.truststore.location=" + p.trust["JKS"], "ssl.truststore.password=wrong"}, "ssl.truststore.location " + p.trust["JKS"] + " (ssl.truststore.type JKS): JKS store: wrong password"},
		{"truststore missing", []string{"security.protocol=SSL", "ssl.truststore.location=/nonexistent.jks"}, "ssl.truststore.location: open /nonexistent.jks: no such file or directory"},
		{"keystore password", []string{"security.protocol=SSL", "ssl.keystore.type=PKCS12", "ssl.keystore.location=" + p.keystore["PKCS12"], "ssl.keystore.password=wrong"}, "ssl.keystore.location " + p.keystore["PKCS12"] + " (ssl.keystore.type PKCS12): PKCS12 keystore"},
		{"inline certificates need PEM", []string{"security.protocol=SSL", "ssl.truststore.certificates=x"}, "ssl.truststore.certificates: inline certificates need ssl.truststore.type=PEM, not JKS"},
		{"endpoint identification", []string{"security.protocol=SSL", "ssl.endpoint.identification.algorithm=http"}, `ssl.endpoint.identification.algorithm "http": want https or empty`},
		{"no mechanism", []string{"security.protocol=SASL_SSL", `sasl.jaas.config=` + plainLoginModule + ` required username="a" password="b";`}, "sasl.mechanism: not set, and Kafka's default GSSAPI (Kerberos) is not supported"},
		{"mechanism", []string{"security.protocol=SASL_PLAINTEXT", "sasl.mechanism=OAUTHBEARER", `sasl.jaas.config=` + plainLoginModule + ` required username="a" password="b";`}, `sasl.mechanism "OAUTHBEARER": want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512`},
		{"no jaas", []string{"security.protocol=SASL_PLAINTEXT", "sasl.mechanism=PLAIN"}, "sasl.jaas.config: required with security.protocol SASL_PLAINTEXT"},
		{"module of another mechanism", []string{"security.protocol=SASL_PLAINTEXT", "sasl.mechanism=SCRAM-SHA-256", `sasl.jaas.config=` + plainLoginModule + ` required username="a" password="b";`}, "sasl.jaas.config: " + plainLoginModule + " does not log in with sasl.mechanism SCRAM-SHA-256; want " + scramLoginModule},
		{"jaas without password", []string{"security.protocol=SASL_PLAINTEXT", "sasl.mechanism=PLAIN", `sasl.jaas.config=` + plainLoginModule + ` required username="a";`}, "sasl.jaas.config: no password option"},
		{"jaas without ;", []string{"security.protocol=SASL_PLAINTEXT", "sasl.mechanism=PLAIN", `sasl.jaas.config=` + plainLoginModule + ` required username="a" password="b"`}, "sasl.jaas.config: no ';' at the end"},
		{"config providers", []string{"config.providers=file"}, `config.providers "file": config providers are not supported`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := p.props(t, append(append([]string{}, base...), tc.lines...)...)
			_, _, err := loadProps(t, file)
			want := "upstream-config " + file + ": " + tc.want
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("err %v\nwant one with %q", err, want)
			}
		})
	}
	if _, _, err := loadProps(t, filepath.Join(p.dir, "missing.properties")); err == nil || !strings.Contains(err.Error(), "upstream-config "+filepath.Join(p.dir, "missing.properties")+": no such file or directory") {
		t.Errorf("missing file: %v", err)
	}
}

// TestUpstreamConfigUnknownKeys: each key streamshift does not read is one
// warning in Kafka's words; the client settings that change nothing here
// (client.id, request.timeout.ms, ...) pass without one.
func TestUpstreamConfigUnknownKeys(t *testing.T) {
	p := newBrokerPKI(t)
	file := p.props(t, "bootstrap.servers=localhost:9093", "client.id=tool", "request.timeout.ms=30000",
		"ssl.cipher.suites=TLS_AES_128_GCM_SHA256", "acks=all", "acks=1", "sasl.login.refresh.buffer.seconds=300")
	_, warnings, err := loadProps(t, file)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"upstream-config " + file + ": the configuration 'acks' was supplied but isn't a known config; ignored",
		"upstream-config " + file + ": the configuration 'sasl.login.refresh.buffer.seconds' was supplied but isn't a known config; ignored",
		"upstream-config " + file + ": the configuration 'ssl.cipher.suites' was supplied but isn't a known config; ignored",
	}
	if strings.Join(warnings, "\n") != strings.Join(want, "\n") {
		t.Fatalf("warnings\n%s\nwant\n%s", strings.Join(warnings, "\n"), strings.Join(want, "\n"))
	}
}

// TestUpstreamConfigWithOtherKeys: upstream wins over bootstrap.servers
// (with a warning), as --bootstrap-server does over --command-config;
// upstream-tls.* or control-plane.sasl-* set as well is an error naming
// both.
func TestUpstreamConfigWithOtherKeys(t *testing.T) {
	p := newBrokerPKI(t)
	file := p.props(t, "bootstrap.servers=localhost:9093", "security.protocol=SSL", "ssl.truststore.type=PEM", "ssl.truststore.location="+p.trust["PEM"])
	cfg, warnings, err := loadProps(t, file, "--upstream", "kafka:9092")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(cfg.Upstream, ",") != "kafka:9092" || len(warnings) != 1 || !strings.Contains(warnings[0], "bootstrap.servers localhost:9093 not used: upstream kafka:9092 is set and wins") {
		t.Fatalf("upstream %v, warnings %q", cfg.Upstream, warnings)
	}
	_, _, err = Load([]string{"--upstream-config", file, "--upstream-tls-enabled", "--upstream-tls-ca-file", p.trust["PEM"]},
		[]string{"STREAMSHIFT_CONTROL_PLANE_SASL_MECHANISM=PLAIN"}, io.Discard)
	for _, key := range []string{"upstream-tls.enabled", "upstream-tls.ca-file", "control-plane.sasl-mechanism"} {
		want := key + ": set together with upstream-config " + file
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err %v\nwant one with %q", err, want)
		}
	}
	if _, _, err := Load([]string{"--upstream-config", p.props(t, "client.id=x")}, nil, io.Discard); err == nil || !strings.Contains(err.Error(), "has no bootstrap.servers and upstream is not set") {
		t.Errorf("no bootstrap: %v", err)
	}
}

// TestUpstreamConfigKeystoreReload: the keystore of upstream-config is
// re-read when its file is replaced, as upstream-tls.cert-file is: the
// next connection presents the renewed certificate, and the reload is
// told to what OnUpstreamTLSReload set.
func TestUpstreamConfigKeystoreReload(t *testing.T) {
	p := newBrokerPKI(t)
	keystore := filepath.Join(p.dir, "renewed.p12")
	writeStore := func(cn string) {
		t.Helper()
		pair, err := p.ca.IssueNow(cn)
		if err != nil {
			t.Fatal(err)
		}
		b, err := pair.PKCS12(storePass)
		if err != nil {
			t.Fatal(err)
		}
		tmp := keystore + ".tmp"
		if err := os.WriteFile(tmp, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, keystore); err != nil {
			t.Fatal(err)
		}
	}
	writeStore("streamshift")
	cfg, _, err := loadProps(t, p.props(t, "bootstrap.servers=localhost:9093", "security.protocol=SSL", "ssl.truststore.type=PEM",
		"ssl.truststore.location="+p.trust["PEM"], "ssl.keystore.type=PKCS12", "ssl.keystore.location="+keystore, "ssl.keystore.password="+storePass))
	if err != nil {
		t.Fatal(err)
	}
	reloads := make(chan error, 10)
	cfg.OnUpstreamTLSReload(func(err error) { reloads <- err })
	if cn, err := p.handshake(t, cfg.UpstreamTLSConfig(), "localhost", true); err != nil || cn != "streamshift" {
		t.Fatalf("first certificate: %q %v", cn, err)
	}
	writeStore("streamshift-renewed")
	deadline := time.Now().Add(30 * time.Second)
	for {
		cn, err := p.handshake(t, cfg.UpstreamTLSConfig(), "localhost", true)
		if err == nil && cn == "streamshift-renewed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("renewed keystore not presented: %q %v", cn, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := <-reloads; err != nil {
		t.Fatalf("reload told %v", err)
	}
}

// TestUpstreamConfigSources: upstream-config is set by its environment
// variable or the YAML file as well.
func TestUpstreamConfigSources(t *testing.T) {
	p := newBrokerPKI(t)
	file := p.props(t, "bootstrap.servers=kafka:9092")
	for name, load := range map[string]func() (*Config, []string, error){
		"env": func() (*Config, []string, error) {
			return Load(nil, []string{"STREAMSHIFT_UPSTREAM_CONFIG=" + file}, io.Discard)
		},
		"yaml": func() (*Config, []string, error) {
			return Load([]string{"--config", configFile(t, "upstream-config: "+file+"\n")}, nil, io.Discard)
		},
	} {
		cfg, _, err := load()
		if err != nil || strings.Join(cfg.Upstream, ",") != "kafka:9092" {
			t.Errorf("%s: %v %v", name, err, cfg)
		}
	}
}
