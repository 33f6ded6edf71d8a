// Package oauth supplies the OAuth 2.0 bearer tokens a Solace login and a
// SEMP request present: read from a file that something else keeps fresh
// (a sidecar, a Kubernetes projected token), or fetched from a token
// endpoint with the client_credentials grant (RFC 6749 §4.4). A Source
// caches its token, says when it should be renewed (ahead of its expiry),
// and backs off after failures so that callers that ask again at once
// never make a busy loop. Errors name the cause (the endpoint's HTTP status
// and OAuth error code, a missing file, an expired token) and never a
// secret or a token.
package oauth

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/connect-solace/connect-solace/internal/secretfile"
)

// Token is a bearer token and the time it expires; a zero Expiry means the
// token's lifetime is unknown (an opaque token read from a file).
type Token struct {
	Value   string
	Expiry  time.Time
	Fetched time.Time // when the Source got it
}

// Expired reports whether t is past its expiry at now.
func (t Token) Expired(now time.Time) bool { return !t.Expiry.IsZero() && !now.Before(t.Expiry) }

// String keeps a token out of logs printed with %v.
func (t Token) String() string {
	if t.Expiry.IsZero() {
		return "token(expiry unknown)"
	}
	return "token(expires " + t.Expiry.UTC().Format(time.RFC3339) + ")"
}

// GoString keeps %#v from printing the token too.
func (t Token) GoString() string { return t.String() }

// ClientCredentials configures the client_credentials grant.
type ClientCredentials struct {
	TokenURL     string
	ClientID     string
	ClientSecret string
	// ClientSecretFile, when set, names the file ClientSecret is read
	// from on every fetch, so a rotated secret is used at once; the field
	// name is SecretFileField (for errors).
	ClientSecretFile string
	SecretFileField  string
	Scopes           []string
	// Audience is sent as the audience parameter (Auth0, Okta and Keycloak
	// take it to pick the resource server); empty sends none.
	Audience string
	// TLS configures https to the endpoint; nil uses Go's defaults.
	TLS *tls.Config
	// Timeout bounds one token request; 0 means 10 s.
	Timeout time.Duration
}

// Config picks a Source's origin: File (a path, read again on every
// refresh) or Grant (a token endpoint).
type Config struct {
	File      string
	FileField string // the config field naming File, for errors
	Grant     *ClientCredentials
	// RetryInitial and RetryMax bound the backoff after failed fetches;
	// zero means 1 s and 30 s.
	RetryInitial, RetryMax time.Duration
}

// Source hands out a cached token and renews it. It is safe for
// concurrent use.
type Source struct {
	desc  string // what the token comes from, for errors and logs
	fetch func(ctx context.Context) (Token, error)

	mu      sync.Mutex
	fetchMu sync.Mutex // one fetch at a time; callers behind it take its result
	cur     Token
	stale   bool // cur was refused: fetch anew on the next Token
	lastErr error
	retryAt time.Time // no fetch before this after a failure
	policy  *backoff.ExponentialBackOff
	now     func() time.Time
}

// New returns a Source for cfg. It fetches nothing yet.
func New(cfg Config) (*Source, error) {
	s := &Source{now: time.Now}
	initial, maxWait := cfg.RetryInitial, cfg.RetryMax
	if initial <= 0 {
		initial = time.Second
	}
	if maxWait <= 0 {
		maxWait = 30 * time.Second
	}
	s.policy = backoff.NewExponentialBackOff(backoff.WithInitialInterval(initial), backoff.WithMaxInterval(maxWait),
		backoff.WithMultiplier(2), backoff.WithRandomizationFactor(0.2), backoff.WithMaxElapsedTime(0))
	switch {
	case cfg.File != "" && cfg.Grant != nil:
		return nil, errors.New("oauth: a token file and a client_credentials grant are both set; keep one")
	case cfg.File != "":
		s.desc = fmt.Sprintf("token file %q", cfg.File)
		field := cfg.FileField
		s.fetch = func(context.Context) (Token, error) {
			v, err := secretfile.Read(field, cfg.File)
			if err != nil {
				return Token{}, err
			}
			return Token{Value: v, Expiry: JWTExpiry(v)}, nil
		}
	case cfg.Grant != nil:
		g := *cfg.Grant
		u, err := url.Parse(g.TokenURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("oauth: token URL %q is not an http(s) URL", g.TokenURL)
		}
		if g.ClientID == "" {
			return nil, errors.New("oauth: the client_credentials grant needs a client id")
		}
		s.desc = "token endpoint " + u.Redacted()
		s.fetch = g.fetcher(s.desc)
	default:
		return nil, errors.New("oauth: neither a token file nor a client_credentials grant is set")
	}
	return s, nil
}

// Describe names where the tokens come from, e.g. `token endpoint
// https://idp/token`; it holds no secret.
func (s *Source) Describe() string { return s.desc }

// Token returns the cached token while it is fresh (see RenewAt) and
// otherwise fetches a new one. After a failed fetch it fails at once with
// the same error until the backoff has passed, then tries again.
func (s *Source) Token(ctx context.Context) (Token, error) {
	s.mu.Lock()
	cur, stale := s.cur, s.stale
	s.mu.Unlock()
	if cur.Value != "" && !stale && s.now().Before(RenewAt(cur)) {
		return cur, nil
	}
	return s.Renew(ctx)
}

