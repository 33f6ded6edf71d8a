package solacetest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging"
	"solace.dev/go/messaging/pkg/solace/config"
	"solace.dev/go/messaging/pkg/solace/resource"
)

func TestTLS(t *testing.T) {
	tlsConf, trustDir := SelfSignedTLS(t)
	b := NewTestBroker(t, Config{TLS: tlsConf})
	require.NoError(t, b.CreateQueue("default", QueueConfig{Name: "q1", Subscriptions: []string{"secure/>"}}))
	require.Regexp(t, `^tcps://127\.0\.0\.1:\d+$`, b.SMFSURL())
	svc := connect(t, b, config.ServicePropertyMap{
		config.TransportLayerPropertyHost:                           b.SMFSURL(),
		config.TransportLayerSecurityPropertyTrustStorePath:         trustDir,
		config.TransportLayerSecurityPropertyCertValidated:          true,
		config.TransportLayerSecurityPropertyCertValidateServername: false,
	})
	pub := startPublisher(t, svc)
	publish(t, svc, pub, "secure/1", "over tls")
	rcv := startReceiver(t, svc, resource.QueueDurableExclusive("q1"), nil)
	m := receive(t, rcv)
	require.Equal(t, "over tls", payloadOf(t, m))
	require.NoError(t, rcv.Ack(m))

	// A client that does not trust the certificate is refused.
	props := clientProps(b.SMFSURL(), "default", "default")
	props[config.TransportLayerSecurityPropertyTrustStorePath] = t.TempDir()
	props[config.TransportLayerSecurityPropertyCertValidated] = true
	untrusting, err := messaging.NewMessagingServiceBuilder().FromConfigurationProvider(props).Build()
	require.NoError(t, err)
	require.Error(t, untrusting.Connect())
}

// A TLS client with downgrade on logs in over TLS and goes on in plain text
// when the VPN allows it; otherwise its login is refused.
func TestTLSDowngradeToPlainText(t *testing.T) {
	tlsConf, trustDir := SelfSignedTLS(t)
	b := NewTestBroker(t, Config{TLS: tlsConf})
	require.NoError(t, b.CreateQueue("default", QueueConfig{Name: "dg", Subscriptions: []string{"dg/>"}}))
	props := clientProps(b.SMFSURL(), "default", "default")
	props[config.TransportLayerSecurityPropertyTrustStorePath] = trustDir
	props[config.TransportLayerSecurityPropertyCertValidateServername] = false
	refused, err := messaging.NewMessagingServiceBuilder().FromConfigurationProvider(props).
		WithTransportSecurityStrategy(config.NewTransportSecurityStrategy().Downgradable()).Build()
	require.NoError(t, err)
	require.ErrorContains(t, refused.Connect(), downgradeRefusedText)

	require.NoError(t, b.UpdateVPN("default", func(v *VPNConfig) { v.TLSAllowDowngradeToPlainText = true }))
	svc, err := messaging.NewMessagingServiceBuilder().FromConfigurationProvider(props).
		WithTransportSecurityStrategy(config.NewTransportSecurityStrategy().Downgradable()).Build()
	require.NoError(t, err)
	require.NoError(t, svc.Connect())
	t.Cleanup(func() { _ = svc.Disconnect() })
	info, err := b.Client("default", svc.GetApplicationID())
	require.NoError(t, err)
	assert.True(t, info.TLSDowngradedToPlainText)
	// The session works in plain text: a persistent round trip.
	pub := startPublisher(t, svc)
	publish(t, svc, pub, "dg/1", "after downgrade")
	rcv := startReceiver(t, svc, resource.QueueDurableExclusive("dg"), nil)
	m := receive(t, rcv)
	require.Equal(t, "after downgrade", payloadOf(t, m))
	require.NoError(t, rcv.Ack(m))

	// Without downgrade the same client stays on TLS.
	plain := connect(t, b, config.ServicePropertyMap{
		config.TransportLayerPropertyHost:                           b.SMFSURL(),
		config.TransportLayerSecurityPropertyTrustStorePath:         trustDir,
		config.TransportLayerSecurityPropertyCertValidateServername: false,
	})
	info, err = b.Client("default", plain.GetApplicationID())
	require.NoError(t, err)
	assert.False(t, info.TLSDowngradedToPlainText)
}

func TestLoadTLSCertificate(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "x"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	//lint:ignore SA1019 the format under test is legacy PEM encryption
	encBlock, err := x509.EncryptPEMBlock(rand.Reader, "EC PRIVATE KEY", keyDER, []byte("s3cret"), x509.PEMCipherAES256) //nolint:staticcheck // see above
	require.NoError(t, err)
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	dir := t.TempDir()
	write := func(name string, parts ...[]byte) string {
		var all []byte
		for _, p := range parts {
			all = append(all, p...)
		}
		f := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(f, all, 0o600))
		return f
	}
	combined := write("combined.pem", pem.EncodeToMemory(encBlock), certPEM) // key first, as PubSub+'s files have it
	plainKey := write("key.pem", pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
	certOnly := write("cert.pem", certPEM)

	cert, err := LoadTLSCertificate(combined, "", "s3cret")
	require.NoError(t, err)
	assert.Len(t, cert.Certificate, 1)
	_, err = LoadTLSCertificate(certOnly, plainKey, "")
	require.NoError(t, err)

	_, err = LoadTLSCertificate(combined, "", "")
	assert.ErrorContains(t, err, "encrypted: give its passphrase")
	_, err = LoadTLSCertificate(combined, "", "wrong")
	assert.ErrorContains(t, err, "decrypting the TLS key")
	_, err = LoadTLSCertificate(certOnly, "", "")
	assert.ErrorContains(t, err, "no private key")
	_, err = LoadTLSCertificate(filepath.Join(dir, "missing.pem"), "", "")
	assert.ErrorContains(t, err, "reading the TLS certificate")
}

// rsaSelfSigned is a self-signed RSA certificate for 127.0.0.1 and its
// trust directory: the Solace client offers RSA cipher suites only.
func rsaSelfSigned(t *testing.T) (tls.Certificate, string) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "solacetest"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	dir := t.TempDir()
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ca.pem"), certPEM, 0o600))
	cert, err := tls.X509KeyPair(certPEM, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	require.NoError(t, err)
	return cert, dir
}

func TestTLSSessionReported(t *testing.T) {
	cert, trustDir := rsaSelfSigned(t)
	b := NewTestBroker(t, Config{TLS: ServerTLSConfig(cert, tls.VersionTLS12)})
	svc := connect(t, b, config.ServicePropertyMap{
		config.TransportLayerPropertyHost:                           b.SMFSURL(),
		config.TransportLayerSecurityPropertyTrustStorePath:         trustDir,
		config.TransportLayerSecurityPropertyCertValidateServername: false,
		config.TransportLayerSecurityPropertyCipherSuites:           "AES128-SHA",
	})
	ci, err := b.Client("default", svc.GetApplicationID())
	require.NoError(t, err)
	assert.Equal(t, "TLSv1.2", ci.TLSVersion)
	assert.Equal(t, "AES128-SHA", ci.TLSCipher, "RSA key exchange is offered, and named as OpenSSL does")

	plain := connect(t, b, nil)
	ci, err = b.Client("default", plain.GetApplicationID())
	require.NoError(t, err)
	assert.Empty(t, ci.TLSVersion)
}
