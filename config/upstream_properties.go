package config

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"

	"github.com/magiconair/properties"

	"github.com/streamshift/streamshift/internal/reload"
	"github.com/streamshift/streamshift/internal/tlsstore"
)

// upstreamProperties is what --upstream-config describes: a Kafka client
// properties file, as Kafka's own tools take with --command-config. It
// configures every connection streamshift opens to the brokers: the
// control-plane clients (TLS and SASL) and the clients' connections it
// forwards where it terminates their TLS (TLS only: a client's SASL is its
// own, passed through).
type upstreamProperties struct {
	file      string
	bootstrap []string
	protocol  string
	// tls is nil without SSL or SASL_SSL.
	tls *tls.Config
	// saslMechanism, saslUsername and saslPassword are streamshift's own
	// credentials (as control-plane.sasl-*), empty without SASL.
	saslMechanism, saslUsername, saslPassword string
	// warnings are the file's keys streamshift does not read, one each
	// (as Kafka's clients log "supplied but isn't a known config").
	warnings []string
}

// The properties streamshift reads.
const (
	propBootstrap         = "bootstrap.servers"
	propProtocol          = "security.protocol"
	propTruststoreType    = "ssl.truststore.type"
	propTruststoreLoc     = "ssl.truststore.location"
	propTruststorePass    = "ssl.truststore.password"
	propTruststoreCerts   = "ssl.truststore.certificates"
	propKeystoreType      = "ssl.keystore.type"
	propKeystoreLoc       = "ssl.keystore.location"
	propKeystorePass      = "ssl.keystore.password"
	propKeyPassword       = "ssl.key.password"
	propKeystoreChain     = "ssl.keystore.certificate.chain"
	propKeystoreKey       = "ssl.keystore.key"
	propEndpointIdent     = "ssl.endpoint.identification.algorithm"
	propSASLMechanism     = "sasl.mechanism"
	propSASLJAAS          = "sasl.jaas.config"
	propConfigProviders   = "config.providers"
	kafkaDefaultMechanism = "GSSAPI"
)

// readProperties are the keys upstreamProperties reads; every other key
// is either a known Kafka client setting that changes nothing here
// (ignoredProperties) or warned about.
var readProperties = map[string]bool{
	propBootstrap: true, propProtocol: true, propTruststoreType: true, propTruststoreLoc: true,
	propTruststorePass: true, propTruststoreCerts: true, propKeystoreType: true, propKeystoreLoc: true,
	propKeystorePass: true, propKeyPassword: true, propKeystoreChain: true, propKeystoreKey: true,
	propEndpointIdent: true, propSASLMechanism: true, propSASLJAAS: true,
}

// ignoredProperties are Kafka client settings a properties file written
// for Kafka's tools or clients often carries and that do not change how
// streamshift connects (identity, timing, buffers, metrics): accepted
// without a word. A setting that would change the security of the
// connection (ssl.cipher.suites, ssl.enabled.protocols, sasl.login.*) is
// not here: it is warned about, since it is not applied.
var ignoredProperties = map[string]bool{
	"client.id": true, "client.dns.lookup": true, "request.timeout.ms": true, "default.api.timeout.ms": true,
	"retries": true, "retry.backoff.ms": true, "retry.backoff.max.ms": true,
	"reconnect.backoff.ms": true, "reconnect.backoff.max.ms": true, "connections.max.idle.ms": true,
	"socket.connection.setup.timeout.ms": true, "socket.connection.setup.timeout.max.ms": true,
	"metadata.max.age.ms": true, "send.buffer.bytes": true, "receive.buffer.bytes": true,
	"metrics.num.samples": true, "metrics.recording.level": true, "metrics.sample.window.ms": true,
	"metric.reporters": true, "auto.include.jmx.reporter": true, "enable.metrics.push": true,
	"ssl.protocol": true, // Kafka's SSLContext protocol (TLSv1.3); Go negotiates TLS 1.2 and 1.3
}

