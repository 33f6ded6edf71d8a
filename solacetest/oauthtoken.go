package solacetest

// This file is the test OAuth provider's token endpoint (/token): the
// client_credentials grant of RFC 6749 §4.4 for the clients registered in
// OAuthServerConfig.Clients, answering with access tokens (RFC 9068 JWTs,
// typ at+jwt) signed with the server's current key that live
// OAuthServerConfig.TokenTTL. Short lifetimes and RotateKey let tests run a
// client through token expiry and key rotation.

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"
)

// tokenEndpoint is the /token state of an OAuthServer.
type tokenEndpoint struct {
	mu      sync.Mutex
	clients map[string]string // client id -> secret
	ttl     time.Duration
	issuer  string
	issued  int
}

func newTokenEndpoint(cfg OAuthServerConfig) *tokenEndpoint {
	e := &tokenEndpoint{clients: map[string]string{}, ttl: cfg.TokenTTL, issuer: cfg.Issuer}
	for id, secret := range cfg.Clients {
		e.clients[id] = secret
	}
	if e.ttl <= 0 {
		e.ttl = time.Hour
	}
	return e
}

// TokenURL is the client_credentials token endpoint.
func (s *OAuthServer) TokenURL() string { return s.URL() + "/token" }

// Issuer is the iss claim of the tokens /token issues: the configured
// Issuer, or else the server's URL.
func (s *OAuthServer) Issuer() string {
	s.tokens.mu.Lock()
	defer s.tokens.mu.Unlock()
	if s.tokens.issuer != "" {
		return s.tokens.issuer
	}
	return s.URL()
}

// SetClient registers a client for the client_credentials grant, or
// replaces its secret.
func (s *OAuthServer) SetClient(id, secret string) {
	s.tokens.mu.Lock()
	defer s.tokens.mu.Unlock()
	s.tokens.clients[id] = secret
}

// SetTokenTTL sets the lifetime of the tokens issued from now on.
func (s *OAuthServer) SetTokenTTL(d time.Duration) {
	s.tokens.mu.Lock()
	defer s.tokens.mu.Unlock()
	s.tokens.ttl = d
}

// TokensIssued counts the tokens /token has issued.
func (s *OAuthServer) TokensIssued() int {
	s.tokens.mu.Lock()
	defer s.tokens.mu.Unlock()
	return s.tokens.issued
}

// serveRotateKey rotates the signing key (RotateKey) for a devbroker user
// testing key rotation from outside the process. A server given a JWKS
// refuses: it would start signing with a key its clients never saw.
func (s *OAuthServer) serveRotateKey(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	own := s.key != nil
	s.mu.Unlock()
	if !own {
		http.Error(w, "this provider serves a given key set and signs nothing", http.StatusConflict)
		return
	}
	if err := s.RotateKey(); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// serveToken answers a token request. Client authentication is HTTP basic
// (client_secret_basic) or the client_id and client_secret form
// parameters (client_secret_post); errors are RFC 6749 §5.2's.
func (s *OAuthServer) serveToken(w http.ResponseWriter, r *http.Request) {
	fail := func(status int, code, desc string) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Basic realm="solacetest"`)
		}
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
	}
	if err := r.ParseForm(); err != nil {
		fail(http.StatusBadRequest, "invalid_request", "the body is not a form")
		return
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	e := s.tokens
	e.mu.Lock()
	want, known := e.clients[id]
	ttl := e.ttl
	e.mu.Unlock()
	if !known || subtle.ConstantTimeCompare([]byte(secret), []byte(want)) != 1 {
		fail(http.StatusUnauthorized, "invalid_client", "client authentication failed")
		return
	}
	if gt := r.PostForm.Get("grant_type"); gt != "client_credentials" {
		fail(http.StatusBadRequest, "unsupported_grant_type", "only client_credentials is served")
		return
	}
	now := time.Now()
	claims := map[string]any{"iss": s.Issuer(), "sub": id, "client_id": id, "iat": now.Unix(),
		"exp": now.Add(ttl).Unix(), "jti": rand.Text()}
	if aud := r.PostForm.Get("audience"); aud != "" {
		claims["aud"] = aud
	}
	if scope := strings.TrimSpace(r.PostForm.Get("scope")); scope != "" {
		claims["scope"] = scope
	}
	tok, err := s.Token(claims, "at+jwt")
	if err != nil {
		fail(http.StatusInternalServerError, "server_error", err.Error())
		return
	}
	e.mu.Lock()
	e.issued++
	e.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer",
		"expires_in": int64(ttl.Round(time.Second) / time.Second)})
}

// TrustOAuthServer sets vpn up to log clients in with the access tokens
// idp's token endpoint issues: OAuth enabled, and a resource-server
// profile named "idp" for idp's issuer that requires audience (when not
// empty) and takes the client username from "sub". It also lets SEMP
// accept those tokens as Bearer tokens, and allows no clock skew, so that a
// token is refused the moment it expires.
func (b *Broker) TrustOAuthServer(vpn string, idp *OAuthServer, audience string) error {
	if err := b.UpdateVPN(vpn, func(v *VPNConfig) { v.OAuthEnabled = true }); err != nil {
		return err
	}
	p := NewOAuthProfile("idp")
	p.Enabled, p.Role, p.Issuer, p.EndpointJWKS = true, OAuthRoleResourceServer, idp.Issuer(), idp.JWKSURL()
	p.ResourceServerRequiredIssuer, p.ResourceServerRequiredAudience = idp.Issuer(), audience
	p.ResourceServerValidateAudience, p.ResourceServerValidateScope = audience != "", false
	if err := b.CreateOAuthProfile(vpn, p); err != nil {
		return err
	}
	b.SetOAuthClockSkew(0)
	return b.SetSEMPOAuthProfile(&p)
}
