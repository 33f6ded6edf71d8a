package session

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/solacetest"
)

// TestConnectOAuth2 logs in with auth.scheme oauth2 against a broker that
// checks the ID token against an OAuth profile: the broker takes the token's
// subject as the client username, and refuses a token it cannot verify.
func TestConnectOAuth2(t *testing.T) {
	tlsConf, trustDir := solacetest.SelfSignedTLS(t)
	b := solacetest.NewTestBroker(t, solacetest.Config{TLS: tlsConf})
	idp := solacetest.NewOAuthServer(t, solacetest.OAuthServerConfig{TLS: tlsConf})
	caPEM, err := os.ReadFile(filepath.Join(trustDir, "ca.pem"))
	require.NoError(t, err)
	require.NoError(t, b.AddDomainCertAuthority("idp", string(caPEM)))
	require.NoError(t, b.UpdateVPN("default", func(v *solacetest.VPNConfig) { v.OAuthEnabled = true }))
	p := solacetest.NewOAuthProfile("idp")
	p.Enabled, p.Issuer, p.ClientID, p.EndpointJWKS = true, "https://idp.test", "pipeline", idp.JWKSURL()
	require.NoError(t, b.CreateOAuthProfile("default", p))

	cfg := func(idToken string) Config {
		c := testConfig(b)
		c.URLs = []string{b.SMFSURL()}
		c.Username, c.Password = "", ""
		c.AuthScheme = AuthOAuth2
		c.OAuth2 = OAuth2Config{IDToken: idToken}
		c.TLS = TLSConfig{Enabled: true, TrustStorePath: trustDir, ValidateServerCert: true, ValidateDate: true}
		return c
	}
	tok, err := idp.Token(map[string]any{"iss": "https://idp.test", "aud": "pipeline", "sub": "orders-pipeline",
		"exp": time.Now().Add(time.Hour).Unix()}, "JWT")
	require.NoError(t, err)
	s, err := Connect(t.Context(), cfg(tok), nil, Events{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close(t.Context()) })
	clients, err := b.Clients("default")
	require.NoError(t, err)
	require.Len(t, clients, 1)
	assert.Equal(t, "orders-pipeline", clients[0].Username)

	expired, err := idp.Token(map[string]any{"iss": "https://idp.test", "aud": "pipeline", "sub": "orders-pipeline",
		"exp": time.Now().Add(-time.Hour).Unix()}, "JWT")
	require.NoError(t, err)
	_, err = Connect(t.Context(), cfg(expired), nil, Events{})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), expired, "the token stays out of the error")
}
