package proxy

import (
	"crypto/tls"
	"errors"
	"fmt"

	"github.com/rs/zerolog"
)

// The links' TLS is built here, from the client listeners' (tls_files.go):
// package peer takes a *tls.Config and knows nothing of the files behind it.

// PeerListenTLS is the internal listener's TLS when the client listeners
// speak TLS (l not nil; nil: plaintext): the same certificate, re-read
// when it changes, and client certificates checked as theirs.
func PeerListenTLS(l *TLSListener, log zerolog.Logger) (*tls.Config, error) {
	if l == nil {
		return nil, nil
	}
	files, err := newTLSFiles(*l, log)
	if err != nil {
		return nil, fmt.Errorf("cluster.listen: %w", err)
	}
	return files.serverConfig(), nil
}

// PeerDialTLS is the links' TLS when the client listeners speak TLS (l not
// nil; nil: plaintext links). There is no new secret: the peer's internal
// listener serves the client listeners' certificate, checked against caFile
// (cluster.tls-ca-file; empty: the system pool) and the host the link
// dials. When the listeners request or require client certificates
// (tls.client-auth), the link presents this instance's own tls.cert-file,
// re-read when it changes; it then needs the clientAuth extended key usage
// and must chain to tls.client-ca-file.
func PeerDialTLS(l *TLSListener, caFile string, log zerolog.Logger) (*tls.Config, error) {
	if l == nil {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pool, err := LoadCertPool(caFile)
		if err != nil {
			return nil, fmt.Errorf("cluster.tls-ca-file: %w", err)
		}
		cfg.RootCAs = pool
	}
	if l.ClientAuth == "" || l.ClientAuth == "none" {
		return cfg, nil
	}
	files, err := newTLSFiles(*l, log)
	if err != nil {
		return nil, fmt.Errorf("cluster links' client certificate: %w", err)
	}
	cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
		cur := files.files.Get()
		if len(cur.Certificates) == 0 {
			return nil, errors.New("no certificate loaded from tls.cert-file")
		}
		return &cur.Certificates[0], nil
	}
	return cfg, nil
}
