package config

import (
	"fmt"
	"os"

	"github.com/streamshift/streamshift/internal/tlsstore"
)

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
