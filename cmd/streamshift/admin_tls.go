package main

import (
	"crypto/tls"
	"net"

	"github.com/rs/zerolog"

	"github.com/streamshift/streamshift/config"
	"github.com/streamshift/streamshift/internal/reload"
)

// adminTLS wraps the admin listener in TLS with the listeners' certificate
// (admin.tls), re-read when its files change as the listeners' is. No
// client certificate is asked for: kubelet's HTTPS probes and Prometheus
// present none; changes are guarded by the token instead.
func adminTLS(ln net.Listener, t config.TLS, log zerolog.Logger) (net.Listener, error) {
	pair, err := reload.New([]string{t.CertFile, t.KeyFile}, func() (tls.Certificate, error) {
		return tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
	}, func(err error) {
		if err != nil {
			log.Error().Err(err).Msg("admin TLS certificate; serving the one loaded before")
		}
	})
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
		c := pair.Get()
		return &c, nil
	}}
	return tls.NewListener(ln, cfg), nil
}
