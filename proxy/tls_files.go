package proxy

import (
	"cmp"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/rs/zerolog"

	"github.com/streamshift/streamshift/internal/reload"
	"github.com/streamshift/streamshift/internal/tlsstore"
)

// TLSListener configures TLS on the client listeners (bootstrap and nodes).
type TLSListener struct {
	// CertFile and KeyFile are PEM files of the server certificate (its
	// chain after it) and its key. They are re-read when they change.
	CertFile, KeyFile string
	// KeystoreFile, instead of CertFile and KeyFile: a JKS, PKCS#12 or
	// PEM keystore (KeystoreType, "" is JKS) holding the key and the
	// chain, re-read when it changes.
	KeystoreFile, KeystoreType    string
	KeystorePassword, KeyPassword string
	// ClientCAFile, when set, is a PEM bundle of the CAs client
	// certificates must chain to (re-read when it changes).
	ClientCAFile string
	// ClientTruststore*, instead of ClientCAFile: a JKS, PKCS#12 or PEM
	// truststore of those CAs ("" type is JKS), re-read when it changes.
	ClientTruststoreFile, ClientTruststoreType, ClientTruststorePassword string
	// ClientAuth: "none" (default), "request" (verified when sent) or
	// "require".
	ClientAuth string
	// HandshakeTimeout bounds a client's handshake. Default 10s.
	HandshakeTimeout time.Duration
	// MaxHandshakes caps the client handshakes running at once; beyond it
	// new connections are closed. Default 1024.
	MaxHandshakes int
}

// tlsFiles is the server configuration built from the PEM files, rebuilt
// when one of them changes (internal/reload: checked at most once a second,
// on a handshake), so a renewed certificate is served without a restart.
type tlsFiles struct {
	opts  TLSListener
	files *reload.Files[*tls.Config]
}

func newTLSFiles(o TLSListener, log zerolog.Logger) (*tlsFiles, error) {
	switch o.ClientAuth {
	case "", "none", "request", "require":
	default:
		return nil, fmt.Errorf("tls client auth %q: want none, request or require", o.ClientAuth)
	}
	if (o.CertFile == "" || o.KeyFile == "") && o.KeystoreFile == "" {
		return nil, errors.New("tls: both the certificate and the key file, or a keystore, are needed")
	}
	if o.ClientAuth == "require" && o.ClientCAFile == "" && o.ClientTruststoreFile == "" {
		return nil, errors.New("tls: client auth require needs a client CA file")
	}
	f := &tlsFiles{opts: o}
	files, err := reload.New([]string{o.CertFile, o.KeyFile, o.KeystoreFile, o.ClientCAFile, o.ClientTruststoreFile}, f.load, func(err error) {
		if err != nil {
			log.Error().Err(err).Msg("TLS files changed or unreadable; serving the certificate loaded before")
			return
		}
		log.Info().Str("cert_file", o.CertFile).Str("keystore", o.KeystoreFile).Msg("TLS certificate reloaded")
	})
	if err != nil {
		return nil, fmt.Errorf("tls: %w", err)
	}
	f.files = files
	return f, nil
}

// serverConfig is the listener configuration: every handshake takes the
// current one.
func (f *tlsFiles) serverConfig() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			return f.files.Get(), nil
		},
	}
}

func (f *tlsFiles) load() (*tls.Config, error) {
	o := f.opts
	pair, err := o.keyPair()
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{pair}}
	if o.ClientCAFile != "" {
		pool, err := LoadCertPool(o.ClientCAFile)
		if err != nil {
			return nil, err
		}
		cfg.ClientCAs = pool
	}
	if o.ClientTruststoreFile != "" {
		typ := cmp.Or(o.ClientTruststoreType, tlsstore.JKS)
		data, err := os.ReadFile(o.ClientTruststoreFile)
		if err != nil {
			return nil, fmt.Errorf("tls truststore: %w", err)
		}
		certs, err := tlsstore.TrustedCertificates(data, typ, o.ClientTruststorePassword)
		if err != nil {
			return nil, fmt.Errorf("tls truststore %s (%s): %w", o.ClientTruststoreFile, typ, err)
		}
		cfg.ClientCAs = tlsstore.Pool(certs)
	}
	switch o.ClientAuth {
	case "request":
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	case "require":
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

// keyPair reads the listeners' certificate and key, from the PEM files or
// the keystore.
func (o TLSListener) keyPair() (tls.Certificate, error) {
	if o.KeystoreFile == "" {
		pair, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			return pair, fmt.Errorf("tls certificate %s / key %s: %w", o.CertFile, o.KeyFile, err)
		}
		return pair, nil
	}
	typ := cmp.Or(o.KeystoreType, tlsstore.JKS) // Kafka's default
	data, err := os.ReadFile(o.KeystoreFile)
	if err == nil {
		var pair tls.Certificate
		if pair, err = tlsstore.KeyPair(data, typ, o.KeystorePassword, o.KeyPassword); err == nil {
			return pair, nil
		}
	}
	return tls.Certificate{}, fmt.Errorf("tls keystore %s (%s): %w", o.KeystoreFile, typ, err)
}

// LoadCertPool reads a PEM bundle of CA certificates.
func LoadCertPool(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("CA file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("CA file %s: no PEM certificate in it", file)
	}
	return pool, nil
}
