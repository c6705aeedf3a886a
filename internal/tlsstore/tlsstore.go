// Package tlsstore reads the key and trust stores Kafka's ssl.keystore.* and
// ssl.truststore.* settings name: JKS, PKCS#12 and PEM, by their own
// libraries (keystore-go, go-pkcs12, encoding/pem), so that the files a
// Kafka client or broker already uses serve streamshift unchanged.
// It owns the stores' decoding only: it reads the files it is given,
// watches nothing (internal/reload does) and builds no tls.Config.
package tlsstore

import (
	"bytes"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	"github.com/pavlo-v-chernykh/keystore-go/v4"
	"software.sslmate.com/src/go-pkcs12"
)

// The store types, spelled as Kafka's ssl.keystore.type.
const (
	JKS    = "JKS"
	PKCS12 = "PKCS12"
	PEM    = "PEM"
)

// ParseType is a store type as Kafka reads it (Java's KeyStore.getInstance
// ignores case): JKS, PKCS12 or PEM.
func ParseType(s string) (string, error) {
	switch t := strings.ToUpper(strings.TrimSpace(s)); t {
	case JKS, PKCS12, PEM:
		return t, nil
	}
	return "", fmt.Errorf("%q: want JKS, PKCS12 or PEM", s)
}

// jksMagic starts every JKS file (JCEKS has 0xCECECECE).
const jksMagic = 0xFEEDFEED

// format is what data is by its first bytes: Java's keystore.type.compat
// (on by default) reads a PKCS#12 file named JKS and a JKS file named
// PKCS12, so a store whose type is mistaken still loads, in Java and here.
func format(data []byte, typ string) (string, error) {
	if typ == PEM {
		return PEM, nil
	}
	switch {
	case len(data) >= 4 && binary.BigEndian.Uint32(data) == jksMagic:
		return JKS, nil
	case len(data) >= 4 && binary.BigEndian.Uint32(data) == 0xCECECECE:
		return "", errors.New("a JCEKS store: convert it to PKCS12 (keytool -importkeystore -deststoretype PKCS12)")
	case len(data) > 0 && data[0] == 0x30: // an ASN.1 SEQUENCE: PKCS#12
		return PKCS12, nil
	}
	return "", fmt.Errorf("neither JKS nor PKCS12 (%s was named)", typ)
}

// TrustedCertificates are the certificates of a truststore: every trusted
// certificate entry of a JKS or PKCS#12 store, every CERTIFICATE block of
// a PEM one. An empty password reads a JKS store without checking its
// integrity, as Java does.
func TrustedCertificates(data []byte, typ, password string) ([]*x509.Certificate, error) {
	f, err := format(data, typ)
	if err != nil {
		return nil, err
	}
	var certs []*x509.Certificate
	switch f {
	case PEM:
		certs, err = pemCertificates(data)
	case PKCS12:
		certs, err = pkcs12.DecodeTrustStore(data, password)
		if err != nil {
			err = fmt.Errorf("PKCS12 truststore: %w", err)
		}
	case JKS:
		certs, err = jksTrusted(data, password)
	}
	if err != nil {
		return nil, err
	}
	if len(certs) == 0 {
		return nil, errors.New("no certificate in it")
	}
	return certs, nil
}

// Pool is certs as a pool.
func Pool(certs []*x509.Certificate) *x509.CertPool {
	p := x509.NewCertPool()
	for _, c := range certs {
		p.AddCert(c)
	}
	return p
}

func jksTrusted(data []byte, password string) ([]*x509.Certificate, error) {
	ks, err := loadJKS(data, password)
	if err != nil {
		return nil, err
	}
	var certs []*x509.Certificate
	for _, alias := range ks.Aliases() {
		if !ks.IsTrustedCertificateEntry(alias) {
			continue
		}
		e, err := ks.GetTrustedCertificateEntry(alias)
		if err != nil {
			return nil, fmt.Errorf("JKS entry %s: %w", alias, err)
		}
		c, err := x509.ParseCertificate(e.Certificate.Content)
		if err != nil {
			return nil, fmt.Errorf("JKS entry %s: %w", alias, err)
		}
		certs = append(certs, c)
	}
	return certs, nil
}

