package proxy

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/streamshift/streamshift/internal/kafkaframe"
	"github.com/streamshift/streamshift/internal/testlog"
	"github.com/streamshift/streamshift/internal/testpki"
)

// tlsSetup is a kfake cluster speaking TLS (and SCRAM) behind a proxy
// speaking TLS to its clients, each side with its own CA.
type tlsSetup struct {
	p          *testProxy
	clientCA   *testpki.CA // signs the proxy's listener certificate
	certFile   string
	keyFile    string
	log        *logSink
	clientPool *tls.Config // what a client trusting the proxy uses
}

// logSink keeps the proxy's log lines for the tests that check them.
type logSink struct{ testlog.Buffer }

func (s *logSink) has(sub string) bool { return strings.Contains(s.String(), sub) }

// must unwraps a setup step that cannot fail in a working test
// environment (key generation, temp files).
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// startTLSSetup starts the cluster with SCRAM-SHA-512 user "alice" and the
// proxy; tweak adjusts the proxy's options (listener TLS included).
func startTLSSetup(t *testing.T, tweak func(*Options)) *tlsSetup {
	t.Helper()
	dir := t.TempDir()
	brokerCA := must(testpki.NewCA("broker-ca"))
	brokerPair := must(brokerCA.IssueNow("broker", "127.0.0.1", "localhost"))
	brokerCert := must(brokerPair.TLS())
	c := newCluster(t, kfake.TLS(&tls.Config{Certificates: []tls.Certificate{brokerCert}, MinVersion: tls.VersionTLS12}),
		kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", "alice", "alice-secret"), kfake.SeedTopics(3, "secure"))

	pf := must(testpki.NewServerFiles(dir, "streamshift", "127.0.0.1"))
	s := &tlsSetup{clientCA: pf.CA, certFile: pf.CertFile, keyFile: pf.KeyFile, log: &logSink{}}
	upTLS := &tls.Config{RootCAs: brokerCA.Pool(), MinVersion: tls.VersionTLS12}
	s.p = startProxy(t, c.ListenAddrs(), func(o *Options) {
		o.TLS = &TLSListener{CertFile: s.certFile, KeyFile: s.keyFile}
		o.UpstreamTLS = upTLS
		o.ControlPlane = []kgo.Opt{kgo.DialTLSConfig(upTLS),
			kgo.SASL(scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha512Mechanism())}
		o.Log = zerolog.New(io.MultiWriter(s.log, zerolog.NewTestWriter(t))).Level(zerolog.InfoLevel)
		if tweak != nil {
			tweak(o)
		}
	})
	s.clientPool = &tls.Config{RootCAs: s.clientCA.Pool(), MinVersion: tls.VersionTLS12}
	waitFor(t, "proxy ready", func() error {
		if !s.p.Ready() {
			return errNotYet
		}
		return nil
	})
	return s
}

func must2(a, b string, err error) (string, string) {
	if err != nil {
		panic(err)
	}
	return a, b
}

func (s *tlsSetup) client(t *testing.T, tlsCfg *tls.Config, opts ...kgo.Opt) *kgo.Client {
	all := []kgo.Opt{kgo.RequestRetries(0), kgo.RetryTimeout(3 * time.Second)}
	if tlsCfg != nil {
		all = append(all, kgo.DialTLSConfig(tlsCfg))
	}
	all = append(all, kgo.SASL(scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha512Mechanism()))
	return newClient(t, s.p, new(addrWatch), append(all, opts...)...)
}

// TestTLSBothSides: a SCRAM client over TLS to the proxy, the proxy over TLS
// to the brokers, produce and consume through node ports, large records
// included (they cross the pass-through paths, many TLS records each).
func TestTLSBothSides(t *testing.T) {
	t.Parallel()
	s := startTLSSetup(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := s.client(t, s.clientPool, kgo.DefaultProduceTopic("secure"),
		kgo.ConsumeTopics("secure"), kgo.ProducerBatchMaxBytes(4<<20), kgo.MaxBufferedBytes(64<<20))
	produceN(t, ctx, cl, "secure", 0, 200)
	big := bytes.Repeat([]byte("x"), 3<<20)
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "secure", Value: big}).FirstErr(); err != nil {
		t.Fatalf("produce 3 MiB: %v", err)
	}
	seen := map[string]bool{}
	gotBig := false
	for len(seen) < 200 || !gotBig {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of 200 (big %v): %v", len(seen), gotBig, ctx.Err())
		}
		fs.EachRecord(func(r *kgo.Record) {
			if len(r.Value) == len(big) {
				gotBig = bytes.Equal(r.Value, big)
				return
			}
			seen[string(r.Value)] = true
		})
	}
}