// readUpstreamProperties reads and checks the properties file at path.
// Every problem names the key and the file.
// reloaded, if not nil, hears of each reload of the keystore file.
func readUpstreamProperties(path string, reloaded func(error)) (*upstreamProperties, []string) {
	fail := func(format string, args ...any) []string {
		return []string{fmt.Sprintf("upstream-config %s: ", path) + fmt.Sprintf(format, args...)}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is named already
		}
		return nil, fail("%v", err)
	}
	// Kafka reads the file with java.util.Properties: no ${} expansion
	// (a password may hold "${"), ISO-8859-1 as Java 8 did, UTF-8 now.
	loader := properties.Loader{Encoding: properties.UTF8, DisableExpansion: true}
	p, err := loader.LoadBytes(raw)
	if err != nil {
		return nil, fail("%v", err)
	}
	u := &upstreamProperties{file: path}
	var errs []string
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Sprintf("upstream-config %s: %s ", path, key)+fmt.Sprintf(format, args...))
	}
	get := func(key string) string {
		v, _ := p.Get(key)
		return strings.TrimSpace(v)
	}
	keys := p.Keys()
	sort.Strings(keys)
	for _, k := range keys {
		switch {
		case readProperties[k] || ignoredProperties[k]:
		case k == propConfigProviders:
			bad(k, "%q: config providers are not supported by streamshift; put the values in the file", get(k))
		default:
			u.warnings = append(u.warnings, fmt.Sprintf("upstream-config %s: the configuration '%s' was supplied but isn't a known config; ignored", path, k))
		}
	}

	for _, s := range strings.Split(get(propBootstrap), ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		if err := checkHostPort(s, false); err != nil {
			bad(propBootstrap, "%q: %v", s, err)
			continue
		}
		u.bootstrap = append(u.bootstrap, s)
	}

	u.protocol = strings.ToUpper(get(propProtocol))
	if u.protocol == "" {
		u.protocol = "PLAINTEXT" // Kafka's default
	}
	useTLS, useSASL := false, false
	switch u.protocol {
	case "PLAINTEXT":
	case "SSL":
		useTLS = true
	case "SASL_PLAINTEXT":
		useSASL = true
	case "SASL_SSL":
		useTLS, useSASL = true, true
	default:
		bad(propProtocol, "%q: want PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL", get(propProtocol))
	}
	unused := func(why string, keys ...string) {
		for _, k := range keys {
			if _, ok := p.Get(k); ok {
				u.warnings = append(u.warnings, fmt.Sprintf("upstream-config %s: %s is set but %s %s uses no %s; ignored", path, k, propProtocol, u.protocol, why))
			}
		}
	}
	if useTLS {
		cfg, e := u.tlsConfig(get, p, reloaded)
		for _, m := range e {
			errs = append(errs, fmt.Sprintf("upstream-config %s: %s", path, m))
		}
		u.tls = cfg
	} else {
		unused("TLS", propTruststoreType, propTruststoreLoc, propTruststorePass, propTruststoreCerts, propKeystoreType,
			propKeystoreLoc, propKeystorePass, propKeyPassword, propKeystoreChain, propKeystoreKey, propEndpointIdent)
	}
	if useSASL {
		for _, m := range u.sasl(get) {
			errs = append(errs, fmt.Sprintf("upstream-config %s: %s", path, m))
		}
	} else {
		unused("SASL", propSASLMechanism, propSASLJAAS)
	}
	return u, errs
}

// sasl reads sasl.mechanism and the username and password of
// sasl.jaas.config.
func (u *upstreamProperties) sasl(get func(string) string) []string {
	mech := get(propSASLMechanism)
	var errs []string
	switch mech {
	case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
	case "":
		errs = append(errs, fmt.Sprintf("%s: not set, and Kafka's default %s (Kerberos) is not supported: want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", propSASLMechanism, kafkaDefaultMechanism))
	default:
		errs = append(errs, fmt.Sprintf("%s %q: want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", propSASLMechanism, mech))
	}
	jaas := get(propSASLJAAS)
	if jaas == "" {
		return append(errs, fmt.Sprintf("%s: required with %s %s", propSASLJAAS, propProtocol, u.protocol))
	}
	login, err := parseJAAS(jaas)
	if err != nil {
		return append(errs, fmt.Sprintf("%s: %v", propSASLJAAS, err))
	}
	wantModule := scramLoginModule
	if mech == "PLAIN" {
		wantModule = plainLoginModule
	}
	if len(errs) == 0 && login.module != wantModule {
		errs = append(errs, fmt.Sprintf("%s: %s does not log in with %s %s; want %s", propSASLJAAS, login.module, propSASLMechanism, mech, wantModule))
	}
	for _, k := range []string{"username", "password"} {
		if _, ok := login.options[k]; !ok {
			errs = append(errs, fmt.Sprintf("%s: no %s option", propSASLJAAS, k))
		}
	}
	if v := login.options["tokenauth"]; strings.EqualFold(v, "true") {
		errs = append(errs, fmt.Sprintf("%s: tokenauth=true (delegation tokens) is not supported", propSASLJAAS))
	}
	u.saslMechanism, u.saslUsername, u.saslPassword = mech, login.options["username"], login.options["password"]
	return errs
}