// loadJKS reads a JKS store. Java skips the integrity check of a store
// opened without a password (a truststore often has none set on the
// client); keystore-go always checks the digest, after reading every
// entry, so a failed check without a password keeps the entries read.
func loadJKS(data []byte, password string) (keystore.KeyStore, error) {
	ks := keystore.New()
	err := ks.Load(bytes.NewReader(data), []byte(password))
	if err != nil && !(password == "" && strings.Contains(err.Error(), "digest") && len(ks.Aliases()) > 0) {
		if strings.Contains(err.Error(), "digest") {
			return ks, errors.New("JKS store: wrong password (integrity check failed)")
		}
		return ks, fmt.Errorf("JKS store: %w", err)
	}
	return ks, nil
}

// KeyPair is the private key and certificate chain of a keystore: the one
// private key entry of a JKS store (decrypted with keyPassword, else the
// store's password, as Kafka does), the key and certificates of a PKCS#12
// store, the key and CERTIFICATE blocks of a PEM one.
func KeyPair(data []byte, typ, storePassword, keyPassword string) (tls.Certificate, error) {
	f, err := format(data, typ)
	if err != nil {
		return tls.Certificate{}, err
	}
	switch f {
	case PEM:
		return PEMKeyPair(data, data)
	case PKCS12:
		key, leaf, chain, err := pkcs12.DecodeChain(data, storePassword)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("PKCS12 keystore: %w", err)
		}
		return pair(key, append([]*x509.Certificate{leaf}, chain...))
	}
	ks, err := loadJKS(data, storePassword)
	if err != nil {
		return tls.Certificate{}, err
	}
	var aliases []string
	for _, a := range ks.Aliases() {
		if ks.IsPrivateKeyEntry(a) {
			aliases = append(aliases, a)
		}
	}
	if len(aliases) != 1 {
		return tls.Certificate{}, fmt.Errorf("JKS keystore: %d private key entries (%s), want one", len(aliases), strings.Join(aliases, ", "))
	}
	pw := keyPassword
	if pw == "" {
		pw = storePassword
	}
	e, err := ks.GetPrivateKeyEntry(aliases[0], []byte(pw))
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("JKS entry %s: %w (a wrong key password?)", aliases[0], err)
	}
	key, err := x509.ParsePKCS8PrivateKey(e.PrivateKey)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("JKS entry %s: %w", aliases[0], err)
	}
	var chain []*x509.Certificate
	for _, c := range e.CertificateChain {
		cert, err := x509.ParseCertificate(c.Content)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("JKS entry %s: %w", aliases[0], err)
		}
		chain = append(chain, cert)
	}
	return pair(key, chain)
}

// pair puts the certificate of key first: a store lists the chain in any
// order.
func pair(key any, certs []*x509.Certificate) (tls.Certificate, error) {
	signer, ok := key.(crypto.Signer)
	if !ok {
		return tls.Certificate{}, fmt.Errorf("private key of type %T cannot sign", key)
	}
	type publicKey interface{ Equal(crypto.PublicKey) bool }
	pub, _ := signer.Public().(publicKey)
	leaf := -1
	for i, c := range certs {
		if pub != nil && pub.Equal(c.PublicKey) {
			leaf = i
			break
		}
	}
	if leaf < 0 {
		return tls.Certificate{}, errors.New("no certificate for its private key")
	}
	out := tls.Certificate{PrivateKey: key, Leaf: certs[leaf]}
	out.Certificate = append(out.Certificate, certs[leaf].Raw)
	for i, c := range certs {
		if i != leaf {
			out.Certificate = append(out.Certificate, c.Raw)
		}
	}
	return out, nil
}

// PEMKeyPair is a PEM certificate chain and its key (Kafka's
// ssl.keystore.certificate.chain and ssl.keystore.key, or one PEM keystore
// file holding both). An encrypted key (ENCRYPTED PRIVATE KEY, Kafka's
// ssl.key.password) is refused with a way out: Go's library reads no
// encrypted PKCS#8.
func PEMKeyPair(chainPEM, keyPEM []byte) (tls.Certificate, error) {
	if bytes.Contains(keyPEM, []byte("-----BEGIN ENCRYPTED PRIVATE KEY")) {
		return tls.Certificate{}, errors.New("an encrypted PEM key is not supported: decrypt it (openssl pkcs8 -nocrypt) or use a PKCS12 keystore")
	}
	c, err := tls.X509KeyPair(chainPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("PEM key and certificates: %w", err)
	}
	return c, nil
}

func pemCertificates(data []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return certs, nil
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("PEM certificate: %w", err)
		}
		certs = append(certs, c)
	}
}
