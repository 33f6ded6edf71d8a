package session

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/oauth"
	"github.com/connect-solace/connect-solace/solacetest"
	"github.com/connect-solace/connect-solace/solacetest/faultproxy"
)

// oauthBroker is a broker trusting an OAuth provider whose token endpoint
// issues tokens that live ttl, reached over TLS (the client refuses OAuth
// on plain connections) through a fault proxy.
func oauthBroker(t *testing.T, ttl time.Duration) (*solacetest.Broker, *solacetest.OAuthServer, *faultproxy.Proxy) {
	t.Helper()
	tlsConf, trustDir := solacetest.SelfSignedTLS(t)
	oauthTrustDir = trustDir
	b := solacetest.NewTestBroker(t, solacetest.Config{TLS: tlsConf})
	idp := solacetest.NewOAuthServer(t, solacetest.OAuthServerConfig{
		Clients: map[string]string{"pipeline": "s3cret"}, TokenTTL: ttl})
	require.NoError(t, b.TrustOAuthServer("default", idp, "solace"))
	p, err := faultproxy.New(strings.TrimPrefix(b.SMFSURL(), "tcps://"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	return b, idp, p
}

// oauthTrustDir is the trust store of the last oauthBroker (tests of this
// file do not run in parallel).
var oauthTrustDir string

// oauthConfig is a config for an oauthBroker's proxy p.
func oauthConfig(p *faultproxy.Proxy) Config {
	c := DefaultConfig("tcps://" + p.Addr())
	c.TLS = TLSConfig{Enabled: true, TrustStorePath: oauthTrustDir, ValidateServerCert: true, ValidateDate: true}
	c.AuthScheme = AuthOAuth2
	return c
}

func grantConfig(idp *solacetest.OAuthServer, p *faultproxy.Proxy, secret string) Config {
	c := oauthConfig(p)
	c.OAuth2.Grant = &oauth.ClientCredentials{TokenURL: idp.TokenURL(), ClientID: "pipeline", ClientSecret: secret, Audience: "solace"}
	c.ReconnectAttempts, c.ReconnectInterval = -1, 100*time.Millisecond
	c.ConnectTimeout = 5 * time.Second
	if err := c.PrepareTokenSources(); err != nil {
		panic(err)
	}
	return c
}

// TestOAuthTokenRenewedAcrossReconnects: tokens live 3 s; the session
// outlives several of them and, after the first one expired and after the
// provider rotated its signing key, the client's own reconnect logs in
// with a renewed token, without a new Connect.
func TestOAuthTokenRenewedAcrossReconnects(t *testing.T) {
	b, idp, p := oauthBroker(t, 3*time.Second)
	c := grantConfig(idp, p, "s3cret")
	reconnected := make(chan struct{}, 10)
	interrupted := make(chan error, 1)
	s, err := Connect(t.Context(), c, nil, Events{
		OnReconnected: func() { reconnected <- struct{}{} },
		OnInterrupted: func(err error) { interrupted <- err },
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close(t.Context()) })
	clients, err := b.Clients("default")
	require.NoError(t, err)
	require.Len(t, clients, 1)
	assert.Equal(t, "pipeline", clients[0].Username)
	first := time.Now().Add(3 * time.Second)

	reconnect := func(what string) {
		t.Helper()
		p.Reset()
		select {
		case <-reconnected:
		case err := <-interrupted:
			t.Fatalf("%s: the session ended: %v", what, err)
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no reconnection", what)
		}
		require.True(t, s.Connected())
	}
	require.Eventually(t, func() bool { return time.Now().After(first) }, 5*time.Second, 50*time.Millisecond)
	require.GreaterOrEqual(t, idp.TokensIssued(), 2, "renewed before the first token expired")
	reconnect("after the first token expired")

	require.NoError(t, idp.RotateKey())
	issued := idp.TokensIssued()
	require.Eventually(t, func() bool { return idp.TokensIssued() > issued }, 5*time.Second, 20*time.Millisecond,
		"a token signed with the new key")
	require.Eventually(t, func() bool { // handed to the client
		cur, _ := c.OAuth2.Sources.Access.Current()
		return time.Since(cur.Fetched) > 100*time.Millisecond
	}, 5*time.Second, 20*time.Millisecond)
	reconnect("after the key rotation")
	assert.Equal(t, 1, b.ClientCount())
}

// TestOAuthRefusals: each refusal names its cause.
func TestOAuthRefusals(t *testing.T) {
	t.Run("wrong client secret", func(t *testing.T) {
		_, idp, p := oauthBroker(t, time.Minute)
		_, err := Connect(t.Context(), grantConfig(idp, p, "wrong-secret"), nil, Events{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), `HTTP 401 Unauthorized, OAuth error "invalid_client"`)
		assert.NotContains(t, err.Error(), "wrong-secret")
	})
	t.Run("token endpoint down", func(t *testing.T) {
		_, idp, p := oauthBroker(t, time.Minute)
		c := grantConfig(idp, p, "s3cret")
		require.NoError(t, idp.Close())
		_, err := Connect(t.Context(), c, nil, Events{})
		require.ErrorContains(t, err, "fetching an OAuth token from token endpoint "+idp.TokenURL())
		require.ErrorContains(t, err, "connection refused")
		start := time.Now()
		_, err = Connect(t.Context(), c, nil, Events{})
		require.ErrorContains(t, err, "next attempt in", "a connect right after waits out the backoff instead of asking again")
		assert.Less(t, time.Since(start), 100*time.Millisecond)
	})
	t.Run("expired token the client cannot renew", func(t *testing.T) {
		_, idp, p := oauthBroker(t, 2*time.Second)
		interrupted := make(chan error, 1)
		c := grantConfig(idp, p, "s3cret")
		c.ReconnectAttempts = 3
		s, err := Connect(t.Context(), c, nil, Events{OnInterrupted: func(err error) { interrupted <- err }})
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close(t.Context()) })
		expiry := time.Now().Add(2 * time.Second)
		require.NoError(t, idp.Close())
		require.Eventually(t, func() bool { return time.Now().After(expiry) }, 5*time.Second, 50*time.Millisecond)
		p.Reset()
		select {
		case err := <-interrupted:
			t.Log(err)
			assert.Contains(t, err.Error(), "the OAuth token expired at")
			assert.Contains(t, err.Error(), "could not be renewed (fetching an OAuth token from token endpoint")
		case <-time.After(10 * time.Second):
			t.Fatal("the session did not end")
		}
	})
	t.Run("expired static token", func(t *testing.T) {
		_, idp, p := oauthBroker(t, time.Minute)
		tok, err := idp.Token(map[string]any{"iss": idp.Issuer(), "aud": "solace", "sub": "pipeline",
			"exp": time.Now().Add(-time.Second).Unix()}, "at+jwt")
		require.NoError(t, err)
		c := oauthConfig(p)
		c.OAuth2.AccessToken = tok
		_, err = Connect(t.Context(), c, nil, Events{})
		require.ErrorContains(t, err, "the broker refused the OAuth login (a static token cannot be renewed")
		assert.NotContains(t, err.Error(), tok)
	})
}
