package proxy

import (
	"context"
	"crypto/tls"
	"path/filepath"
	"testing"
	"time"

	"github.com/streamshift/streamshift/internal/testpki"
)

// TestTLSKeystoreListener: the listeners serve the key and certificate of
// a PKCS#12 keystore (tls.keystore-location) and, when the file is
// replaced, the new one without a restart.
func TestTLSKeystoreListener(t *testing.T) {
	t.Parallel()
	keystore := filepath.Join(t.TempDir(), "listener.p12")
	s := startTLSSetup(t, func(o *Options) {
		// The pair startTLSSetup wrote as PEM files, as a keystore.
		pair := &testpki.Pair{CertPEM: must(osReadFile(o.TLS.CertFile)), KeyPEM: must(osReadFile(o.TLS.KeyFile))}
		if err := osWriteFile(keystore, must(pair.PKCS12("listener-secret"))); err != nil {
			t.Fatal(err)
		}
		o.TLS = &TLSListener{KeystoreFile: keystore, KeystoreType: "PKCS12", KeystorePassword: "listener-secret"}
	})
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
	if err := osWriteFile(keystore, must(renewed.PKCS12("listener-secret"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "renewed keystore served", func() error {
		if got := served(); got != "streamshift-renewed" {
			return fmtErr("served %q", got)
		}
		return nil
	})
}

// TestTLSClientTruststore: with tls.client-auth=require and a JKS
// truststore of the client CA (tls.truststore-location), a client with a
// certificate of that CA gets through and one of another CA does not.
func TestTLSClientTruststore(t *testing.T) {
	t.Parallel()
	clientCA := must(testpki.NewCA("client-ca"))
	otherCA := must(testpki.NewCA("other-ca"))
	truststore := filepath.Join(t.TempDir(), "clients.jks")
	if err := osWriteFile(truststore, must(clientCA.TrustJKS("trust-secret"))); err != nil {
		t.Fatal(err)
	}
	s := startTLSSetup(t, func(o *Options) {
		o.TLS.ClientTruststoreFile, o.TLS.ClientTruststorePassword, o.TLS.ClientAuth = truststore, "trust-secret", "require"
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	other := s.clientPool.Clone()
	other.Certificates = []tls.Certificate{must(must(otherCA.IssueNow("intruder")).TLS())}
	if err := s.client(t, other).Ping(ctx); err == nil {
		t.Fatal("a client certificate of another CA got through")
	}
	cfg := s.clientPool.Clone()
	cfg.Certificates = []tls.Certificate{must(must(clientCA.IssueNow("app")).TLS())}
	if err := s.client(t, cfg).Ping(ctx); err != nil {
		t.Fatalf("ping with a client certificate of the truststore's CA: %v", err)
	}
}
