package solacetest

// This file is the SEMP layer: the broker's SEMPv2 HTTP endpoints for queues,
// their topic subscriptions and the monitor view of a queue. Paths, bodies,
// envelopes and field names follow the SEMPv2 OpenAPI specs (API 2.34);
// sempspec_test.go checks every response against them.

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/connect-solace/connect-solace/internal/semp/sempwire"
)

// queueAdmin is what the SEMP handler needs from the broker; *Broker
// implements it. Tests use an in-memory fake.
type queueAdmin interface {
	HasVPN(vpn string) bool
	CreateQueue(vpn string, cfg QueueConfig) error                 // ErrQueueExists, ErrUnknownVPN
	UpdateQueue(vpn, name string, update func(*QueueConfig)) error // ErrUnknownQueue
	DeleteQueue(vpn, name string) error                            // ErrUnknownQueue
	Queue(vpn, name string) (QueueConfig, QueueStats, error)       // ErrUnknownQueue
	Queues(vpn string) ([]QueueConfig, error)
	AddQueueSubscription(vpn, queue, topic string) error    // ErrSubscriptionExists
	RemoveQueueSubscription(vpn, queue, topic string) error // ErrUnknownSubscription
}

const (
	sempConfigBase  = "/SEMP/v2/config"
	sempMonitorBase = "/SEMP/v2/monitor"
	sempActionBase  = "/SEMP/v2/action"

	// sempCookieName names the session cookie. Clients treat it as opaque.
	sempCookieName = "sempSession"
	// sempSessionIdle is how long an unused session stays valid.
	sempSessionIdle = 15 * time.Minute
	// sempMaxSessions bounds the session table against clients that never
	// present their cookie; the least recently used session goes first.
	sempMaxSessions = 256

	sempDefaultCount = 10  // SEMP's default page size
	sempMaxCount     = 100 // our per-collection maximum
	maxSEMPBody      = 1 << 20

	// sempDefaultDMQ and sempDefaultSpoolMB are SEMP's defaults for a queue
	// created without them.
	sempDefaultDMQ        = "#DEAD_MSG_QUEUE"
	sempDefaultSpoolMB    = 5000
	sempDefaultMaxMsgSize = 10000000
)

// SEMP error codes (meta.error.code) and status strings. NOT_FOUND (6) and
// ALREADY_EXISTS (10) are what real brokers send; the others are this
// broker's choice for conditions it must report somehow.
const (
	sempCodeNotFound         = 6
	sempCodeAlreadyExists    = 10
	sempCodeInvalidParameter = 11
	sempCodeNotSupported     = 14
	sempCodeUnauthorized     = 8

	sempStatusNotFound         = "NOT_FOUND"
	sempStatusAlreadyExists    = "ALREADY_EXISTS"
	sempStatusInvalidParameter = "INVALID_PARAMETER"
	sempStatusNotSupported     = "NOT_SUPPORTED"
	sempStatusUnauthorized     = "UNAUTHORIZED"
)

// sempServer serves SEMPv2.
type sempServer struct {
	admin queueAdmin
	log   *slog.Logger
	sessionAuth

	// mux routes the resources beyond queues (see registerRoutes); what
	// it does not match goes to route, the queue resources.
	mux *http.ServeMux
}

// sessionAuth is SEMP's authentication: HTTP basic auth as the SEMP user,
// which also issues a session cookie, or that cookie alone. The console
// (console.go) logs in the same way, with a cookie of its own.
type sessionAuth struct {
	user, password string
	cookie         string           // the session cookie's name
	now            func() time.Time // tests move the clock

	// bearer, when set, checks an OAuth access token sent as
	// "Authorization: Bearer" (oauth_bearer.go).
	bearer func(ctx context.Context, token string) error

	mu       sync.Mutex
	sessions map[string]time.Time // token -> expiry
}

// newSessionAuth accepts user/password and sessions named cookie.
func newSessionAuth(user, password, cookie string) sessionAuth {
	return sessionAuth{user: user, password: password, cookie: cookie, now: time.Now, sessions: map[string]time.Time{}}
}

// sempCallKey carries the *sempCall of a request through the mux.
type sempCallKey struct{}

// handle registers a mux pattern whose handler answers with a *sempCall.
func (s *sempServer) handle(pattern string, h func(c *sempCall) *sempErr) {
	s.mux.HandleFunc(pattern, func(_ http.ResponseWriter, r *http.Request) {
		c := r.Context().Value(sempCallKey{}).(*sempCall)
		c.r = r
		if err := h(c); err != nil {
			c.fail(err)
		}
	})
}