// tlsConfig builds the TLS of every connection to the brokers from the
// ssl.* keys: the truststore (none: the system pool, as Java's cacerts),
// the keystore for brokers with ssl.client.auth=required (re-read when its
// file changes, as upstream-tls.cert-file is), and the host name check.
func (u *upstreamProperties) tlsConfig(get func(string) string, p *properties.Properties, reloaded func(error)) (*tls.Config, []string) {
	var errs []string
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	storeType := func(key string) string {
		v := get(key)
		if v == "" {
			return tlsstore.JKS // Kafka's default
		}
		t, err := tlsstore.ParseType(v)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s %v", key, err))
		}
		return t
	}

	trustType := storeType(propTruststoreType)
	trustLoc, trustCerts := get(propTruststoreLoc), get(propTruststoreCerts)
	switch {
	case trustLoc != "" && trustCerts != "":
		errs = append(errs, fmt.Sprintf("%s and %s: set one", propTruststoreLoc, propTruststoreCerts))
	case trustCerts != "" && trustType != tlsstore.PEM:
		errs = append(errs, fmt.Sprintf("%s: inline certificates need %s=PEM, not %s (as in Kafka)", propTruststoreCerts, propTruststoreType, trustType))
	case trustCerts != "":
		certs, err := tlsstore.TrustedCertificates([]byte(trustCerts), tlsstore.PEM, "")
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", propTruststoreCerts, err))
		}
		cfg.RootCAs = tlsstore.Pool(certs)
	case trustLoc != "" && trustType != "":
		data, err := os.ReadFile(trustLoc)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", propTruststoreLoc, err))
			break
		}
		certs, err := tlsstore.TrustedCertificates(data, trustType, get(propTruststorePass))
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s %s (%s %s): %v", propTruststoreLoc, trustLoc, propTruststoreType, trustType, err))
		}
		cfg.RootCAs = tlsstore.Pool(certs)
	}

	switch algo := get(propEndpointIdent); strings.ToLower(algo) {
	case "https":
	case "":
		// Kafka's "" is the chain checked but not the host name; it is
		// "https" when the key is missing.
		if _, set := p.Get(propEndpointIdent); set {
			chainOnly(cfg)
			u.warnings = append(u.warnings, fmt.Sprintf("upstream-config %s: %s is empty: the brokers' certificates are checked against the truststore but not their host names", u.file, propEndpointIdent))
		}
	default:
		errs = append(errs, fmt.Sprintf("%s %q: want https or empty (no host name check)", propEndpointIdent, algo))
	}

	keyType := storeType(propKeystoreType)
	keyLoc, chain, key := get(propKeystoreLoc), get(propKeystoreChain), get(propKeystoreKey)
	switch {
	case keyLoc != "" && (chain != "" || key != ""):
		errs = append(errs, fmt.Sprintf("%s and %s / %s: set one", propKeystoreLoc, propKeystoreChain, propKeystoreKey))
	case (chain == "") != (key == ""):
		errs = append(errs, fmt.Sprintf("%s and %s: set both or neither", propKeystoreChain, propKeystoreKey))
	case chain != "" && keyType != tlsstore.PEM:
		errs = append(errs, fmt.Sprintf("%s: an inline key needs %s=PEM, not %s (as in Kafka)", propKeystoreKey, propKeystoreType, keyType))
	case chain != "":
		pair, err := tlsstore.PEMKeyPair([]byte(chain), []byte(key))
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s / %s: %v", propKeystoreChain, propKeystoreKey, err))
			break
		}
		cfg.Certificates = []tls.Certificate{pair}
	case keyLoc != "" && keyType != "":
		storePass, keyPass := get(propKeystorePass), get(propKeyPassword)
		load := func() (tls.Certificate, error) {
			data, err := os.ReadFile(keyLoc)
			if err != nil {
				return tls.Certificate{}, err
			}
			return tlsstore.KeyPair(data, keyType, storePass, keyPass)
		}
		pair, err := reload.New([]string{keyLoc}, load, reloaded)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s %s (%s %s): %v", propKeystoreLoc, keyLoc, propKeystoreType, keyType, err))
			break
		}
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			c := pair.Get()
			return &c, nil
		}
	}
	return cfg, errs
}

