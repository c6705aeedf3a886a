package proxy

import (
	"crypto/tls"
	"path/filepath"
	"testing"

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
