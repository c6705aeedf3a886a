package tlsstore

import (
	"bytes"
	"strings"
	"testing"

	"github.com/streamshift/streamshift/internal/testpki"
)

func fixtures(t *testing.T) (*testpki.CA, *testpki.Pair) {
	t.Helper()
	ca, err := testpki.NewCA("stores-ca")
	if err != nil {
		t.Fatal(err)
	}
	pair, err := ca.IssueNow("stores", "localhost")
	if err != nil {
		t.Fatal(err)
	}
	return ca, pair
}

// mustOf fails t on an error of a store's encoder.
func mustOf(t *testing.T) func([]byte, error) []byte {
	return func(b []byte, err error) []byte {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
}

// TestTrustedCertificates: each truststore type yields the CA; a JKS store
// read without a password skips its integrity check as Java does; a wrong
// password and a store of another kind are errors; a store named by the
// wrong type is read by its content (Java's keystore.type.compat).
func TestTrustedCertificates(t *testing.T) {
	ca, _ := fixtures(t)
	must := mustOf(t)
	jks := must(ca.TrustJKS("trust-secret"))
	p12 := must(ca.TrustPKCS12("trust-secret"))
	for _, tc := range []struct {
		name, typ, password string
		data                []byte
		err                 string
	}{
		{"JKS", JKS, "trust-secret", jks, ""},
		{"JKS without a password", JKS, "", jks, ""},
		{"JKS, wrong password", JKS, "nope", jks, "wrong password"},
		{"PKCS12", PKCS12, "trust-secret", p12, ""},
		{"PKCS12, wrong password", PKCS12, "nope", p12, "PKCS12 truststore"},
		{"PKCS12 named JKS", JKS, "trust-secret", p12, ""},
		{"JKS named PKCS12", PKCS12, "trust-secret", jks, ""},
		{"PEM", PEM, "", ca.CertPEM, ""},
		{"PEM without a certificate", PEM, "", []byte("hello"), "no certificate"},
		{"not a store", JKS, "", []byte("hello"), "neither JKS nor PKCS12"},
		{"JCEKS", JKS, "", []byte{0xCE, 0xCE, 0xCE, 0xCE, 0}, "JCEKS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			certs, err := TrustedCertificates(tc.data, tc.typ, tc.password)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(certs) != 1 || !certs[0].Equal(ca.Cert) {
				t.Fatalf("got %d certificates, want the CA", len(certs))
			}
		})
	}
}

// TestKeyPair: each keystore type yields the key and its certificate,
// usable for TLS; a JKS key with its own password needs it (Kafka's
// ssl.key.password), and without one the store's password is tried.
func TestKeyPair(t *testing.T) {
	ca, pair := fixtures(t)
	must := mustOf(t)
	want, err := pair.TLS()
	if err != nil {
		t.Fatal(err)
	}
	jksOwnKeyPassword := must(pair.JKS("server", "store-secret", "key-secret"))
	jksSame := must(pair.JKS("server", "store-secret", "store-secret"))
	p12 := must(pair.PKCS12("store-secret"))
	pemFile := append(append([]byte{}, pair.KeyPEM...), pair.CertPEM...)
	for _, tc := range []struct {
		name, typ, storePassword, keyPassword string
		data                                  []byte
		err                                   string
	}{
		{"JKS with a key password", JKS, "store-secret", "key-secret", jksOwnKeyPassword, ""},
		{"JKS, key password is the store's", JKS, "store-secret", "", jksSame, ""},
		{"JKS, key password missing", JKS, "store-secret", "", jksOwnKeyPassword, "key password"},
		{"JKS, wrong store password", JKS, "nope", "key-secret", jksOwnKeyPassword, "wrong password"},
		{"PKCS12", PKCS12, "store-secret", "", p12, ""},
		{"PKCS12 named JKS", JKS, "store-secret", "", p12, ""},
		{"PKCS12, wrong password", PKCS12, "nope", "", p12, "PKCS12 keystore"},
		{"PEM", PEM, "", "", pemFile, ""},
		{"PEM, encrypted key", PEM, "", "x", []byte("-----BEGIN ENCRYPTED PRIVATE KEY-----\n"), "encrypted PEM key"},
		{"a truststore as keystore", JKS, "trust", "", must(ca.TrustJKS("trust")), "0 private key entries"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := KeyPair(tc.data, tc.typ, tc.storePassword, tc.keyPassword)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Certificate[0], want.Certificate[0]) {
				t.Fatal("not the pair's certificate first")
			}
		})
	}
}

func TestParseType(t *testing.T) {
	for in, want := range map[string]string{"jks": JKS, "PKCS12": PKCS12, " pem ": PEM, "Pkcs12": PKCS12} {
		if got, err := ParseType(in); err != nil || got != want {
			t.Errorf("ParseType(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseType("FOO"); err == nil || !strings.Contains(err.Error(), "want JKS, PKCS12 or PEM") {
		t.Errorf("ParseType(FOO): %v", err)
	}
}
