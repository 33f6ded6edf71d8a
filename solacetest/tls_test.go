package solacetest

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
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging"
	"solace.dev/go/messaging/pkg/solace/config"
	"solace.dev/go/messaging/pkg/solace/resource"
)

// selfSigned makes a certificate for 127.0.0.1 and writes it, PEM-encoded,
// into a directory usable as the client's trust store.
func selfSigned(t *testing.T) (*tls.Config, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
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
	require.NoError(t, err)
	dir := t.TempDir()
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ca.pem"), certPEM, 0o600))
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	cert, err := tls.X509KeyPair(certPEM, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
	require.NoError(t, err)
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, dir
}

func TestTLS(t *testing.T) {
	tlsConf, trustDir := selfSigned(t)
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
