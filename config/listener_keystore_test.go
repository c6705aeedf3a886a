package config

import (
	"io"
	"strings"
	"testing"
)

// TestListenerKeystoreKeys: the listeners take a JKS or PKCS#12 keystore,
// and a truststore of client CAs, by flag (every tls.* key has one), read
// once at start so that a wrong password or type stops it naming the key
// and where it was set.
func TestListenerKeystoreKeys(t *testing.T) {
	p := newBrokerPKI(t)
	base := []string{"--upstream", "a:1"}
	for _, tc := range []struct {
		name string
		args []string
		err  string
	}{
		{"JKS", []string{"--tls-keystore-location", p.keystore["JKS"], "--tls-keystore-password", storePass}, ""},
		{"PKCS12", []string{"--tls-keystore-location", p.keystore["PKCS12"], "--tls-keystore-type", "pkcs12", "--tls-keystore-password", storePass, "--tls-client-auth", "require", "--tls-client-ca-file", p.trust["PEM"]}, ""},
		{"PEM", []string{"--tls-keystore-location", p.keystore["PEM"], "--tls-keystore-type", "PEM"}, ""},
		{"PKCS12 truststore of client CAs", []string{"--tls-keystore-location", p.keystore["JKS"], "--tls-keystore-password", storePass,
			"--tls-truststore-location", p.trust["PKCS12"], "--tls-truststore-type", "PKCS12", "--tls-truststore-password", storePass, "--tls-client-auth", "require"}, ""},
		{"truststore, wrong password", []string{"--tls-keystore-location", p.keystore["JKS"], "--tls-keystore-password", storePass,
			"--tls-truststore-location", p.trust["PKCS12"], "--tls-truststore-type", "PKCS12", "--tls-truststore-password", "nope"},
			"tls.truststore-location " + p.trust["PKCS12"] + " (tls.truststore-type PKCS12): PKCS12 truststore"},
		{"truststore and client CA file", []string{"--tls-keystore-location", p.keystore["JKS"], "--tls-keystore-password", storePass,
			"--tls-truststore-location", p.trust["JKS"], "--tls-client-ca-file", p.trust["PEM"]}, "tls.truststore-location and tls.client-ca-file: set one"},
		{"wrong password", []string{"--tls-keystore-location", p.keystore["JKS"], "--tls-keystore-password", "nope"},
			"tls.keystore-location " + p.keystore["JKS"] + " (tls.keystore-type JKS): JKS store: wrong password (integrity check failed) (from --tls-keystore-location)"},
		{"bad type", []string{"--tls-keystore-location", p.keystore["JKS"], "--tls-keystore-type", "BKS"}, `tls.keystore-type "BKS": want JKS, PKCS12 or PEM (from --tls-keystore-type)`},
		{"and PEM files", []string{"--tls-keystore-location", p.keystore["JKS"], "--tls-cert-file", "x", "--tls-key-file", "y"}, "tls.keystore-location and tls.cert-file / tls.key-file: set one"},
		{"password alone", []string{"--tls-key-password", "x"}, "tls.keystore-password / tls.key-password: need tls.keystore-location"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, _, err := Load(append(append([]string{}, base...), tc.args...), nil, io.Discard)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v\nwant one with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !cfg.TLS.Enabled() {
				t.Fatal("listener TLS off")
			}
		})
	}
}

// TestSecurityFlags: every tls.* and upstream-tls.* key has a flag, and a
// boolean one may stand alone.
func TestSecurityFlags(t *testing.T) {
	for _, key := range knownKeys() {
		if (strings.HasPrefix(key, "tls.") || strings.HasPrefix(key, "upstream-tls.") || key == "upstream-config") && flagOf(key) == "" {
			t.Errorf("%s has no flag", key)
		}
	}
	p := newBrokerPKI(t)
	cfg, _, err := Load([]string{"--upstream", "a:1", "--upstream-tls-enabled", "--upstream-tls-ca-file", p.trust["PEM"], "--upstream-tls-server-name", "kafka"}, nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if up := cfg.UpstreamTLSConfig(); up == nil || up.ServerName != "kafka" {
		t.Fatalf("upstream TLS %+v", up)
	}
}
