package config

import (
	"crypto/tls"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamshift/streamshift/internal/testpki"
)

// TestUpstreamTLSReload: the upstream TLS configuration checks the broker's
// certificate (its chain to the CA file, the server name) and follows its
// client certificate's files: after they are replaced in place, the next
// connection presents the new certificate, without a restart.
func TestUpstreamTLSReload(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	ca1, err := testpki.NewCA("ca-1")
	must(err)
	ca2, err := testpki.NewCA("ca-2")
	must(err)
	caFile, err := ca1.WriteCA(dir, "ca")
	must(err)
	client1, err := ca1.IssueNow("client-1")
	must(err)
	certFile, keyFile, err := client1.Write(dir, "client")
	must(err)

	// The broker: its certificate is for kafka.internal, from ca-1 and
	// later ca-2; it wants a client certificate of either CA and notes
	// whose it got.
	var mu sync.Mutex
	serverCA, seen := ca1, ""
	serverCert := func(ca *testpki.CA) tls.Certificate {
		p, err := ca.IssueNow("broker", "kafka.internal")
		must(err)
		c, err := p.TLS()
		must(err)
		return c
	}
	certs := map[*testpki.CA]tls.Certificate{ca1: serverCert(ca1), ca2: serverCert(ca2)}
	pool := ca1.Pool()
	pool.AddCert(ca2.Cert)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{
		ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			mu.Lock()
			defer mu.Unlock()
			c := certs[serverCA]
			return &c, nil
		},
	})
	must(err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			tc := c.(*tls.Conn)
			if tc.Handshake() == nil {
				mu.Lock()
				seen = tc.ConnectionState().PeerCertificates[0].Subject.CommonName
				mu.Unlock()
				_, _ = tc.Write([]byte{1})
			}
			_ = tc.Close()
		}
	}()

	cfg, _, err := Load([]string{"--upstream", "a:1"}, []string{
		"STREAMSHIFT_UPSTREAM_TLS_ENABLED=true", "STREAMSHIFT_UPSTREAM_TLS_CA_FILE=" + caFile,
		"STREAMSHIFT_UPSTREAM_TLS_CERT_FILE=" + certFile, "STREAMSHIFT_UPSTREAM_TLS_KEY_FILE=" + keyFile,
	}, io.Discard)
	must(err)
	var reloads []error
	cfg.OnUpstreamTLSReload(func(err error) {
		mu.Lock()
		reloads = append(reloads, err)
		mu.Unlock()
	})
	up := cfg.UpstreamTLSConfig()
	dial := func(name string) (string, error) {
		c := up.Clone()
		c.ServerName = name // as the proxy's dial and kgo set it
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", ln.Addr().String(), c)
		if err != nil {
			return "", err
		}
		defer conn.Close()
		// TLS 1.3: the server's verdict on the client certificate comes
		// with the first read.
		if _, err := conn.Read(make([]byte, 1)); err != nil {
			return "", err
		}
		mu.Lock()
		defer mu.Unlock()
		return seen, nil
	}

	if got, err := dial("kafka.internal"); err != nil || got != "client-1" {
		t.Fatalf("first connection: %q %v, want client-1", got, err)
	}
	if _, err := dial("other.internal"); err == nil || !strings.Contains(err.Error(), "other.internal") {
		t.Fatalf("a certificate for another name was accepted (%v)", err)
	}
	if _, err := dial(""); err == nil {
		t.Fatal("no server name, and the certificate was accepted")
	}

	mu.Lock()
	serverCA = ca2
	mu.Unlock()
	if _, err := dial("kafka.internal"); err == nil {
		t.Fatal("a broker certificate of an unknown CA was accepted")
	}
	mu.Lock()
	serverCA = ca1
	mu.Unlock()
	// The renewal replaces the files in place.
	client2, err := ca1.IssueNow("client-2")
	must(err)
	newDir := t.TempDir()
	c2, k2, err := client2.Write(newDir, "client")
	must(err)
	for _, f := range [][2]string{{c2, certFile}, {k2, keyFile}} {
		b, err := os.ReadFile(f[0])
		must(err)
		must(os.WriteFile(f[1], b, 0o600))
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := dial("kafka.internal")
		if err == nil && got == "client-2" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the renewal: %q %v, want client-2 presented", got, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reloads) == 0 || reloads[len(reloads)-1] != nil {
		t.Fatalf("reloads heard: %v, want a successful one", reloads)
	}
}
