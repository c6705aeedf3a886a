// Package testpki makes throwaway certificate authorities and certificates
// for tests, so that no key is ever committed: a CA, server certificates for
// hosts and addresses, client certificates, and any validity period (an
// expired one included).
// Only tests and the e2e suite use it; nothing it makes is trusted by
// production code.
package testpki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// CA is a self-signed certificate authority.
type CA struct {
	Cert    *x509.Certificate
	CertPEM []byte
	key     *ecdsa.PrivateKey
}

// Pair is an issued certificate and its key, PEM encoded.
type Pair struct {
	CertPEM, KeyPEM []byte
}

// NewCA makes a CA named name.
func NewCA(name string) (*CA, error) {
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	key, der, err := certificate(tmpl, nil)
	if err != nil {
		return nil, fmt.Errorf("CA %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), key: key}, nil
}

// certificate makes a key and the certificate of tmpl for it, with a
// random serial number, signed by ca (nil: by the new key itself, a
// self-signed certificate).
func certificate(tmpl *x509.Certificate, ca *CA) (*ecdsa.PrivateKey, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("key of %s: %w", tmpl.Subject.CommonName, err)
	}
	tmpl.SerialNumber = serial()
	parent, signer := tmpl, key
	if ca != nil {
		parent, signer = ca.Cert, ca.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		return nil, nil, fmt.Errorf("certificate %s: %w", tmpl.Subject.CommonName, err)
	}
	return key, der, nil
}

// Pool is a pool holding only the CA.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// Issue signs a certificate for cn valid from notBefore to notAfter, for the
// hosts (DNS names or IP addresses) as a server and usable as a client too.
func (ca *CA) Issue(cn string, hosts []string, notBefore, notAfter time.Time) (*Pair, error) {
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: cn},
		NotBefore:   notBefore,
		NotAfter:    notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	key, der, err := certificate(tmpl, ca)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return &Pair{
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

// IssueNow is Issue valid from an hour ago for a day.
func (ca *CA) IssueNow(cn string, hosts ...string) (*Pair, error) {
	return ca.Issue(cn, hosts, time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour))
}

// TLS is the pair as a tls.Certificate.
func (p *Pair) TLS() (tls.Certificate, error) { return tls.X509KeyPair(p.CertPEM, p.KeyPEM) }

// Write stores the pair as dir/name.crt and dir/name.key and returns both
// paths.
func (p *Pair) Write(dir, name string) (certFile, keyFile string, err error) {
	certFile, keyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	if err := os.WriteFile(certFile, p.CertPEM, 0o600); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(keyFile, p.KeyPEM, 0o600); err != nil {
		return "", "", err
	}
	return certFile, keyFile, nil
}

// WriteCA stores the CA certificate as dir/name.crt and returns the path.
func (ca *CA) WriteCA(dir, name string) (string, error) {
	f := filepath.Join(dir, name+".crt")
	return f, os.WriteFile(f, ca.CertPEM, 0o600)
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return n
}

// ServerFiles are a new CA and a server certificate it signed, written as
// PEM files: what a TLS listener and its clients' truststore need.
type ServerFiles struct {
	CA                        *CA
	CertFile, KeyFile, CAFile string
}

// NewServerFiles makes a CA named name+"-ca" and a certificate cn for hosts,
// and writes dir/<name>.crt, dir/<name>.key and dir/<name>-ca.crt.
func NewServerFiles(dir, name string, hosts ...string) (*ServerFiles, error) {
	ca, err := NewCA(name + "-ca")
	if err != nil {
		return nil, err
	}
	pair, err := ca.IssueNow(name, hosts...)
	if err != nil {
		return nil, err
	}
	f := &ServerFiles{CA: ca}
	if f.CertFile, f.KeyFile, err = pair.Write(dir, name); err != nil {
		return nil, err
	}
	if f.CAFile, err = ca.WriteCA(dir, name+"-ca"); err != nil {
		return nil, err
	}
	return f, nil
}
