// Package semp is a small SEMPv2 client for the queue objects connect-solace
// provisions and inspects: config-API queues and their topic subscriptions,
// and the monitor-API view of a queue's live state.
//
// Paths, field names and envelopes follow the SEMPv2 OpenAPI 2.0 specs
// (API version 2.34). Beside the standard library it imports only
// cenkalti/backoff, so that both the plugins and the test broker's tests can
// use it.
package semp

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cenkalti/backoff/v4"

	"github.com/connect-solace/connect-solace/internal/semp/sempwire"
)

const (
	configBase  = "/SEMP/v2/config"
	monitorBase = "/SEMP/v2/monitor"

	defaultTimeout    = 10 * time.Second
	defaultMaxRetries = 3

	// maxBodyBytes bounds what we read from one response. SEMP pages are
	// small (at most a few hundred objects); a larger body is a broken proxy.
	maxBodyBytes = 16 << 20

	// pageSize is the count we ask for when listing a collection. SEMP caps
	// it per collection and may return fewer; paging carries on regardless.
	pageSize = 100

	// maxPages guards a paged listing against a server that never stops
	// handing out cursors.
	maxPages = 100000
)

// Config configures a Client.
type Config struct {
	// URL is the broker's SEMP endpoint without the /SEMP suffix, e.g.
	// http://127.0.0.1:8080. Credentials embedded as user:pass@ are used when
	// Username is empty and are stripped from the URL either way.
	URL string
	// Username and Password are sent with HTTP basic auth on every request.
	Username, Password string
	// BearerToken, when set, is called before every request for an OAuth
	// access token sent as "Authorization: Bearer" in place of basic auth.
	// It is expected to cache and renew the token itself; its error fails
	// the request without retries (the token source backs off on its own).
	BearerToken func(ctx context.Context) (string, error)
	// TLS configures HTTPS; nil uses Go's defaults. Ignored when HTTPClient
	// is set.
	TLS *tls.Config
	// Timeout bounds each HTTP attempt; 0 means 10s.
	Timeout time.Duration
	// MaxRetries is how many times a transient failure (connection error,
	// 5xx, 429) is retried; 0 means 3, a negative value disables retries.
	MaxRetries int
	// HTTPClient overrides the HTTP client. The Client copies it and adds a
	// cookie jar when it has none, so SEMP's session cookie is reused.
	HTTPClient *http.Client
}

// Client talks SEMPv2 to one broker. It is safe for concurrent use.
type Client struct {
	base       *url.URL // scheme://host[:port][/prefix], no userinfo
	user, pass string
	bearer     func(ctx context.Context) (string, error)
	http       *http.Client
	timeout    time.Duration
	maxRetries int

	// backoff, when set, returns the pause before retry number n
	// (1-based) in place of newBackoff's. Tests set it to keep retry tests
	// fast.
	backoff func(n int) time.Duration
}

// New validates cfg and returns a Client. It makes no request.
func New(cfg Config) (*Client, error) {
	if cfg.URL == "" {
		return nil, errors.New("semp: URL is required")
	}
	u, err := url.Parse(cfg.URL)
	if err != nil {
		// url.Parse errors echo the input, which may hold a password.
		return nil, errors.New("semp: URL is not a valid URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("semp: URL scheme %q is not http or https", u.Scheme)
	}
	if u.Host == "" {
		return nil, errors.New("semp: URL has no host")
	}
	user, pass := cfg.Username, cfg.Password
	if u.User != nil && user == "" {
		user = u.User.Username()
		pass, _ = u.User.Password()
	}
	u.User = nil
	u.RawQuery, u.Fragment, u.RawFragment = "", "", ""
	// Accept a URL that already ends in /SEMP or /SEMP/v2: users copy it from
	// broker docs that way.
	for _, suffix := range []string{"/SEMP/v2", "/SEMP"} {
		u.Path = strings.TrimSuffix(strings.TrimRight(u.Path, "/"), suffix)
	}
	u.RawPath = ""

	hc := &http.Client{Transport: defaultTransport(cfg.TLS)}
	if cfg.HTTPClient != nil {
		cp := *cfg.HTTPClient
		hc = &cp
	}
	if hc.Jar == nil {
		// SEMP answers basic auth with a session cookie; presenting it spares
		// the broker a password check (possibly RADIUS/LDAP) per request.
		jar, err := cookiejar.New(nil)
		if err != nil {
			return nil, fmt.Errorf("semp: creating cookie jar: %w", err)
		}
		hc.Jar = jar
	}

	c := &Client{
		base:       u,
		user:       user,
		pass:       pass,
		bearer:     cfg.BearerToken,
		http:       hc,
		timeout:    cfg.Timeout,
		maxRetries: cfg.MaxRetries,
	}
	if c.timeout <= 0 {
		c.timeout = defaultTimeout
	}
	switch {
	case c.maxRetries == 0:
		c.maxRetries = defaultMaxRetries
	case c.maxRetries < 0:
		c.maxRetries = 0
	}
	return c, nil
}

func defaultTransport(tlsConf *tls.Config) http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	if tlsConf != nil {
		t.TLSClientConfig = tlsConf.Clone()
	}
	return t
}