// newSEMPHandler returns the SEMP HTTP handler for admin. Requests need HTTP
// basic auth with user/password or a session cookie issued by an earlier
// authenticated request.
func newSEMPHandler(admin queueAdmin, user, password string, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &sempServer{admin: admin, log: log, sessionAuth: newSessionAuth(user, password, sempCookieName), mux: http.NewServeMux()}
	s.handle("/", s.route)
	if b, ok := admin.(*Broker); ok {
		s.bearer = b.sempBearer
	}
	if b, ok := admin.(brokerAdmin); ok {
		s.registerRoutes(b)
	}
	return s
}

// sempErr is a SEMP error response.
type sempErr struct {
	httpStatus int
	code       int
	status     string
	desc       string
}

func (e *sempErr) Error() string { return e.status + ": " + e.desc }

func errInvalid(format string, args ...any) *sempErr {
	return &sempErr{http.StatusBadRequest, sempCodeInvalidParameter, sempStatusInvalidParameter, fmt.Sprintf(format, args...)}
}

func errNotFound(format string, args ...any) *sempErr {
	return &sempErr{http.StatusNotFound, sempCodeNotFound, sempStatusNotFound, fmt.Sprintf(format, args...)}
}

func errNotSupported(format string, args ...any) *sempErr {
	return &sempErr{http.StatusBadRequest, sempCodeNotSupported, sempStatusNotSupported, fmt.Sprintf(format, args...)}
}

// adminErr maps an admin API error to SEMP's codes: a name taken, a name
// unknown, a setting the broker cannot honour; anything else is invalid.
func adminErr(err error) *sempErr {
	isAny := func(targets ...error) bool {
		return slices.ContainsFunc(targets, func(t error) bool { return errors.Is(err, t) })
	}
	switch {
	case isAny(ErrQueueExists, ErrSubscriptionExists, ErrExceptionExists, ErrCertAuthorityExists, ErrClientUsernameExists,
		ErrOAuthProfileExists, ErrAuthorizationGroupExists, ErrDomainCertAuthorityExists, ErrReplayLogExists):
		return &sempErr{http.StatusBadRequest, sempCodeAlreadyExists, sempStatusAlreadyExists, err.Error()}
	case isAny(ErrUnknownQueue, ErrUnknownMsg, ErrUnknownVPN, ErrUnknownSubscription, ErrUnknownClient, ErrUnknownClientProfile,
		ErrUnknownACLProfile, ErrUnknownException, ErrUnknownCertAuthority, ErrUnknownClientUsername, ErrUnknownOAuthProfile,
		ErrUnknownAuthorizationGroup, ErrUnknownDomainCertAuthority, ErrNoReplayLog):
		return errNotFound("%s", err.Error())
	case errors.Is(err, ErrUnsupportedVPNSetting):
		return errNotSupported("%s", err.Error())
	default:
		return errInvalid("%s", err.Error())
	}
}

// sempCall is one request being served.
type sempCall struct {
	w    http.ResponseWriter
	r    *http.Request
	api  string   // sempConfigBase or sempMonitorBase
	segs []string // decoded path segments below api
	// sel is the parsed select query parameter.
	sel *sempSelect
	// status is what was answered, for the log.
	status int
}

func (s *sempServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c := &sempCall{w: w, r: r}
	defer func() {
		s.log.Debug("semp request", "method", r.Method, "path", r.URL.Path, "status", c.status)
	}()
	if isSEMPHelp(r.URL.Path) {
		c.status = serveSEMPHelp(w, r)
		return
	}
	if !s.authenticate(w, r) {
		w.Header().Set("WWW-Authenticate", `Basic realm="SEMP"`)
		c.fail(&sempErr{http.StatusUnauthorized, sempCodeUnauthorized, sempStatusUnauthorized,
			"authentication required: send HTTP basic auth or a valid session cookie"})
		return
	}
	if err := c.parse(); err != nil {
		c.fail(err)
		return
	}
	s.mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sempCallKey{}, c)))
}

