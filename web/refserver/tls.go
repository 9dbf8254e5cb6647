package refserver

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"
)

// TestCertificate is a self-signed certificate made when a server starts, so that the test
// servers can speak HTTPS, and with it HTTP/2 (browsers speak HTTP/2 only over TLS; Chromium
// streams a fetch request body only over HTTP/2 or later). Nothing of it is written to disk:
// each start makes a new key. Clients trust it by one of:
//   - SPKI, for Chromium's --ignore-certificate-errors-spki-list (that key alone is trusted);
//   - PEM, for a client's own root pool (Go's x509.CertPool: ClientConfig; Node's `ca`);
//   - accepting insecure certificates (WebDriver's acceptInsecureCerts, Firefox and WebKit).
type TestCertificate struct {
	Certificate tls.Certificate
	Leaf        *x509.Certificate
	// SPKI is the base64 SHA-256 of the certificate's SubjectPublicKeyInfo.
	SPKI string
	// PEM is the certificate (not its key) PEM-encoded.
	PEM []byte
}

// NewTestCertificate makes a self-signed ECDSA P-256 server certificate for hosts (IP
// addresses or DNS names; default 127.0.0.1, ::1 and localhost), valid from an hour ago for
// 30 days.
func NewTestCertificate(hosts ...string) (*TestCertificate, error) {
	if len(hosts) == 0 {
		hosts = []string{"127.0.0.1", "::1", "localhost"}
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("refserver: test certificate: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("refserver: test certificate: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{Organization: []string{"mediaupload test"}, CommonName: hosts[0]},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(30 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, // an end-entity certificate (IsCA false): Firefox refuses a CA one as a server's
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("refserver: test certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("refserver: test certificate: %w", err)
	}
	spki := sha256.Sum256(leaf.RawSubjectPublicKeyInfo)
	return &TestCertificate{
		Certificate: tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf},
		Leaf:        leaf,
		SPKI:        base64.StdEncoding.EncodeToString(spki[:]),
		PEM:         pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
	}, nil
}

// ServerConfig is the TLS configuration of a server that uses the certificate and offers
// HTTP/2 and HTTP/1.1 by ALPN (h2 first: a client that speaks it gets it). Give it to an
// http.Server as TLSConfig and call ServeTLS(ln, "", ""): net/http then serves HTTP/2 itself.
func (c *TestCertificate) ServerConfig() *tls.Config {
	return &tls.Config{
		Certificates: []tls.Certificate{c.Certificate},
		NextProtos:   []string{"h2", "http/1.1"},
		MinVersion:   tls.VersionTLS12,
	}
}

// ClientConfig is a TLS configuration that trusts the certificate alone (for Go clients).
func (c *TestCertificate) ClientConfig() *tls.Config {
	pool := x509.NewCertPool()
	pool.AddCert(c.Leaf)
	return &tls.Config{RootCAs: pool, NextProtos: []string{"h2", "http/1.1"}}
}