// newBackoff is the pause between the attempts of one request: exponential
// from 100ms, capped at 2s, with jitter so that several clients retrying a
// restarted broker do not move in step.
func newBackoff() *backoff.ExponentialBackOff {
	return backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(100*time.Millisecond),
		backoff.WithMultiplier(2),
		backoff.WithMaxInterval(2*time.Second),
		backoff.WithRandomizationFactor(0.5),
		backoff.WithMaxElapsedTime(0), // maxRetries bounds the attempts
	)
}

// seg is one path segment: its decoded value, escaped when the path is built.
type seg string

// path builds an API path from literal parts (already safe) and segs (object
// names, escaped). Queue names contain '/', topics '/', '>', '*' and '#'.
func path(parts ...any) (plain, escaped string) {
	var p, e strings.Builder
	for _, part := range parts {
		p.WriteByte('/')
		e.WriteByte('/')
		switch v := part.(type) {
		case seg:
			p.WriteString(string(v))
			e.WriteString(url.PathEscape(string(v)))
		case string:
			p.WriteString(v)
			e.WriteString(v)
		}
	}
	return p.String(), e.String()
}

// envelope is the SEMP response wrapper; data is decoded by the caller.
type envelope = sempwire.Response[json.RawMessage]

// request is one logical SEMP call.
type request struct {
	method  string
	api     string // configBase or monitorBase
	plain   string // decoded path below api, for error messages
	escaped string // escaped path below api, sent on the wire
	query   url.Values
	body    any
}

func (c *Client) newRequest(method, api string, query url.Values, body any, parts ...any) request {
	plain, escaped := path(parts...)
	return request{method: method, api: api, plain: plain, escaped: escaped, query: query, body: body}
}

// do performs r with retries and decodes the envelope. A SEMP error becomes
// *Error.
func (c *Client) do(ctx context.Context, r request) (*envelope, error) {
	var body []byte
	if r.body != nil {
		var err error
		if body, err = json.Marshal(r.body); err != nil {
			return nil, fmt.Errorf("semp: encoding %s %s body: %w", r.method, r.api+r.plain, err)
		}
	}
	u := *c.base
	u.Path = c.base.Path + r.api + r.plain
	u.RawPath = c.base.EscapedPath() + r.api + r.escaped
	u.RawQuery = r.query.Encode()

	// ambiguous records that an earlier attempt may have been applied by the
	// broker although we saw no success (lost response, 500 mid-commit). A
	// retried POST then meets ALREADY_EXISTS, a retried DELETE NOT_FOUND.
	ambiguous := false
	pause := c.backoff
	if pause == nil {
		b := newBackoff()
		pause = func(int) time.Duration { return b.NextBackOff() }
	}
	for attempt := 0; ; attempt++ {
		env, f := c.attempt(ctx, r, &u, body)
		if f == nil {
			return env, nil
		}
		var se *Error
		if errors.As(f.err, &se) {
			se.afterAmbiguous = ambiguous
		}
		if !f.retry || attempt >= c.maxRetries || ctx.Err() != nil {
			if attempt > 0 && se == nil {
				return nil, fmt.Errorf("%w (after %d attempts)", f.err, attempt+1)
			}
			return nil, f.err
		}
		if f.mayHaveApplied && r.method != http.MethodGet {
			ambiguous = true
		}
		wait := pause(attempt + 1)
		if f.hasRetryAfter {
			wait = min(f.retryAfter, 10*time.Second)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("semp: %s %s: %w (while retrying after: %w)", r.method, r.api+r.plain, ctx.Err(), f.err)
		case <-t.C:
		}
	}
}

// failure is why one attempt did not succeed.
type failure struct {
	err error
	// retry says the failure is transient.
	retry bool
	// mayHaveApplied says the broker may have acted on the request.
	mayHaveApplied bool
	// retryAfter is the server's Retry-After, when hasRetryAfter.
	retryAfter    time.Duration
	hasRetryAfter bool
}