// parse splits the escaped path so that %2F inside a queue name or topic
// stays part of its segment, and reads the common query parameters.
func (c *sempCall) parse() *sempErr {
	p := c.r.URL.EscapedPath()
	for _, base := range []string{sempConfigBase, sempMonitorBase, sempActionBase} {
		if rest, ok := strings.CutPrefix(p, base+"/"); ok {
			c.api = base
			p = strings.TrimSuffix(rest, "/")
			break
		}
	}
	if c.api == "" {
		return errNotFound("unknown resource %q", c.r.URL.Path)
	}
	for _, raw := range strings.Split(p, "/") {
		seg, err := url.PathUnescape(raw)
		if err != nil || seg == "" {
			return errNotFound("unknown resource %q", c.r.URL.Path)
		}
		c.segs = append(c.segs, seg)
	}
	q := c.r.URL.Query()
	if w := q.Get("where"); w != "" {
		return errNotSupported("the test broker does not implement the where query parameter")
	}
	if sel := q.Get("select"); sel != "" {
		var err *sempErr
		if c.sel, err = parseSelect(sel); err != nil {
			return err
		}
	}
	return nil
}

// --- authentication ---

// authenticate accepts valid basic auth (issuing a session cookie when the
// request carries no live one) or a live session cookie alone. Wrong basic
// credentials fail even with a live cookie.
func (s *sessionAuth) authenticate(w http.ResponseWriter, r *http.Request) bool {
	if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return s.bearer != nil && s.bearer(r.Context(), tok) == nil
	}
	now := s.now()
	token := ""
	if ck, err := r.Cookie(s.cookie); err == nil {
		token = ck.Value
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	live := false
	if exp, ok := s.sessions[token]; ok && token != "" {
		if now.Before(exp) {
			live = true
		} else {
			delete(s.sessions, token)
		}
	}
	if u, p, ok := r.BasicAuth(); ok {
		userOK := subtle.ConstantTimeCompare([]byte(u), []byte(s.user)) == 1
		passOK := subtle.ConstantTimeCompare([]byte(p), []byte(s.password)) == 1
		if !userOK || !passOK {
			return false
		}
		if !live {
			token = s.newSessionLocked(now)
			http.SetCookie(w, &http.Cookie{Name: s.cookie, Value: token, Path: "/", HttpOnly: true,
				SameSite: http.SameSiteStrictMode})
		}
	} else if !live {
		return false
	}
	s.sessions[token] = now.Add(sempSessionIdle)
	return true
}

func (s *sessionAuth) newSessionLocked(now time.Time) string {
	for tok, exp := range s.sessions {
		if !now.Before(exp) {
			delete(s.sessions, tok)
		}
	}
	for len(s.sessions) >= sempMaxSessions {
		oldest, oldestExp := "", time.Time{}
		for tok, exp := range s.sessions {
			if oldest == "" || exp.Before(oldestExp) {
				oldest, oldestExp = tok, exp
			}
		}
		delete(s.sessions, oldest)
	}
	var b [24]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// sessionCount reports live sessions, for tests.
func (s *sessionAuth) sessionCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// --- request bodies ---

// readBody decodes a JSON object body into its attributes.
func (c *sempCall) readBody() (map[string]json.RawMessage, *sempErr) {
	raw, err := io.ReadAll(io.LimitReader(c.r.Body, maxSEMPBody+1))
	if err != nil {
		return nil, errInvalid("reading request body: %v", err)
	}
	if len(raw) > maxSEMPBody {
		return nil, errInvalid("request body exceeds %d bytes", maxSEMPBody)
	}
	if ct := c.r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		return nil, errInvalid("content type %q is not application/json", ct)
	}
	var attrs map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&attrs); err != nil || attrs == nil {
		return nil, errInvalid("request body is not a JSON object")
	}
	if dec.More() {
		return nil, errInvalid("request body has data after the JSON object")
	}
	return attrs, nil
}

func decodeAttr[T any](attrs map[string]json.RawMessage, name string, dst **T) *sempErr {
	raw, ok := attrs[name]
	if !ok {
		return nil
	}
	delete(attrs, name)
	if string(raw) == "null" {
		return errInvalid("attribute %q is null", name)
	}
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		return errInvalid("attribute %q: %v", name, err)
	}
	*dst = &v
	return nil
}

// decodeInto decodes attribute name, when the body gives it, onto *dst (a
// field of the object it changes), as decodeAttr does.
func decodeInto[T any](attrs map[string]json.RawMessage, name string, dst *T) *sempErr {
	var v *T
	if e := decodeAttr(attrs, name, &v); e != nil {
		return e
	}
	setIf(dst, v)
	return nil
}

