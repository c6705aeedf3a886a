package config

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/streamshift/streamshift/internal/reload"
	"github.com/streamshift/streamshift/internal/tlsstore"
)

// TLS is TLS on the client listeners (bootstrap and every node port). It is
// on when CertFile is set.
type TLS struct {
	// CertFile / KeyFile: PEM server certificate (chain after it) and key,
	// re-read when they change.
	CertFile string `koanf:"cert-file"`
	KeyFile  string `koanf:"key-file"`
	// KeystoreLocation, instead of CertFile and KeyFile: a JKS, PKCS#12
	// or PEM keystore (Kafka's ssl.keystore.*), re-read when it changes.
	KeystoreLocation string `koanf:"keystore-location"`
	KeystoreType     string `koanf:"keystore-type"`
	KeystorePassword string `koanf:"keystore-password"`
	KeyPassword      string `koanf:"key-password"`
	// ClientCAFile: PEM CAs that client certificates must chain to (mTLS).
	ClientCAFile string `koanf:"client-ca-file"`
	// TruststoreLocation, instead of ClientCAFile: a JKS, PKCS#12 or PEM
	// truststore of those CAs (Kafka's ssl.truststore.*), re-read when it
	// changes.
	TruststoreLocation string `koanf:"truststore-location"`
	TruststoreType     string `koanf:"truststore-type"`
	TruststorePassword string `koanf:"truststore-password"`
	// ClientAuth: none, request (verified when sent) or require.
	ClientAuth string `koanf:"client-auth"`
	// HandshakeTimeout bounds one client handshake.
	HandshakeTimeout time.Duration `koanf:"handshake-timeout"`
	// MaxHandshakes caps the client handshakes running at once.
	MaxHandshakes int `koanf:"max-handshakes"`
}

// Enabled reports whether the client listeners speak TLS.
func (t TLS) Enabled() bool { return t.CertFile != "" || t.KeystoreLocation != "" }

// UpstreamTLS is TLS from streamshift to the brokers: every forwarded
// connection and every control-plane client.
type UpstreamTLS struct {
	Enabled bool `koanf:"enabled"`
	// CAFile: PEM CAs the brokers' certificates must chain to (empty: the
	// system pool).
	CAFile string `koanf:"ca-file"`
	// CertFile / KeyFile: a client certificate for brokers that want mTLS
	// (ssl.client.auth=required).
	CertFile string `koanf:"cert-file"`
	KeyFile  string `koanf:"key-file"`
	// ServerName is the name checked in the brokers' certificates (empty:
	// the host of each address dialled).
	ServerName string `koanf:"server-name"`
	// InsecureSkipVerify turns the certificate check off (tests only).
	InsecureSkipVerify bool `koanf:"insecure-skip-verify"`
}

func defaultTLS() TLS {
	return TLS{ClientAuth: "none", HandshakeTimeout: 10 * time.Second, MaxHandshakes: 1024, KeystoreType: tlsstore.JKS, TruststoreType: tlsstore.JKS}
}

// loadPool reads the CA file (nil: none, the system pool).
func (u UpstreamTLS) loadPool() (*x509.CertPool, error) {
	if u.CAFile == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(u.CAFile)
	if err != nil {
		return nil, fmt.Errorf("upstream-tls.ca-file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("upstream-tls.ca-file %s: no PEM certificate in it", u.CAFile)
	}
	return pool, nil
}

// loadPair reads the client certificate (nil: none).
func (u UpstreamTLS) loadPair() (*tls.Certificate, error) {
	if u.CertFile == "" && u.KeyFile == "" {
		return nil, nil
	}
	pair, err := tls.LoadX509KeyPair(u.CertFile, u.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("upstream-tls.cert-file / key-file: %w", err)
	}
	return &pair, nil
}

// ClientConfig builds the upstream TLS configuration, nil when it is off.
// The client certificate is re-read when its files change (internal/reload:
// checked at most once a second, on a handshake), as the listener's are, so
// a renewed certificate is presented by the next connection without a
// restart; reloaded, if not nil, hears of each reload or failed reload. The
// CA file is read once: crypto/tls checks the brokers' certificates against
// a fixed RootCAs, and that check (chain, and the name, IP addresses
// included) stays crypto/tls's own.
func (u UpstreamTLS) ClientConfig(reloaded func(error)) (*tls.Config, error) {
	if !u.Enabled {
		return nil, nil
	}
	pool, err := u.loadPool()
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: u.ServerName, InsecureSkipVerify: u.InsecureSkipVerify, RootCAs: pool} //nolint:gosec // asked for, and warned about at start
	if u.CertFile == "" && u.KeyFile == "" {
		return cfg, nil
	}
	pair, err := reload.New([]string{u.CertFile, u.KeyFile}, u.loadPair, reloaded)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("upstream-tls.cert-file / key-file: %w", err)
		}
		return nil, err
	}
	cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
		return pair.Get(), nil
	}
	return cfg, nil
}

