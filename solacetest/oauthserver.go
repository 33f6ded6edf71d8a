package solacetest

// This file is a minimal OAuth 2.0 / OpenID Connect provider for tests: the
// endpoints a PubSub+ OAuth profile points at (endpointJwks,
// endpointUserinfo), and, with a key it generated itself, the minting of
// signed tokens to log in with.

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// OAuthServerConfig configures an OAuthServer.
type OAuthServerConfig struct {
	Addr string      // "" means "127.0.0.1:0"
	TLS  *tls.Config // non-nil: serve https
	// JWKS is the JSON Web Key Set served at /jwks. Nil means a key set
	// holding the public half of an RSA key the server generates, which
	// Token then signs with.
	JWKS []byte
	// Userinfo is the JSON served at /userinfo; nil means {}.
	Userinfo []byte
	// Clients are the client ids and secrets the token endpoint (/token,
	// oauthtoken.go) serves the client_credentials grant to; TokenTTL is
	// its tokens' lifetime (0 means an hour) and Issuer their iss claim
	// ("" means the server's URL).
	Clients  map[string]string
	TokenTTL time.Duration
	Issuer   string
}

// OAuthServer serves an OAuth provider's JWKS (/jwks), userinfo
// (/userinfo) and token (/token) endpoints.
type OAuthServer struct {
	ln     net.Listener
	srv    *http.Server
	scheme string
	done   chan struct{}

	mu    sync.Mutex
	key   *rsa.PrivateKey // nil unless the server generated its key
	keyID string
	keys  int    // keys generated so far, for key ids
	jwks  []byte // the key set served

	tokens *tokenEndpoint
}

// StartOAuthServer starts an OAuthServer.
func StartOAuthServer(cfg OAuthServerConfig) (*OAuthServer, error) {
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	s := &OAuthServer{scheme: "http", done: make(chan struct{}), tokens: newTokenEndpoint(cfg)}
	if s.jwks = cfg.JWKS; s.jwks == nil {
		if err := s.RotateKey(); err != nil {
			return nil, err
		}
	} else if err := json.Unmarshal(s.jwks, &jose.JSONWebKeySet{}); err != nil {
		return nil, fmt.Errorf("OAuth server JWKS: not a JSON Web Key Set: %w", err)
	}
	userinfo := cfg.Userinfo
	if userinfo == nil {
		userinfo = []byte("{}")
	} else if !json.Valid(userinfo) {
		return nil, errors.New("OAuth server userinfo: not JSON")
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("listening for the OAuth server on %s: %w", cfg.Addr, err)
	}
	if cfg.TLS != nil {
		ln, s.scheme = tls.NewListener(ln, cfg.TLS), "https"
	}
	mux := http.NewServeMux()
	serve := func(body func() []byte) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(body())
		}
	}
	mux.Handle("GET /jwks", serve(func() []byte {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.jwks
	}))
	mux.Handle("GET /userinfo", serve(func() []byte { return userinfo }))
	mux.HandleFunc("POST /token", s.serveToken)
	mux.HandleFunc("POST /rotate-key", s.serveRotateKey)
	s.ln, s.srv = ln, &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: log.New(io.Discard, "", 0)} // TLS handshake refusals are the tests' business
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

// NewOAuthServer starts an OAuthServer for the test and closes it at its
// end.
func NewOAuthServer(t TB, cfg OAuthServerConfig) *OAuthServer {
	t.Helper()
	return startForTest(t, "OAuth server", func() (*OAuthServer, error) { return StartOAuthServer(cfg) })
}

// URL is the server's base URL.
func (s *OAuthServer) URL() string { return s.scheme + "://" + s.ln.Addr().String() }

// JWKSURL is the URL to set as an OAuth profile's endpointJwks.
func (s *OAuthServer) JWKSURL() string { return s.URL() + "/jwks" }

// UserinfoURL is the URL to set as an OAuth profile's endpointUserinfo.
func (s *OAuthServer) UserinfoURL() string { return s.URL() + "/userinfo" }

// RotateKey replaces the server's signing key by a new RSA key with a new
// key id; the key set then holds only the new key, as with a provider that
// rotated at once. A server given a JWKS starts generating keys from here.
func (s *OAuthServer) RotateKey() error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("generating the OAuth server's key: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys++
	kid := fmt.Sprintf("solacetest-%d", s.keys)
	jwks, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: kid,
		Algorithm: string(jose.RS256), Use: "sig"}}})
	if err != nil {
		return err
	}
	s.key, s.keyID, s.jwks = key, kid, jwks
	return nil
}

// Token signs claims (iss, sub, aud, exp, ...) as a JWT with the server's
// generated key (RS256), with JOSE type typ ("JWT" for ID tokens, "at+jwt"
// for access tokens by RFC 9068). A server given a JWKS holds no key and
// fails.
func (s *OAuthServer) Token(claims map[string]any, typ string) (string, error) {
	s.mu.Lock()
	key, kid := s.key, s.keyID
	s.mu.Unlock()
	if key == nil {
		return "", errors.New("the OAuth server serves a given JWKS and holds no signing key")
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: key, KeyID: kid}},
		(&jose.SignerOptions{}).WithType(jose.ContentType(typ)))
	if err != nil {
		return "", fmt.Errorf("OAuth server signer: %w", err)
	}
	return jwt.Signed(signer).Claims(claims).Serialize()
}

// Close stops the server.
func (s *OAuthServer) Close() error {
	err := s.srv.Close()
	<-s.done
	return err
}
