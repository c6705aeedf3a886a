package testpki

import (
	"bytes"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"time"

	"github.com/pavlo-v-chernykh/keystore-go/v4"
	"software.sslmate.com/src/go-pkcs12"
)

// Stores in the formats Kafka's ssl.keystore.type and ssl.truststore.type
// name, made by the libraries' own encoders.

// PKCS12 is the pair (key and certificate) as a PKCS#12 keystore.
func (p *Pair) PKCS12(password string) ([]byte, error) {
	key, cert, err := p.parse()
	if err != nil {
		return nil, err
	}
	return pkcs12.Modern.Encode(key, cert, nil, password)
}

// JKS is the pair as a JKS keystore under alias, the store and the key
// with their own passwords (keytool's -storepass and -keypass).
func (p *Pair) JKS(alias, storePassword, keyPassword string) ([]byte, error) {
	b, _ := pem.Decode(p.KeyPEM)
	cb, _ := pem.Decode(p.CertPEM)
	if b == nil || cb == nil {
		return nil, errors.New("pair: no PEM")
	}
	ks := keystore.New()
	err := ks.SetPrivateKeyEntry(alias, keystore.PrivateKeyEntry{
		CreationTime: time.Now(), PrivateKey: b.Bytes,
		CertificateChain: []keystore.Certificate{{Type: "X509", Content: cb.Bytes}},
	}, []byte(keyPassword))
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := ks.Store(&out, []byte(storePassword)); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func (p *Pair) parse() (any, *x509.Certificate, error) {
	c, err := p.TLS()
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(c.Certificate[0])
	return c.PrivateKey, cert, err
}

// TrustPKCS12 is the CA as a PKCS#12 truststore.
func (ca *CA) TrustPKCS12(password string) ([]byte, error) {
	return pkcs12.Modern.WithRand(rand.Reader).EncodeTrustStore([]*x509.Certificate{ca.Cert}, password)
}

// TrustJKS is the CA as a JKS truststore.
func (ca *CA) TrustJKS(password string) ([]byte, error) {
	ks := keystore.New()
	if err := ks.SetTrustedCertificateEntry("ca", keystore.TrustedCertificateEntry{
		CreationTime: time.Now(), Certificate: keystore.Certificate{Type: "X509", Content: ca.Cert.Raw},
	}); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := ks.Store(&out, []byte(password)); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
