package solacetest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging"
	"solace.dev/go/messaging/pkg/solace/config"
)

// clientCertFiles makes a CA and a client certificate for cn signed by it,
// valid until notAfter; it returns the CA's PEM and the client's cert and
// key files.
func clientCertFiles(t *testing.T, cn string, notAfter time.Time) (caPEM, certFile, keyFile string) {
	caKey, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(10), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-2 * time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(11), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-2 * time.Hour), NotAfter: notAfter,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	require.NoError(t, err)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "client.pem"), filepath.Join(dir, "client.key")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600))
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})), certFile, keyFile
}

func TestClientCertificateLogin(t *testing.T) {
	serverCert, trustDir := rsaSelfSigned(t)
	b := NewTestBroker(t, Config{TLS: ServerTLSConfig(serverCert, tls.VersionTLS13)})
	s := newBrokerSEMP(t, b)
	caPEM, certFile, keyFile := clientCertFiles(t, "cert-user", time.Now().Add(time.Hour))
	certLogin := func(username string) error {
		props := clientProps(b.SMFSURL(), "", "")
		delete(props, config.AuthenticationPropertySchemeBasicUserName)
		delete(props, config.AuthenticationPropertySchemeBasicPassword)
		props[config.TransportLayerSecurityPropertyTrustStorePath] = trustDir
		props[config.TransportLayerSecurityPropertyCertValidateServername] = false
		props[config.AuthenticationPropertyScheme] = config.AuthenticationSchemeClientCertificate
		props[config.AuthenticationPropertySchemeSSLClientCertFile] = certFile
		props[config.AuthenticationPropertySchemeSSLClientPrivateKeyFile] = keyFile
		if username != "" {
			props[config.AuthenticationPropertySchemeClientCertUserName] = username
		}
		svc, err := messaging.NewMessagingServiceBuilder().FromConfigurationProvider(props).Build()
		require.NoError(t, err)
		if err := svc.Connect(); err != nil {
			return err
		}
		defer func() { _ = svc.Disconnect() }()
		ci, err := b.Client("default", svc.GetApplicationID())
		require.NoError(t, err)
		if username == "" {
			assert.Equal(t, "cert-user", ci.Username, "the certificate's common name")
		} else {
			assert.Equal(t, username, ci.Username)
		}
		return nil
	}

	require.Error(t, certLogin(""), "client certificates are off by default")
	status, _ := s.do("PATCH", "config/msgVpns/default", `{"authenticationClientCertEnabled":true}`)
	require.Equal(t, 200, status)
	require.Error(t, certLogin(""), "no authority trusts the certificate yet")

	ca, _ := json.Marshal(caPEM)
	status, body := s.do("POST", "config/clientCertAuthorities", `{"certAuthorityName":"ca1","certContent":`+string(ca)+`,"revocationCheckEnabled":false,"crlDayList":"daily","crlTimeList":"3:00","crlUrl":""}`)
	require.Equal(t, 200, status, body)
	require.NoError(t, certLogin(""))

	status, _ = s.do("PATCH", "config/msgVpns/default", `{"authenticationClientCertAllowApiProvidedUsernameEnabled":true}`)
	require.Equal(t, 200, status)
	require.NoError(t, certLogin("chosen"))

	status, _ = s.do("DELETE", "config/clientCertAuthorities/ca1", "")
	require.Equal(t, 200, status)
	require.Error(t, certLogin(""))
	status, body = s.do("DELETE", "config/clientCertAuthorities/ca1", "")
	assert.Equal(t, "NOT_FOUND", errStatusOf(body), status)
}

func TestClientUsernamesLogIn(t *testing.T) {
	b := NewTestBroker(t, Config{})
	s := newBrokerSEMP(t, b)
	status, body := s.do("POST", "config/msgVpns/default/clientUsernames",
		`{"clientUsername":"app","password":"pw","enabled":true,"clientProfileName":"default","aclProfileName":"default","msgVpnName":"default"}`)
	require.Equal(t, 200, status, body)
	svc, err := messaging.NewMessagingServiceBuilder().FromConfigurationProvider(clientProps(b.SMFURL(), "app", "pw")).Build()
	require.NoError(t, err)
	require.NoError(t, svc.Connect())
	require.NoError(t, svc.Disconnect())
	status, _ = s.do("DELETE", "config/msgVpns/default/clientUsernames/app", "")
	require.Equal(t, 200, status)
	svc, err = messaging.NewMessagingServiceBuilder().FromConfigurationProvider(clientProps(b.SMFURL(), "app", "pw")).Build()
	require.NoError(t, err)
	require.Error(t, svc.Connect())
}