// attempt makes one HTTP exchange.
func (c *Client) attempt(ctx context.Context, r request, u *url.URL, body []byte) (*envelope, *failure) {
	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()

	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(actx, r.method, u.String(), rd)
	if err != nil {
		return nil, &failure{err: fmt.Errorf("semp: building %s %s: %w", r.method, r.api+r.plain, err)}
	}
	// http.NewRequest re-parses the URL; keep our escaping exactly.
	req.URL.Path, req.URL.RawPath = u.Path, u.RawPath
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	switch {
	case c.bearer != nil:
		tok, err := c.bearer(actx)
		if err != nil {
			return nil, &failure{err: fmt.Errorf("semp: %s %s: no OAuth token: %w", r.method, r.api+r.plain, err)}
		}
		req.Header.Set("Authorization", "Bearer "+tok)
	case c.user != "" || c.pass != "":
		req.SetBasicAuth(c.user, c.pass)
	}

	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, &failure{err: fmt.Errorf("semp: %s %s: %w", r.method, r.api+r.plain, ctx.Err())}
		}
		// net/http strips userinfo from URLs in its errors, and our base URL
		// has none; the password cannot appear here.
		return nil, &failure{
			err:            fmt.Errorf("semp: %s %s: %w", r.method, r.api+r.plain, unwrapURLError(err)),
			retry:          isTransientNetErr(err),
			mayHaveApplied: !isDialErr(err),
		}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBodyBytes))
	if err != nil {
		return nil, &failure{
			err:            fmt.Errorf("semp: %s %s: reading response: %w", r.method, r.api+r.plain, err),
			retry:          true,
			mayHaveApplied: true,
		}
	}

	var e envelope
	decodeErr := json.Unmarshal(raw, &e)
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if decodeErr != nil {
			return nil, &failure{err: fmt.Errorf("semp: %s %s: decoding HTTP %d response: %w", r.method, r.api+r.plain, resp.StatusCode, decodeErr)}
		}
		return &e, nil
	}

	se := &Error{HTTPStatus: resp.StatusCode, Method: r.method, Path: r.api + r.plain}
	if decodeErr == nil && e.Meta.Error != nil {
		se.Code = e.Meta.Error.Code
		se.Status = e.Meta.Error.Status
		se.Description = e.Meta.Error.Description
	} else {
		se.Description = snippet(raw)
	}
	f := &failure{err: se}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable ||
		resp.StatusCode == statusNoSEMPSession:
		// Refused before doing anything.
		f.retry = true
	case resp.StatusCode >= 500:
		f.retry, f.mayHaveApplied = true, true
	}
	if s := resp.Header.Get("Retry-After"); s != "" && f.retry {
		if secs, err := strconv.Atoi(s); err == nil && secs >= 0 {
			f.retryAfter, f.hasRetryAfter = time.Duration(secs)*time.Second, true
		}
	}
	return nil, f
}

// statusNoSEMPSession is the broker's "529 No SEMP Session Available": every
// session slot is taken; a later attempt may get one.
const statusNoSEMPSession = 529

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// isTransientNetErr reports connection-level failures worth retrying:
// refused or reset connections, timeouts of one attempt, EOF mid-response.
func isTransientNetErr(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return true
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, context.DeadlineExceeded)
}

// isDialErr reports a failure to connect, after which the broker cannot have
// seen the request.
func isDialErr(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "dial"
}

// snippet renders a non-SEMP error body (an HTML page from a proxy, say) as
// a short single line.
func snippet(raw []byte) string {
	s := strings.Join(strings.Fields(string(raw)), " ")
	const limit = 200
	if len(s) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}

// list fetches every page of a collection and hands each page's data to add.
func (c *Client) list(ctx context.Context, api string, add func(data json.RawMessage) error, parts ...any) error {
	return c.listWithCollections(ctx, api, func(data, _ json.RawMessage) error { return add(data) }, parts...)
}

// listWithCollections is list that also hands over each page's collections
// array (monitor API), aligned with data.
func (c *Client) listWithCollections(ctx context.Context, api string, add func(data, collections json.RawMessage) error, parts ...any) error {
	q := url.Values{"count": {strconv.Itoa(pageSize)}}
	plain, _ := path(parts...)
	seen := map[string]bool{}
	for range maxPages {
		env, err := c.do(ctx, c.newRequest(http.MethodGet, api, q, nil, parts...))
		if err != nil {
			return err
		}
		if len(env.Data) > 0 && string(env.Data) != "null" {
			if err := add(env.Data, env.Collections); err != nil {
				return err
			}
		}
		next := ""
		if p := env.Meta.Paging; p != nil {
			next = p.CursorQuery
			if next == "" && p.NextPageURI != "" {
				if nu, err := url.Parse(p.NextPageURI); err == nil {
					next = nu.Query().Get("cursor")
				}
			}
		}
		if next == "" {
			return nil
		}
		if seen[next] {
			return fmt.Errorf("semp: listing %s: server repeated paging cursor", api+plain)
		}
		seen[next] = true
		q = url.Values{"count": {strconv.Itoa(pageSize)}, "cursor": {next}}
	}
	return fmt.Errorf("semp: listing %s: more than %d pages", api+plain, maxPages)
}