// setIf sets *dst to an attribute's decoded value v when the body gave it
// (decodeAttr leaves v nil when it did not).
func setIf[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// firstErr returns the first non-nil error, so a handler can decode or check
// several attributes and fail on the first bad one.
func firstErr(errs ...*sempErr) *sempErr {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// matchesPath checks that a body attribute naming the object, where given,
// agrees with the request path.
func matchesPath(attr string, body *string, path string) *sempErr {
	if body != nil && *body != path {
		return errInvalid("%s %q does not match the request path's %q", attr, *body, path)
	}
	return nil
}

// onlyDefaultClientProfile and onlyDefaultACLProfile check that a client
// username or authorization group names no profile but the default: every
// client uses those.
func onlyDefaultClientProfile(p *string) *sempErr {
	if p != nil && *p != defaultClientProfile {
		return errNotSupported("clientProfileName %q: every client uses the %q client profile", *p, defaultClientProfile)
	}
	return nil
}

func onlyDefaultACLProfile(p *string) *sempErr {
	if p != nil && *p != defaultACLProfile {
		return errNotSupported("aclProfileName %q: every client uses the %q ACL profile", *p, defaultACLProfile)
	}
	return nil
}

// --- paging and select ---

// page cuts the sorted keys at the request's cursor and count. The cursor is
// the last key of the previous page, so paging stays consistent while
// objects come and go.
func (c *sempCall) page(keys []string) (page []string, nextCursor string, err *sempErr) {
	q := c.r.URL.Query()
	count := sempDefaultCount
	if s := q.Get("count"); s != "" {
		n, convErr := strconv.Atoi(s)
		if convErr != nil || n < 1 {
			return nil, "", errInvalid("count %q is not an integer of at least 1", s)
		}
		count = min(n, sempMaxCount)
	}
	start := 0
	if cur := q.Get("cursor"); cur != "" {
		after, decErr := base64.RawURLEncoding.DecodeString(cur)
		if decErr != nil {
			return nil, "", errInvalid("cursor %q is not valid", cur)
		}
		start, _ = slices.BinarySearch(keys, string(after))
		if start < len(keys) && keys[start] == string(after) {
			start++
		}
	}
	end := min(start+count, len(keys))
	page = keys[start:end]
	if end < len(keys) {
		nextCursor = base64.RawURLEncoding.EncodeToString([]byte(keys[end-1]))
	}
	return page, nextCursor, nil
}

// sempSelect is a parsed select parameter: top-level attribute names, with
// '*' wildcards, to include or (prefixed '-') exclude.
type sempSelect struct {
	include, exclude []string
}

func parseSelect(s string) (*sempSelect, *sempErr) {
	var sel sempSelect
	for _, name := range strings.Split(s, ",") {
		if neg, ok := strings.CutPrefix(name, "-"); ok {
			sel.exclude = append(sel.exclude, neg)
		} else {
			if len(sel.exclude) > 0 {
				return nil, errInvalid("select: %q follows an excluded attribute", name)
			}
			sel.include = append(sel.include, name)
		}
	}
	for _, p := range append(slices.Clone(sel.include), sel.exclude...) {
		if _, err := path.Match(p, ""); err != nil || p == "" || strings.Contains(p, ".") {
			return nil, errNotSupported("select: attribute pattern %q is not supported", p)
		}
	}
	return &sel, nil
}

// apply filters one object's attributes. Identifying attributes are kept by
// real brokers only when selected; we do the same.
func (sel *sempSelect) apply(v any) (any, *sempErr) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, &sempErr{http.StatusInternalServerError, 0, "ERROR", err.Error()}
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return v, nil // not an object
	}
	match := func(patterns []string, name string) bool {
		for _, p := range patterns {
			if ok, _ := path.Match(p, name); ok {
				return true
			}
		}
		return false
	}
	for _, p := range append(slices.Clone(sel.include), sel.exclude...) {
		found := false
		for name := range m {
			if ok, _ := path.Match(p, name); ok {
				found = true
				break
			}
		}
		if !found {
			return nil, errInvalid("select: %q matches no attribute", p)
		}
	}
	for name := range m {
		if (len(sel.include) > 0 && !match(sel.include, name)) || match(sel.exclude, name) {
			delete(m, name)
		}
	}
	return m, nil
}

// --- responses ---

func (c *sempCall) baseURL() string {
	scheme := "http"
	if c.r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + c.r.Host
}

func (c *sempCall) meta(code int) sempwire.Meta {
	return sempwire.Meta{Request: sempwire.Request{Method: c.r.Method, URI: c.baseURL() + c.r.URL.RequestURI()}, ResponseCode: code}
}