func (c *Config) validateSecurity() []string {
	var errs []string
	t := c.TLS
	switch t.ClientAuth {
	case "none", "request", "require":
	default:
		errs = append(errs, fmt.Sprintf("tls.client-auth %q: want none, request or require", t.ClientAuth))
	}
	if (t.CertFile == "") != (t.KeyFile == "") {
		errs = append(errs, "tls.cert-file and tls.key-file: set both or neither")
	}
	errs = append(errs, c.TLS.validateKeystore()...)
	errs = append(errs, c.TLS.validateTruststore()...)
	if !t.Enabled() && (t.ClientCAFile != "" || t.TruststoreLocation != "" || t.ClientAuth != "none") {
		errs = append(errs, "tls.client-ca-file / tls.client-auth: need tls.cert-file and tls.key-file, or tls.keystore-location")
	}
	if t.ClientAuth == "require" && t.ClientCAFile == "" && t.TruststoreLocation == "" {
		errs = append(errs, "tls.client-auth require: needs tls.client-ca-file or tls.truststore-location")
	}
	if t.HandshakeTimeout <= 0 {
		errs = append(errs, fmt.Sprintf("tls.handshake-timeout: must be positive, got %v", t.HandshakeTimeout))
	}
	if t.MaxHandshakes < 1 {
		errs = append(errs, fmt.Sprintf("tls.max-handshakes: must be >= 1, got %d", t.MaxHandshakes))
	}
	u := c.UpstreamTLS
	if !u.Enabled && (u.CAFile != "" || u.CertFile != "" || u.KeyFile != "" || u.ServerName != "" || u.InsecureSkipVerify) {
		errs = append(errs, "upstream-tls.*: set upstream-tls.enabled=true to use them")
	}
	if c.upstreamProps != nil {
		c.upstreamTLS = c.upstreamProps.tls // upstream-tls.* are unset (applyUpstreamConfig)
		return errs
	}
	if u.Enabled && c.upstreamTLSLog == nil {
		c.upstreamTLSLog = &reloadLog{}
	}
	cfg, err := u.ClientConfig(c.upstreamTLSLog.tell)
	if err != nil {
		errs = append(errs, err.Error())
	}
	c.upstreamTLS = cfg
	return errs
}

// reloadLog passes the upstream TLS files' reloads to the logger cmd sets
// once it has one (Validate builds the configuration before).
type reloadLog struct {
	mu sync.Mutex
	fn func(error)
}

func (l *reloadLog) tell(err error) {
	l.mu.Lock()
	fn := l.fn
	l.mu.Unlock()
	if fn != nil {
		fn(err)
	}
}

// OnUpstreamTLSReload sets what hears of each reload of the upstream TLS
// files (nil error) or failed reload (the old files stay in use).
func (c *Config) OnUpstreamTLSReload(fn func(error)) {
	if c.upstreamTLSLog == nil {
		c.upstreamTLSLog = &reloadLog{} // before Validate: it keeps this one
	}
	c.upstreamTLSLog.mu.Lock()
	c.upstreamTLSLog.fn = fn
	c.upstreamTLSLog.mu.Unlock()
}

// UpstreamTLSConfig is the upstream TLS configuration Validate built from
// the files, nil when upstream TLS is off.
func (c *Config) UpstreamTLSConfig() *tls.Config { return c.upstreamTLS }
