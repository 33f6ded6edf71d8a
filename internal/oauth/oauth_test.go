package oauth

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/solacetest"
)

func TestClientCredentialsFetchCacheRenew(t *testing.T) {
	idp := solacetest.NewOAuthServer(t, solacetest.OAuthServerConfig{
		Clients: map[string]string{"pipeline": "s3cret"}, TokenTTL: time.Minute})
	secretFile := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(secretFile, []byte("s3cret\n"), 0o600))
	s, err := New(Config{Grant: &ClientCredentials{TokenURL: idp.TokenURL(), ClientID: "pipeline",
		ClientSecretFile: secretFile, SecretFileField: "client_secret_file", Scopes: []string{"a", "b"}, Audience: "solace"}})
	require.NoError(t, err)
	now := time.Now()
	s.now = func() time.Time { return now }

	tok, err := s.Token(t.Context())
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now().Add(time.Minute), tok.Expiry, 2*time.Second, "exp of the JWT")
	again, err := s.Token(t.Context())
	require.NoError(t, err)
	assert.Equal(t, tok.Value, again.Value, "a fresh token is served from the cache")
	assert.Equal(t, 1, idp.TokensIssued())

	renew := RenewAt(tok)
	assert.WithinDuration(t, tok.Expiry.Add(-15*time.Second), renew, time.Second, "a quarter of a minute's lifetime ahead")
	now = renew
	tok2, err := s.Token(t.Context())
	require.NoError(t, err)
	assert.NotEqual(t, tok.Value, tok2.Value, "renewed at RenewAt")
	assert.Equal(t, 2, idp.TokensIssued())

	s.Invalidate(tok2)
	tok3, err := s.Token(t.Context())
	require.NoError(t, err)
	assert.NotEqual(t, tok2.Value, tok3.Value, "a refused token is not served again")
}

func TestFetchErrorsNameTheCauseAndBackOff(t *testing.T) {
	idp := solacetest.NewOAuthServer(t, solacetest.OAuthServerConfig{Clients: map[string]string{"pipeline": "right"}})
	var calls atomic.Int32
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(down.Close)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()

	for _, tc := range []struct {
		name, url string
		want      []string
		status    int
		code      string
	}{
		{"wrong secret", idp.TokenURL(), []string{"HTTP 401", `OAuth error "invalid_client"`, "check the client id and client secret"}, 401, "invalid_client"},
		{"endpoint unavailable", down.URL + "/token", []string{"HTTP 503"}, 503, ""},
		{"endpoint down", closed.URL + "/token", []string{"connection refused"}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(Config{Grant: &ClientCredentials{TokenURL: tc.url, ClientID: "pipeline", ClientSecret: "wrong"},
				RetryInitial: time.Hour})
			require.NoError(t, err)
			_, err = s.Token(t.Context())
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.NotContains(t, err.Error(), "wrong", "the secret stays out of errors")
			var fe *FetchError
			require.True(t, errors.As(err, &fe))
			assert.Equal(t, tc.status, fe.Status)
			assert.Equal(t, tc.code, fe.Code)

			before := calls.Load()
			_, err2 := s.Token(t.Context())
			require.Error(t, err2)
			assert.Contains(t, err2.Error(), "next attempt in", "asking again at once waits for the backoff")
			assert.Equal(t, before, calls.Load(), "no request during the backoff")
			assert.True(t, s.RetryAt().After(time.Now().Add(30*time.Minute)))
		})
	}
}

func TestFileSourceReadsAgain(t *testing.T) {
	idp := solacetest.NewOAuthServer(t, solacetest.OAuthServerConfig{})
	path := filepath.Join(t.TempDir(), "token")
	exp := time.Now().Add(time.Hour).Truncate(time.Second)
	first, err := idp.Token(map[string]any{"sub": "a", "exp": exp.Unix()}, "at+jwt")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, []byte(first+"\n"), 0o600))
	s, err := New(Config{File: path, FileField: "access_token_file"})
	require.NoError(t, err)
	tok, err := s.Token(t.Context())
	require.NoError(t, err)
	assert.Equal(t, first, tok.Value)
	assert.True(t, exp.Equal(tok.Expiry))

	require.NoError(t, os.WriteFile(path, []byte("opaque"), 0o600))
	tok, err = s.Renew(t.Context())
	require.NoError(t, err)
	assert.Equal(t, "opaque", tok.Value)
	assert.True(t, tok.Expiry.IsZero())
	assert.Equal(t, tok.Fetched.Add(30*time.Second), RenewAt(tok))

	require.NoError(t, os.Remove(path))
	_, err = s.Renew(t.Context())
	require.ErrorContains(t, err, `field access_token_file: cannot read secret file`)
}

func TestRenewAt(t *testing.T) {
	t0 := time.Unix(1000, 0)
	for _, tc := range []struct {
		life, ahead time.Duration
	}{
		{4 * time.Second, time.Second},
		{20 * time.Second, 5 * time.Second},
		{30 * time.Second, 7500 * time.Millisecond},
		{24 * time.Second, 6 * time.Second},
		{time.Hour, 5 * time.Minute},
	} {
		tok := Token{Fetched: t0, Expiry: t0.Add(tc.life)}
		assert.Equal(t, tok.Expiry.Add(-tc.ahead), RenewAt(tok), "lifetime %v", tc.life)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, "neither a token file nor a client_credentials grant"},
		{Config{File: "f", Grant: &ClientCredentials{}}, "both set"},
		{Config{Grant: &ClientCredentials{TokenURL: "ftp://x", ClientID: "a"}}, "not an http(s) URL"},
		{Config{Grant: &ClientCredentials{TokenURL: "https://x/token"}}, "needs a client id"},
	} {
		_, err := New(tc.cfg)
		assert.ErrorContains(t, err, tc.want)
	}
}
