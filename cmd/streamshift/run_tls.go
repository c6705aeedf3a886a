package main

import (
	"github.com/streamshift/streamshift/config"
	"github.com/streamshift/streamshift/proxy"
)

// listenerTLS maps the tls.* keys onto the proxy's listener TLS, nil when
// the listeners are plaintext.
func listenerTLS(t config.TLS) *proxy.TLSListener {
	if !t.Enabled() {
		return nil
	}
	return &proxy.TLSListener{CertFile: t.CertFile, KeyFile: t.KeyFile, ClientCAFile: t.ClientCAFile,
		ClientTruststoreFile: t.TruststoreLocation, ClientTruststoreType: t.TruststoreType, ClientTruststorePassword: t.TruststorePassword,
		KeystoreFile: t.KeystoreLocation, KeystoreType: t.KeystoreType, KeystorePassword: t.KeystorePassword, KeyPassword: t.KeyPassword,
		ClientAuth: t.ClientAuth, HandshakeTimeout: t.HandshakeTimeout, MaxHandshakes: t.MaxHandshakes}
}