// TestTLSHandshakeFailures: a client that does not trust the proxy's CA, a
// plaintext client on the TLS port and (mTLS) an expired client certificate
// each fail their handshake with a log line that names the cause.
func TestTLSHandshakeFailures(t *testing.T) {
	t.Parallel()
	clientCA := must(testpki.NewCA("client-ca"))
	dir := t.TempDir()
	caFile := must(clientCA.WriteCA(dir, "client-ca"))
	s := startTLSSetup(t, func(o *Options) {
		o.TLS.ClientCAFile = caFile
		o.TLS.ClientAuth = "request"
	})
	for _, tc := range []struct {
		name, cause string
		cfg         func() *tls.Config
	}{
		// Go clients answer an unknown CA with a bad_certificate alert,
		// and close with the server's Finished unread: the kernel may
		// drop the alert under the reset that follows, leaving "closed".
		{"unknown CA", `"cause":"bad-certificate"|"cause":"closed"`, func() *tls.Config {
			other := must(testpki.NewCA("other"))
			return &tls.Config{RootCAs: other.Pool(), MinVersion: tls.VersionTLS12}
		}},
		{"plaintext", `"cause":"not-tls"`, func() *tls.Config { return nil }},
		{"expired client certificate", `"cause":"expired"`, func() *tls.Config {
			old := must(clientCA.Issue("old-client", nil, time.Now().Add(-48*time.Hour), time.Now().Add(-24*time.Hour)))
			cert := must(old.TLS())
			cfg := s.clientPool.Clone()
			cfg.Certificates = []tls.Certificate{cert}
			return cfg
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := s.client(t, tc.cfg())
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := cl.Ping(ctx); err == nil {
				t.Fatal("ping through a failing handshake succeeded")
			}
			waitFor(t, "log line "+tc.cause, func() error {
				for _, cause := range strings.Split(tc.cause, "|") {
					if s.log.has(cause) && s.log.has("client TLS handshake failed") {
						return nil
					}
				}
				return errNotYet
			})
		})
	}
	// A valid client certificate passes the same listener.
	good := must(clientCA.IssueNow("good-client"))
	cfg := s.clientPool.Clone()
	cfg.Certificates = []tls.Certificate{must(good.TLS())}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.client(t, cfg).Ping(ctx); err != nil {
		t.Fatalf("ping with a valid client certificate: %v", err)
	}
}

// TestTLSCertificateReload: replacing the certificate files changes what new
// handshakes are served, without a restart.
func TestTLSCertificateReload(t *testing.T) {
	t.Parallel()
	s := startTLSSetup(t, nil)
	served := func() string {
		c, err := tls.Dial("tcp", s.p.addr, s.clientPool)
		if err != nil {
			return "dial: " + err.Error()
		}
		defer c.Close()
		return c.ConnectionState().PeerCertificates[0].Subject.CommonName
	}
	if got := served(); got != "streamshift" {
		t.Fatalf("served %q, want streamshift", got)
	}
	renewed := must(s.clientCA.IssueNow("streamshift-renewed", "127.0.0.1"))
	dir := t.TempDir()
	cf, kf := must2(renewed.Write(dir, "renewed"))
	for _, f := range [][2]string{{cf, s.certFile}, {kf, s.keyFile}} {
		b := must(osReadFile(f[0]))
		if err := osWriteFile(f[1], b); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "renewed certificate served", func() error {
		if got := served(); got != "streamshift-renewed" {
			return fmtErr("served %q", got)
		}
		return nil
	})
	if !s.log.has("TLS certificate reloaded") {
		t.Error("no reload log line")
	}
}

