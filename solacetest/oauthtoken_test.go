package solacetest

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTokenEndpoint: the client_credentials grant for registered clients,
// RFC 6749 errors otherwise, and key rotation over HTTP.
func TestTokenEndpoint(t *testing.T) {
	idp := NewOAuthServer(t, OAuthServerConfig{Clients: map[string]string{"app": "pw"}, TokenTTL: 5 * time.Second})
	post := func(t *testing.T, user, pass string, form url.Values) (int, map[string]any) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, idp.TokenURL(), strings.NewReader(form.Encode()))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer func() { _ = resp.Body.Close() }()
		var body map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		return resp.StatusCode, body
	}
	grant := url.Values{"grant_type": {"client_credentials"}, "audience": {"solace"}, "scope": {"a b"}}
	for _, tc := range []struct {
		name, user, pass string
		form             url.Values
		status           int
		errCode          string
	}{
		{"basic auth", "app", "pw", grant, 200, ""},
		{"form auth", "", "", url.Values{"grant_type": {"client_credentials"}, "client_id": {"app"}, "client_secret": {"pw"}}, 200, ""},
		{"wrong secret", "app", "nope", grant, 401, "invalid_client"},
		{"unknown client", "who", "pw", grant, 401, "invalid_client"},
		{"other grant", "app", "pw", url.Values{"grant_type": {"password"}}, 400, "unsupported_grant_type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := post(t, tc.user, tc.pass, tc.form)
			require.Equal(t, tc.status, status, body)
			if tc.errCode != "" {
				assert.Equal(t, tc.errCode, body["error"])
				return
			}
			assert.Equal(t, "Bearer", body["token_type"])
			assert.EqualValues(t, 5, body["expires_in"])
		})
	}

	_, body := post(t, "app", "pw", grant)
	oldKid := kidOf(t, body["access_token"].(string))
	resp, err := http.Post(idp.URL()+"/rotate-key", "", nil)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	_, body = post(t, "app", "pw", grant)
	assert.NotEqual(t, oldKid, kidOf(t, body["access_token"].(string)), "signed with the new key")
	assert.Equal(t, 4, idp.TokensIssued(), "the two grants above and the two here")
}

func kidOf(t *testing.T, tok string) string {
	t.Helper()
	parts := strings.Split(tok, ".")
	require.Len(t, parts, 3)
	var h struct {
		Kid string `json:"kid"`
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[0])
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &h))
	return h.Kid
}

// TestSEMPBearer: with TrustOAuthServer, SEMP takes the provider's access
// tokens as Bearer tokens and refuses expired and foreign ones.
func TestSEMPBearer(t *testing.T) {
	b := NewTestBroker(t, Config{})
	idp := NewOAuthServer(t, OAuthServerConfig{})
	require.NoError(t, b.TrustOAuthServer("default", idp, "solace"))
	other := NewOAuthServer(t, OAuthServerConfig{})
	claims := func(exp time.Duration) map[string]any {
		return map[string]any{"iss": idp.Issuer(), "aud": "solace", "sub": "ops", "exp": time.Now().Add(exp).Unix()}
	}
	good, err := idp.Token(claims(time.Minute), "at+jwt")
	require.NoError(t, err)
	expired, err := idp.Token(claims(-time.Second), "at+jwt")
	require.NoError(t, err)
	foreign, err := other.Token(claims(time.Minute), "at+jwt")
	require.NoError(t, err)
	for _, tc := range []struct {
		name, token string
		status      int
	}{{"valid", good, 200}, {"expired", expired, 401}, {"signed by another key", foreign, 401}, {"not a JWT", "abc", 401}} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, b.SEMPURL()+"/SEMP/v2/config/msgVpns/default", nil)
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer "+tc.token)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			_ = resp.Body.Close()
			assert.Equal(t, tc.status, resp.StatusCode)
			assert.Empty(t, resp.Cookies(), "Bearer requests get no session cookie")
		})
	}
}
