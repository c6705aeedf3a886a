package config

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamshift/streamshift/internal/testpki"
)

// TestSecurityKeys: tls.* and upstream-tls.* load from the environment,
// the upstream TLS configuration is built from the files, and bad
// combinations are refused naming the key.
func TestSecurityKeys(t *testing.T) {
	dir := t.TempDir()
	ca, err := testpki.NewCA("ca")
	if err != nil {
		t.Fatal(err)
	}
	caFile, err := ca.WriteCA(dir, "ca")
	if err != nil {
		t.Fatal(err)
	}
	pair, err := ca.IssueNow("client")
	if err != nil {
		t.Fatal(err)
	}
	cert, key, err := pair.Write(dir, "client")
	if err != nil {
		t.Fatal(err)
	}
	env := []string{
		"STREAMSHIFT_TLS_CERT_FILE=" + cert, "STREAMSHIFT_TLS_KEY_FILE=" + key,
		"STREAMSHIFT_TLS_CLIENT_CA_FILE=" + caFile, "STREAMSHIFT_TLS_CLIENT_AUTH=require",
		"STREAMSHIFT_TLS_HANDSHAKE_TIMEOUT=3s",
		"STREAMSHIFT_UPSTREAM_TLS_ENABLED=true", "STREAMSHIFT_UPSTREAM_TLS_CA_FILE=" + caFile,
		"STREAMSHIFT_UPSTREAM_TLS_CERT_FILE=" + cert, "STREAMSHIFT_UPSTREAM_TLS_KEY_FILE=" + key,
		"STREAMSHIFT_UPSTREAM_TLS_SERVER_NAME=kafka.internal",
	}
	cfg, warnings, err := Load([]string{"--upstream", "a:1"}, env, io.Discard)
	if err != nil || len(warnings) != 0 {
		t.Fatalf("load: %v %v", err, warnings)
	}
	if !cfg.TLS.Enabled() || cfg.TLS.ClientAuth != "require" || cfg.TLS.HandshakeTimeout != 3*time.Second || cfg.TLS.MaxHandshakes != 1024 {
		t.Fatalf("tls %+v", cfg.TLS)
	}
	up := cfg.UpstreamTLSConfig()
	// The client certificate is read on use (reloaded: TestUpstreamTLSReload).
	if up == nil || up.ServerName != "kafka.internal" || up.RootCAs == nil || up.GetClientCertificate == nil || up.InsecureSkipVerify {
		t.Fatalf("upstream TLS %+v", up)
	}
	if plain, _, err := Load([]string{"--upstream", "a:1"}, nil, io.Discard); err != nil || plain.UpstreamTLSConfig() != nil || plain.TLS.Enabled() {
		t.Fatalf("defaults: TLS on (%v)", err)
	}

	empty := filepath.Join(dir, "empty.pem")
	if err := os.WriteFile(empty, []byte("no pem"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{"STREAMSHIFT_TLS_CERT_FILE=" + cert}, "tls.cert-file and tls.key-file"},
		{[]string{"STREAMSHIFT_TLS_CLIENT_AUTH=maybe"}, "tls.client-auth"},
		{[]string{"STREAMSHIFT_TLS_CERT_FILE=" + cert, "STREAMSHIFT_TLS_KEY_FILE=" + key, "STREAMSHIFT_TLS_CLIENT_AUTH=require"}, "tls.client-auth require"},
		{[]string{"STREAMSHIFT_TLS_CLIENT_CA_FILE=" + caFile}, "need tls.cert-file"},
		{[]string{"STREAMSHIFT_TLS_HANDSHAKE_TIMEOUT=0s"}, "tls.handshake-timeout"},
		{[]string{"STREAMSHIFT_UPSTREAM_TLS_CA_FILE=" + caFile}, "upstream-tls.enabled"},
		{[]string{"STREAMSHIFT_UPSTREAM_TLS_ENABLED=true", "STREAMSHIFT_UPSTREAM_TLS_CA_FILE=" + empty}, "upstream-tls.ca-file"},
		{[]string{"STREAMSHIFT_UPSTREAM_TLS_ENABLED=true", "STREAMSHIFT_UPSTREAM_TLS_CERT_FILE=" + cert}, "upstream-tls.cert-file"},
	} {
		_, _, err := Load([]string{"--upstream", "a:1"}, tc.env, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one naming %s", tc.env, err, tc.want)
		}
	}
}
