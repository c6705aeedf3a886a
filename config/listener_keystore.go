package config

import (
	"fmt"
	"os"

	"github.com/streamshift/streamshift/internal/tlsstore"
)

// validateTruststore checks the listeners' truststore of client CAs
// (tls.truststore-*) as validateKeystore does the keystore.
func (t *TLS) validateTruststore() []string {
	typ, err := tlsstore.ParseType(t.TruststoreType)
	if err != nil {
		return []string{fmt.Sprintf("tls.truststore-type %v", err)}
	}
	t.TruststoreType = typ
	if t.TruststoreLocation == "" {
		if t.TruststorePassword != "" {
			return []string{"tls.truststore-password: needs tls.truststore-location"}
		}
		return nil
	}
	if t.ClientCAFile != "" {
		return []string{"tls.truststore-location and tls.client-ca-file: set one"}
	}
	data, err := os.ReadFile(t.TruststoreLocation)
	if err != nil {
		return []string{fmt.Sprintf("tls.truststore-location: %v", err)}
	}
	if _, err := tlsstore.TrustedCertificates(data, typ, t.TruststorePassword); err != nil {
		return []string{fmt.Sprintf("tls.truststore-location %s (tls.truststore-type %s): %v", t.TruststoreLocation, typ, err)}
	}
	return nil
}

// validateKeystore checks the listeners' keystore (tls.keystore-*) and
// reads it once, so that a wrong password or type stops the start naming
// the key; the proxy reads it again, and again when it changes.
func (t *TLS) validateKeystore() []string {
	typ, err := tlsstore.ParseType(t.KeystoreType)
	if err != nil {
		return []string{fmt.Sprintf("tls.keystore-type %v", err)}
	}
	t.KeystoreType = typ
	if t.KeystoreLocation == "" {
		if t.KeystorePassword != "" || t.KeyPassword != "" {
			return []string{"tls.keystore-password / tls.key-password: need tls.keystore-location"}
		}
		return nil
	}
	if t.CertFile != "" || t.KeyFile != "" {
		return []string{"tls.keystore-location and tls.cert-file / tls.key-file: set one"}
	}
	data, err := os.ReadFile(t.KeystoreLocation)
	if err != nil {
		return []string{fmt.Sprintf("tls.keystore-location: %v", err)}
	}
	if _, err := tlsstore.KeyPair(data, typ, t.KeystorePassword, t.KeyPassword); err != nil {
		return []string{fmt.Sprintf("tls.keystore-location %s (tls.keystore-type %s): %v", t.KeystoreLocation, typ, err)}
	}
	return nil
}