// TestTLSStalledHandshake: a client that opens a connection and sends half
// a ClientHello is closed at the handshake timeout, and the proxy dials no
// upstream for it.
func TestTLSStalledHandshake(t *testing.T) {
	t.Parallel()
	s := startTLSSetup(t, func(o *Options) { o.TLS.HandshakeTimeout = 300 * time.Millisecond })
	c, err := net.Dial("tcp", s.p.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01}); err != nil { // a record header, then nothing
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.ReadAll(c); err != nil {
		t.Fatalf("connection not closed by the proxy: %v", err)
	}
	waitFor(t, "timeout log line", func() error {
		if !s.log.has(`"cause":"timeout"`) {
			return errNotYet
		}
		return nil
	})
	if s.log.has("upstream connected") {
		t.Error("an upstream was dialled for a client that never finished its handshake")
	}
}

// TestTLSHandshakeFlood: connections that never finish a handshake hold at
// most MaxHandshakes slots (each a goroutine and a bounded buffer); the
// ones beyond are closed at once, and once the flood is gone a real client
// gets through.
func TestTLSHandshakeFlood(t *testing.T) {
	t.Parallel()
	const max = 8
	s := startTLSSetup(t, func(o *Options) { o.TLS.MaxHandshakes = max })
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	for range 4 * max {
		c, err := net.Dial("tcp", s.p.addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	waitFor(t, "refused connections", func() error {
		if n := s.p.tls.handshakes.Load(); n > max {
			t.Fatalf("%d handshakes running, cap %d", n, max)
		}
		if !s.log.has("too many TLS handshakes running") {
			return errNotYet
		}
		return nil
	})
	closed := 0
	for _, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		if _, err := c.Read(make([]byte, 1)); err == io.EOF {
			closed++
		}
	}
	if closed < 3*max {
		t.Fatalf("%d of %d connections beyond the cap were closed", closed, 3*max)
	}
	for _, c := range conns {
		_ = c.Close()
	}
	conns = nil
	waitFor(t, "slots freed", func() error {
		if n := s.p.tls.handshakes.Load(); n != 0 {
			return fmtErr("%d handshakes still running", n)
		}
		return nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.client(t, s.clientPool).Ping(ctx); err != nil {
		t.Fatalf("ping after the flood: %v", err)
	}
}

func osReadFile(name string) ([]byte, error) { return os.ReadFile(name) }

// osWriteFile replaces name the way a renewal does: a new file renamed over
// the old one.
func osWriteFile(name string, b []byte) error {
	tmp := name + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, name)
}

// TestTLSRequestBehindFinished: a client that sends a large request right
// behind its Finished, before the proxy's handshake goroutine is done, gets
// its answer (the request is not taken for an oversized handshake).
func TestTLSRequestBehindFinished(t *testing.T) {
	t.Parallel()
	s := startTLSSetup(t, nil)
	// Before SASL only ApiVersions is allowed: a large one (1 MiB of
	// software name).
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = strings.Repeat("a", 1<<20), "1"
	id := "behind-finished"
	frame := kafkaframe.AppendRequest(nil, 7, &id, req)
	for i := range 5 {
		c, err := tls.Dial("tcp", s.p.addr, s.clientPool)
		if err != nil {
			t.Fatal(err)
		}
		_ = c.SetDeadline(time.Now().Add(20 * time.Second))
		if _, err := c.Write(frame); err != nil {
			t.Fatalf("attempt %d: write: %v", i, err)
		}
		var head [8]byte
		if _, err := io.ReadFull(c, head[:]); err != nil {
			t.Fatalf("attempt %d: no response to a request sent behind the handshake: %v", i, err)
		}
		if corr := int32(binary.BigEndian.Uint32(head[4:])); corr != 7 {
			t.Fatalf("attempt %d: correlation id %d", i, corr)
		}
		c.Close()
	}
}

// TestTLSIdleConnectionHoldsNoBuffer: once its requests are answered, an
// idle TLS client connection and its upstream hold no plaintext or staging
// buffer (thousands of idle clients cost the pools' few buffers, not
// hundreds of KiB each).
func TestTLSIdleConnectionHoldsNoBuffer(t *testing.T) {
	t.Parallel()
	s := startTLSSetup(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl := s.client(t, s.clientPool)
	if err := cl.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "idle connections without buffers", func() error {
		s.p.mu.Lock()
		conns := make([]*clientConn, 0, len(s.p.conns))
		for cc := range s.p.conns {
			conns = append(conns, cc)
		}
		s.p.mu.Unlock()
		if len(conns) == 0 {
			return errNotYet
		}
		held := make(chan int, len(conns))
		for _, cc := range conns {
			cc.onLoop(func() {
				if tc, ok := cc.conn.(*tlsConn); ok && tc.handshook {
					n := cap(tc.in) + cap(tc.tr.out)
					if up, ok := cc.up.(*tlsConn); ok {
						n += cap(up.in) + cap(up.tr.out)
					}
					held <- n
					return
				}
				held <- -1
			})
		}
		for range conns {
			select {
			case n := <-held:
				if n != 0 {
					return fmtErr("a connection holds %d bytes of buffer (-1: not handshaken)", n)
				}
			case <-time.After(time.Second):
				return errNotYet // closed meanwhile
			}
		}
		return nil
	})
}

// TestTLSUpstreamClientCertificate: a cluster that wants a client
// certificate (ssl.client.auth=required) takes the proxy's forwarded and
// control-plane connections with upstream-tls's certificate, and refuses
// them without one.
func TestTLSUpstreamClientCertificate(t *testing.T) {
	t.Parallel()
	brokerCA := must(testpki.NewCA("broker-ca"))
	clientCA := must(testpki.NewCA("proxy-client-ca"))
	broker := must(must(brokerCA.IssueNow("broker", "127.0.0.1")).TLS())
	c := newCluster(t, kfake.TLS(&tls.Config{Certificates: []tls.Certificate{broker}, MinVersion: tls.VersionTLS12,
		ClientCAs: clientCA.Pool(), ClientAuth: tls.RequireAndVerifyClientCert}))
	for _, withCert := range []bool{true, false} {
		up := &tls.Config{RootCAs: brokerCA.Pool(), MinVersion: tls.VersionTLS12}
		if withCert {
			up.Certificates = []tls.Certificate{must(must(clientCA.IssueNow("streamshift")).TLS())}
		}
		p := startProxy(t, c.ListenAddrs(), func(o *Options) {
			o.UpstreamTLS = up
			o.ControlPlane = []kgo.Opt{kgo.DialTLSConfig(up)}
		})
		cl := newClient(t, p, new(addrWatch), kgo.RequestRetries(0), kgo.RetryTimeout(2*time.Second))
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := cl.Ping(ctx)
		cancel()
		if withCert && err != nil {
			t.Fatalf("with a client certificate: %v", err)
		}
		if !withCert && err == nil {
			t.Fatal("without a client certificate the cluster took the connection")
		}
		p.stop()
	}
}

// TestTLSClientAuthRequire: with tls.client-auth=require a client without a
// certificate fails its handshake (cause no-client-cert); one with a
// certificate of the client CA gets through.
func TestTLSClientAuthRequire(t *testing.T) {
	t.Parallel()
	clientCA := must(testpki.NewCA("client-ca"))
	caFile := must(clientCA.WriteCA(t.TempDir(), "client-ca"))
	s := startTLSSetup(t, func(o *Options) { o.TLS.ClientCAFile, o.TLS.ClientAuth = caFile, "require" })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.client(t, s.clientPool).Ping(ctx); err == nil {
		t.Fatal("a client without a certificate got through tls.client-auth=require")
	}
	waitFor(t, "no-client-cert log line", func() error {
		if !s.log.has(`"cause":"no-client-cert"`) {
			return errNotYet
		}
		return nil
	})
	cfg := s.clientPool.Clone()
	cfg.Certificates = []tls.Certificate{must(must(clientCA.IssueNow("app")).TLS())}
	if err := s.client(t, cfg).Ping(ctx); err != nil {
		t.Fatalf("ping with a client certificate: %v", err)
	}
}