func (c *sempCall) write(code int, resp sempwire.Response[any]) *sempErr {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // topics hold '>'
	if err := enc.Encode(resp); err != nil {
		return &sempErr{http.StatusInternalServerError, 0, "ERROR", "encoding response: " + err.Error()}
	}
	c.status = code
	c.w.Header().Set("Content-Type", "application/json")
	c.w.Header().Set("Cache-Control", "no-store")
	c.w.WriteHeader(code)
	_, _ = c.w.Write(buf.Bytes())
	return nil
}

func (c *sempCall) writeObject(data, links, collections any) *sempErr {
	if c.sel != nil {
		var err *sempErr
		if data, err = c.sel.apply(data); err != nil {
			return err
		}
	}
	resp := sempwire.Response[any]{Data: data, Links: links, Meta: c.meta(http.StatusOK)}
	if collections != nil {
		resp.Collections = collections
	}
	return c.write(http.StatusOK, resp)
}

// writeEach writes a collection page: item gives each element's object and
// link, total is the whole collection's size and next the cursor of the
// following page ("" on the last one).
func writeEach[T any](c *sempCall, page []T, total int, next string, item func(T) (any, sempURILink)) *sempErr {
	var data, links []any
	for _, v := range page {
		d, l := item(v)
		data = append(data, d)
		links = append(links, l)
	}
	return c.writeList(data, links, nil, total, next)
}

// vpnObjectURI is the URI of a VPN's object:
// .../msgVpns/{vpn}/{collection}/{name}.
func (c *sempCall) vpnObjectURI(vpn, collection, name string) string {
	return c.baseURL() + c.api + "/msgVpns/" + url.PathEscape(vpn) + "/" + collection + "/" + url.PathEscape(name)
}

// unknownAttr refuses an attribute left in attrs once a handler has decoded
// (and so removed) every attribute it knows.
func unknownAttr(attrs map[string]json.RawMessage) *sempErr {
	for attr := range attrs {
		return errInvalid("unknown attribute %q", attr)
	}
	return nil
}

// required refuses a required attribute that is missing or empty.
func required(attr string, v *string) *sempErr {
	if v == nil || *v == "" {
		return errInvalid("missing required attribute %s", attr)
	}
	return nil
}

// findNamed returns the element of all whose name is want, or SEMP's
// not-found error for an object of the given kind.
func findNamed[T any](all []T, name func(T) string, kind, want string) (T, *sempErr) {
	for _, v := range all {
		if name(v) == want {
			return v, nil
		}
	}
	var zero T
	return zero, errNotFound("could not find match for %s %q", kind, want)
}

func (c *sempCall) writeList(data, links, collections []any, total int, nextCursor string) *sempErr {
	if data == nil {
		data, links = []any{}, []any{}
	}
	if c.sel != nil {
		for i := range data {
			var err *sempErr
			if data[i], err = c.sel.apply(data[i]); err != nil {
				return err
			}
		}
	}
	meta := c.meta(http.StatusOK)
	n := int64(total)
	meta.Count = &n
	if nextCursor != "" {
		q := c.r.URL.Query()
		q.Set("cursor", nextCursor)
		next := url.URL{Path: c.r.URL.Path, RawPath: c.r.URL.RawPath, RawQuery: q.Encode()}
		meta.Paging = &sempwire.Paging{CursorQuery: nextCursor, NextPageURI: c.baseURL() + next.RequestURI()}
	}
	resp := sempwire.Response[any]{Data: data, Links: links, Meta: meta}
	if collections != nil {
		resp.Collections = collections
	}
	return c.write(http.StatusOK, resp)
}

func (c *sempCall) writeMetaOnly() *sempErr {
	return c.write(http.StatusOK, sempwire.Response[any]{Meta: c.meta(http.StatusOK)})
}

// writeMetaOnlyOr answers a request whose success carries no object (a
// delete, an action) from the broker's answer err: the SEMP error mapErr
// makes of it, or an empty success when err is nil.
func (c *sempCall) writeMetaOnlyOr(err error, mapErr func(error) *sempErr) *sempErr {
	if err != nil {
		return mapErr(err)
	}
	return c.writeMetaOnly()
}

func (c *sempCall) fail(e *sempErr) {
	meta := c.meta(e.httpStatus)
	meta.Error = &sempwire.Error{Code: e.code, Description: e.desc, Status: e.status}
	if err := c.write(e.httpStatus, sempwire.Response[any]{Meta: meta}); err != nil {
		c.status = http.StatusInternalServerError
		http.Error(c.w, err.desc, http.StatusInternalServerError)
	}
}