// chainOnly checks the brokers' certificate chain against the truststore
// but not their host names (Kafka's ssl.endpoint.identification.algorithm
// set empty): crypto/tls checks both or neither, so its check is off and
// this one does the chain.
func chainOnly(cfg *tls.Config) {
	roots := cfg.RootCAs
	cfg.InsecureSkipVerify = true //nolint:gosec // the chain is verified below, only the name is not: what the key asks
	cfg.VerifyConnection = func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("the broker sent no certificate")
		}
		inter := x509.NewCertPool()
		for _, c := range cs.PeerCertificates[1:] {
			inter.AddCert(c)
		}
		_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
		return err
	}
}

// applyUpstreamConfig reads upstream-config, if set, into the settings
// the rest of streamshift reads: upstream (from bootstrap.servers unless
// upstream is set: it wins, as --bootstrap-server does over a
// --command-config file in Kafka's tools), the upstream TLS and the
// control plane's SASL. The file is the one place for the security of the
// connections to the brokers: upstream-tls.* or control-plane.sasl-* set
// as well is an error, not a merge to guess at.
func (c *Config) applyUpstreamConfig() []string {
	if c.UpstreamConfig == "" || c.upstreamProps != nil {
		return nil
	}
	var errs []string
	var both []string
	for key, set := range map[string]bool{
		"upstream-tls.enabled": c.UpstreamTLS.Enabled, "upstream-tls.ca-file": c.UpstreamTLS.CAFile != "",
		"upstream-tls.cert-file": c.UpstreamTLS.CertFile != "", "upstream-tls.key-file": c.UpstreamTLS.KeyFile != "",
		"upstream-tls.server-name": c.UpstreamTLS.ServerName != "", "upstream-tls.insecure-skip-verify": c.UpstreamTLS.InsecureSkipVerify,
		"control-plane.sasl-mechanism": c.ControlPlane.SASLMechanism != "", "control-plane.sasl-username": c.ControlPlane.SASLUsername != "",
		"control-plane.sasl-password": c.ControlPlane.SASLPassword != "",
	} {
		if set {
			both = append(both, key)
		}
	}
	sort.Strings(both)
	for _, key := range both {
		errs = append(errs, fmt.Sprintf("%s: set together with upstream-config %s, whose security.protocol, ssl.* and sasl.* keys configure the connections to the brokers; use one or the other", key, c.UpstreamConfig))
	}
	if c.upstreamTLSLog == nil {
		c.upstreamTLSLog = &reloadLog{}
	}
	u, perrs := readUpstreamProperties(c.UpstreamConfig, c.upstreamTLSLog.tell)
	errs = append(errs, perrs...)
	if u == nil {
		return errs
	}
	c.upstreamProps = u
	switch {
	case len(c.Upstream) == 0:
		c.Upstream = append([]string(nil), u.bootstrap...)
	case len(u.bootstrap) > 0 && strings.Join(c.Upstream, ",") != strings.Join(u.bootstrap, ","):
		u.warnings = append(u.warnings, fmt.Sprintf("upstream-config %s: %s %s not used: upstream %s is set and wins, as --bootstrap-server does over --command-config in Kafka's tools",
			c.UpstreamConfig, propBootstrap, strings.Join(u.bootstrap, ","), strings.Join(c.Upstream, ",")))
	}
	if len(both) == 0 {
		c.ControlPlane.SASLMechanism, c.ControlPlane.SASLUsername, c.ControlPlane.SASLPassword = u.saslMechanism, u.saslUsername, u.saslPassword
	}
	return errs
}

// ConfigWarnings are what Validate found worth a warning but not fatal
// (upstream-config's unknown keys).
func (c *Config) ConfigWarnings() []string {
	if c.upstreamProps == nil {
		return nil
	}
	return c.upstreamProps.warnings
}