// Renew fetches a new token regardless of the cached one's age (the client
// is reconnecting, the broker may have refused it), unless a failure's
// backoff is still running: then it returns that failure. A caller that
// waited for a fetch in progress takes its result.
func (s *Source) Renew(ctx context.Context) (Token, error) {
	s.mu.Lock()
	before := s.cur
	s.mu.Unlock()
	s.fetchMu.Lock()
	defer s.fetchMu.Unlock()
	s.mu.Lock()
	if s.cur != before && s.cur.Value != "" { // fetched while we waited
		cur := s.cur
		s.mu.Unlock()
		return cur, nil
	}
	if wait := s.retryAt.Sub(s.now()); wait > 0 && s.lastErr != nil {
		err := s.lastErr
		s.mu.Unlock()
		return s.cur, fmt.Errorf("%w (next attempt in %v)", err, wait.Round(time.Millisecond))
	}
	s.mu.Unlock()

	tok, err := s.fetch(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.lastErr = err
		s.retryAt = s.now().Add(s.policy.NextBackOff())
		return s.cur, err
	}
	tok.Fetched = s.now()
	s.cur, s.stale, s.lastErr, s.retryAt = tok, false, nil, time.Time{}
	s.policy.Reset()
	return tok, nil
}

// Current returns the cached token (possibly expired or empty) and the last
// fetch error, without fetching.
func (s *Source) Current() (Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur, s.lastErr
}

// Invalidate marks tok refused (by the broker), so that the next Token
// fetches a new one, unless the cached token has changed since.
func (s *Source) Invalidate(tok Token) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur.Value == tok.Value {
		s.stale = true
	}
}

// RetryAt is when a failed fetch may be tried again (zero after success).
func (s *Source) RetryAt() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.retryAt
}

// unknownLifetimeRecheck is how often a token of unknown lifetime is read
// again (a file rewritten in place carries no expiry to plan by).
const unknownLifetimeRecheck = 30 * time.Second

// RenewAt is when t should be replaced: three quarters into its lifetime,
// but at least 5 s and at most 5 min before expiry for tokens that live
// longer than 20 s, so that a slow endpoint or a reconnect has room; for a
// token of unknown lifetime, 30 s after it was fetched.
func RenewAt(t Token) time.Time {
	if t.Expiry.IsZero() {
		return t.Fetched.Add(unknownLifetimeRecheck)
	}
	life := t.Expiry.Sub(t.Fetched)
	if life <= 0 || t.Fetched.IsZero() {
		return t.Expiry
	}
	ahead := life / 4
	if life > 20*time.Second {
		ahead = min(max(ahead, 5*time.Second), 5*time.Minute)
	}
	return t.Expiry.Add(-ahead)
}

// JWTExpiry returns the exp claim of a JWT without verifying it (the
// broker verifies; the client only plans its refresh by it), or zero for a
// token that is not a JWT or has no exp.
func JWTExpiry(tok string) time.Time {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return time.Time{}
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return time.Time{}
	}
	var claims struct {
		Exp json.Number `json:"exp"`
	}
	if json.Unmarshal(payload, &claims) != nil || claims.Exp == "" {
		return time.Time{}
	}
	f, err := claims.Exp.Float64()
	if err != nil || f <= 0 {
		return time.Time{}
	}
	sec := int64(f)
	return time.Unix(sec, int64((f-float64(sec))*1e9))
}

// fetcher returns the fetch of the client_credentials grant.
func (g ClientCredentials) fetcher(desc string) func(ctx context.Context) (Token, error) {
	timeout := g.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if g.TLS != nil {
		tr.TLSClientConfig = g.TLS.Clone()
	}
	hc := &http.Client{Transport: tr, Timeout: timeout}
	return func(ctx context.Context) (Token, error) {
		secret, err := secretfile.Resolve(g.ClientSecret, g.SecretFileField, g.ClientSecretFile)
		if err != nil {
			return Token{}, err
		}
		cc := clientcredentials.Config{ClientID: g.ClientID, ClientSecret: secret, TokenURL: g.TokenURL,
			Scopes: g.Scopes, AuthStyle: oauth2.AuthStyleInHeader}
		if g.Audience != "" {
			cc.EndpointParams = url.Values{"audience": {g.Audience}}
		}
		t, err := cc.Token(context.WithValue(ctx, oauth2.HTTPClient, hc))
		if err != nil {
			return Token{}, fetchError(desc, err)
		}
		tok := Token{Value: t.AccessToken, Expiry: t.Expiry}
		if exp := JWTExpiry(t.AccessToken); !exp.IsZero() && (tok.Expiry.IsZero() || exp.Before(tok.Expiry)) {
			tok.Expiry = exp
		}
		return tok, nil
	}
}

// FetchError is a failed token request: the endpoint's HTTP status and
// RFC 6749 error code when it answered, else the transport error.
type FetchError struct {
	Endpoint    string
	Status      int    // 0 when the endpoint did not answer
	Code        string // RFC 6749 "error", e.g. invalid_client
	Description string
	Err         error // the transport error when Status is 0
}

func (e *FetchError) Error() string {
	if e.Status == 0 {
		return fmt.Sprintf("fetching an OAuth token from %s: %v", e.Endpoint, e.Err)
	}
	s := fmt.Sprintf("fetching an OAuth token from %s: HTTP %d %s", e.Endpoint, e.Status, http.StatusText(e.Status))
	if e.Code != "" {
		s += fmt.Sprintf(", OAuth error %q", e.Code)
		if e.Description != "" {
			s += fmt.Sprintf(" (%s)", e.Description)
		}
	}
	if e.Code == "invalid_client" {
		s += ": check the client id and client secret"
	}
	return s
}

func (e *FetchError) Unwrap() error { return e.Err }

func fetchError(endpoint string, err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.Response != nil {
		return &FetchError{Endpoint: endpoint, Status: re.Response.StatusCode, Code: re.ErrorCode,
			Description: re.ErrorDescription}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // the URL is named already
	}
	return &FetchError{Endpoint: endpoint, Err: err}
}
