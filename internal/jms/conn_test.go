package jms

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/amqpwire/amqpwiretest"
)

// tlsFront terminates TLS on 127.0.0.1 and forwards to the plain peer at
// addr, with a fresh self-signed certificate for 127.0.0.1; it returns the
// listener's address and a pool trusting the certificate.
func tlsFront(t *testing.T, addr string) (string, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test peer"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				up, err := net.Dial("tcp", addr)
				if err != nil {
					return
				}
				defer up.Close()
				go func() { _, _ = io.Copy(up, c) }()
				_, _ = io.Copy(c, up)
			}()
		}
	}()
	return ln.Addr().String(), pool
}

// TestConnTLS sends over amqps:// through a TLS front to the peer; a
// client that does not trust the certificate fails the handshake.
func TestConnTLS(t *testing.T) {
	p := amqpwiretest.New(t, nil)
	addr, pool := tlsFront(t, strings.TrimPrefix(p.URL, "amqp://"))
	url := "amqps://" + addr
	c, err := Dial(t.Context(), DialConfig{TLS: &tls.Config{RootCAs: pool}}, url)
	require.NoError(t, err)
	addrr, err := NewAddresser(StyleActiveMQ, "", "", nil)
	require.NoError(t, err)
	s := NewSender(c, addrr, SenderConfig{})
	defer s.Close()
	msgs := batchOf(bodies(3), one)
	res := make([]Result, len(msgs))
	require.NoError(t, s.Send(t.Context(), msgs, res))
	for i, r := range res {
		assert.NoError(t, r.Err, "message %d", i)
	}
	assert.Equal(t, bodies(3), p.Bodies())

	_, err = Dial(t.Context(), DialConfig{}, url)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "TLS handshake")
}
