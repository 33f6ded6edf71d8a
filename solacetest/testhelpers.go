package solacetest

// This file holds the helpers for Go tests (NewTestBroker, QueuePayloads,
// SelfSignedTLS; NewOAuthServer in oauthserver.go takes a TB too).

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// TB is the part of testing.TB that the test helpers use; *testing.T,
// *testing.B, *testing.F and any testing.TB satisfy it. The helpers take it
// instead of testing.TB so that this package does not import testing: the
// connect-solace binary links the package for its devbroker command, and
// TestBinaryLinksNoTestCode in tests/ keeps testing out of the binary.
type TB interface {
	Helper()
	Cleanup(func())
	Fatalf(format string, args ...any)
	TempDir() string
}

// NewTestBroker starts a broker for t and closes it when the test ends.
func NewTestBroker(t TB, cfg Config) *Broker {
	t.Helper()
	return startForTest(t, "solacetest broker", func() (*Broker, error) { return Start(cfg) })
}

// startForTest starts what with start, failing t when it does not start,
// and closes it when the test ends.
func startForTest[T interface{ Close() error }](t TB, what string, start func() (T, error)) T {
	t.Helper()
	s, err := start()
	if err != nil {
		t.Fatalf("starting the %s: %v", what, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// QueuePayloads returns the payloads queue holds in vpn, oldest first, as
// strings: what a test compares with what it sent.
func QueuePayloads(t TB, b *Broker, vpn, queue string) []string {
	t.Helper()
	msgs, err := b.QueueMessages(vpn, queue)
	if err != nil {
		t.Fatalf("reading queue %q: %v", queue, err)
	}
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = string(m)
	}
	return out
}

// SelfSignedTLS makes a fresh self-signed certificate for 127.0.0.1 and
// localhost, valid for an hour. It returns a server config to pass as
// Config.TLS and a directory holding the certificate as ca.pem, which the
// Solace client takes as its trust store (the client reads trust from files,
// not from a Go *tls.Config).
func SelfSignedTLS(t TB) (*tls.Config, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("generating a TLS key: %v", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "solacetest"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
		IsCA:                  true,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatalf("creating a self-signed certificate: %v", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatalf("encoding the TLS key: %v", err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	cert, err := tls.X509KeyPair(certPEM, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
	if err != nil {
		t.Fatalf("loading the certificate pair: %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ca.pem"), certPEM, 0o600); err != nil {
		t.Fatalf("writing the trust store: %v", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, dir
}
