package solacetest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeAdmin is an in-memory queueAdmin with the Broker's documented
// semantics.
type fakeAdmin struct {
	mu     sync.Mutex
	vpns   map[string]map[string]*fakeQueue
	events []string
}

type fakeQueue struct {
	cfg   QueueConfig
	stats QueueStats
}

func newFakeAdmin(vpns ...string) *fakeAdmin {
	f := &fakeAdmin{vpns: map[string]map[string]*fakeQueue{}}
	for _, v := range vpns {
		f.vpns[v] = map[string]*fakeQueue{}
	}
	return f
}

func (f *fakeAdmin) HasVPN(vpn string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.vpns[vpn]
	return ok
}

func (f *fakeAdmin) queue(vpn, name string) (*fakeQueue, error) {
	v, ok := f.vpns[vpn]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownVPN, vpn)
	}
	q, ok := v[name]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownQueue, name)
	}
	return q, nil
}

func (f *fakeAdmin) CreateQueue(vpn string, cfg QueueConfig) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.vpns[vpn]
	if !ok {
		return fmt.Errorf("%w %q", ErrUnknownVPN, vpn)
	}
	if _, ok := v[cfg.Name]; ok {
		return fmt.Errorf("%w: %q", ErrQueueExists, cfg.Name)
	}
	if cfg.AccessType == "" {
		cfg.AccessType = AccessExclusive
	}
	if !cfg.IngressEnabled && !cfg.EgressEnabled {
		cfg.IngressEnabled, cfg.EgressEnabled = true, true
	}
	cfg.Durable = true
	v[cfg.Name] = &fakeQueue{cfg: cfg}
	f.events = append(f.events, "create "+cfg.Name)
	return nil
}

// addTemp adds a temporary queue, as a client bind would.
func (f *fakeAdmin) addTemp(vpn, name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.vpns[vpn][name] = &fakeQueue{cfg: QueueConfig{Name: name, AccessType: AccessExclusive, IngressEnabled: true, EgressEnabled: true}}
}

func (f *fakeAdmin) setStats(vpn, name string, st QueueStats) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.vpns[vpn][name].stats = st
}

func (f *fakeAdmin) UpdateQueue(vpn, name string, update func(*QueueConfig)) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	q, err := f.queue(vpn, name)
	if err != nil {
		return err
	}
	cfg := q.cfg
	cfg.Subscriptions = slices.Clone(cfg.Subscriptions)
	update(&cfg)
	cfg.Name = name
	q.cfg = cfg
	f.events = append(f.events, "update "+name)
	return nil
}

func (f *fakeAdmin) DeleteQueue(vpn, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := f.queue(vpn, name); err != nil {
		return err
	}
	delete(f.vpns[vpn], name)
	f.events = append(f.events, "delete "+name)
	return nil
}

func (f *fakeAdmin) Queue(vpn, name string) (QueueConfig, QueueStats, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	q, err := f.queue(vpn, name)
	if err != nil {
		return QueueConfig{}, QueueStats{}, err
	}
	cfg := q.cfg
	cfg.Subscriptions = slices.Clone(cfg.Subscriptions)
	return cfg, q.stats, nil
}

func (f *fakeAdmin) Queues(vpn string) ([]QueueConfig, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.vpns[vpn]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownVPN, vpn)
	}
	var out []QueueConfig
	for _, q := range v {
		out = append(out, q.cfg)
	}
	return out, nil
}

func (f *fakeAdmin) AddQueueSubscription(vpn, queue, topic string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	q, err := f.queue(vpn, queue)
	if err != nil {
		return err
	}
	if slices.Contains(q.cfg.Subscriptions, topic) {
		return fmt.Errorf("%w: %q", ErrSubscriptionExists, topic)
	}
	q.cfg.Subscriptions = append(q.cfg.Subscriptions, topic)
	return nil
}

func (f *fakeAdmin) RemoveQueueSubscription(vpn, queue, topic string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	q, err := f.queue(vpn, queue)
	if err != nil {
		return err
	}
	i := slices.Index(q.cfg.Subscriptions, topic)
	if i < 0 {
		return fmt.Errorf("%w: %q", ErrUnknownSubscription, topic)
	}
	q.cfg.Subscriptions = slices.Delete(q.cfg.Subscriptions, i, i+1)
	return nil
}

// sempFixture is a spec-checked SEMP handler over a fake admin.
type sempFixture struct {
	t     *testing.T
	admin *fakeAdmin
	srv   *sempServer
	url   string
	spec  *specRecorder
}

func newSEMPFixture(t *testing.T) *sempFixture {
	t.Helper()
	admin := newFakeAdmin("default", "other")
	h := newSEMPHandler(admin, "admin", "pw", nil)
	spec := newSpecRecorder(t)
	ts := httptest.NewServer(spec.wrap(h))
	t.Cleanup(ts.Close)
	return &sempFixture{t: t, admin: admin, srv: h.(*sempServer), url: ts.URL, spec: spec}
}

type sempReply struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

// errStatus returns meta.error.status, or "".
func (r sempReply) errStatus() string {
	meta, _ := r.body["meta"].(map[string]any)
	e, _ := meta["error"].(map[string]any)
	s, _ := e["status"].(string)
	return s
}

func (r sempReply) errCode() float64 {
	meta, _ := r.body["meta"].(map[string]any)
	e, _ := meta["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

func (r sempReply) data() map[string]any {
	d, _ := r.body["data"].(map[string]any)
	return d
}

func (r sempReply) list() []map[string]any {
	var out []map[string]any
	for _, d := range r.body["data"].([]any) {
		out = append(out, d.(map[string]any))
	}
	return out
}

// do sends an authenticated request; path is the escaped path and query.
func (f *sempFixture) do(method, path string, body any) sempReply {
	return f.doAuth(method, path, body, func(r *http.Request) { r.SetBasicAuth("admin", "pw") })
}

func (f *sempFixture) doAuth(method, path string, body any, auth func(*http.Request)) sempReply {
	f.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		require.NoError(f.t, err)
		rd = strings.NewReader(string(raw))
	}
	req, err := http.NewRequestWithContext(f.t.Context(), method, f.url+path, rd)
	require.NoError(f.t, err)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth != nil {
		auth(req)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(f.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(f.t, err)
	var m map[string]any
	require.NoError(f.t, json.Unmarshal(raw, &m), "body: %s", raw)
	return sempReply{status: resp.StatusCode, header: resp.Header, body: m, raw: string(raw)}
}

const qPath = "/SEMP/v2/config/msgVpns/default/queues"

func TestSEMPAuth(t *testing.T) {
	f := newSEMPFixture(t)
	basic := func(u, p string) func(*http.Request) { return func(r *http.Request) { r.SetBasicAuth(u, p) } }

	// A successful basic auth opens a session.
	r := f.doAuth("GET", qPath, nil, basic("admin", "pw"))
	require.Equal(t, 200, r.status)
	cookies := (&http.Response{Header: r.header}).Cookies()
	require.Len(t, cookies, 1)
	session := cookies[0]
	assert.Equal(t, sempCookieName, session.Name)
	assert.True(t, session.HttpOnly)
	withCookie := func(value string, then func(*http.Request)) func(*http.Request) {
		return func(r *http.Request) {
			r.AddCookie(&http.Cookie{Name: sempCookieName, Value: value})
			if then != nil {
				then(r)
			}
		}
	}

	tests := []struct {
		name       string
		auth       func(*http.Request)
		wantStatus int
		newCookie  bool
	}{
		{name: "no credentials", auth: nil, wantStatus: 401},
		{name: "wrong password", auth: basic("admin", "nope"), wantStatus: 401},
		{name: "wrong user", auth: basic("root", "pw"), wantStatus: 401},
		{name: "bearer", auth: func(r *http.Request) { r.Header.Set("Authorization", "Bearer x") }, wantStatus: 401},
		{name: "cookie alone", auth: withCookie(session.Value, nil), wantStatus: 200},
		{name: "cookie and basic", auth: withCookie(session.Value, basic("admin", "pw")), wantStatus: 200},
		{name: "cookie with wrong basic", auth: withCookie(session.Value, basic("admin", "nope")), wantStatus: 401},
		{name: "forged cookie", auth: withCookie("forged", nil), wantStatus: 401},
		{name: "forged cookie and basic", auth: withCookie("forged", basic("admin", "pw")), wantStatus: 200, newCookie: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := f.doAuth("GET", qPath, nil, tt.auth)
			require.Equal(t, tt.wantStatus, r.status, r.raw)
			assert.Equal(t, tt.newCookie, r.header.Get("Set-Cookie") != "")
			if r.status == 401 {
				assert.Equal(t, "UNAUTHORIZED", r.errStatus())
				assert.Equal(t, `Basic realm="SEMP"`, r.header.Get("WWW-Authenticate"))
				assert.NotContains(t, r.raw, "pw")
			}
		})
	}

	t.Run("session expires when idle", func(t *testing.T) {
		now := time.Now()
		f.srv.now = func() time.Time { return now }
		r := f.doAuth("GET", qPath, nil, withCookie(session.Value, nil))
		require.Equal(t, 200, r.status)
		now = now.Add(sempSessionIdle - time.Second)
		r = f.doAuth("GET", qPath, nil, withCookie(session.Value, nil))
		require.Equal(t, 200, r.status, "use extends the session")
		now = now.Add(sempSessionIdle + time.Second)
		r = f.doAuth("GET", qPath, nil, withCookie(session.Value, nil))
		require.Equal(t, 401, r.status)
	})

	t.Run("session table is bounded", func(t *testing.T) {
		for range sempMaxSessions + 20 {
			r := f.doAuth("GET", qPath, nil, basic("admin", "pw"))
			require.Equal(t, 200, r.status)
		}
		assert.Equal(t, sempMaxSessions, f.srv.sessionCount())
	})
}

func TestSEMPQueueCRUD(t *testing.T) {
	f := newSEMPFixture(t)

	// Create with defaults.
	r := f.do("POST", qPath, map[string]any{"queueName": "orders"})
	require.Equal(t, 200, r.status, r.raw)
	d := r.data()
	assert.Equal(t, "orders", d["queueName"])
	assert.Equal(t, "default", d["msgVpnName"])
	assert.Equal(t, "exclusive", d["accessType"])
	assert.Equal(t, "no-access", d["permission"])
	assert.Equal(t, "#DEAD_MSG_QUEUE", d["deadMsgQueue"])
	assert.Equal(t, float64(5000), d["maxMsgSpoolUsage"])
	assert.Equal(t, true, d["ingressEnabled"])
	assert.Equal(t, true, d["egressEnabled"])
	links := r.body["links"].(map[string]any)
	assert.Equal(t, f.url+qPath+"/orders", links["uri"])
	assert.Equal(t, f.url+qPath+"/orders/subscriptions", links["subscriptionsUri"])
	cfg, _, err := f.admin.Queue("default", "orders")
	require.NoError(t, err)
	assert.Equal(t, QueueConfig{Name: "orders", AccessType: AccessExclusive, Permission: "no-access",
		DeadMsgQueue: "#DEAD_MSG_QUEUE", MaxMsgSpoolUsage: 5000, IngressEnabled: true, EgressEnabled: true, Durable: true,
		MaxMsgSize: sempDefaultMaxMsgSize}, cfg)

	tests := []struct {
		name       string
		method     string
		path       string
		body       any
		wantStatus int
		wantErr    string
		wantCode   float64
		check      func(t *testing.T, r sempReply)
	}{
		{name: "create all modelled attributes", method: "POST", path: qPath, body: map[string]any{
			"queueName": "full", "msgVpnName": "default", "accessType": "non-exclusive", "permission": "consume",
			"ingressEnabled": false, "egressEnabled": false, "maxRedeliveryCount": 3, "deadMsgQueue": "dmq",
			"owner": "alice", "maxMsgSpoolUsage": 10, "respectTtlEnabled": true, "maxMsgSize": 2048,
			"rejectMsgToSenderOnDiscardBehavior": "never",
			"maxBindCount":                       1000, "eventBindCountThreshold": map[string]any{"setPercent": 90, "clearPercent": 70},
		}, wantStatus: 200, check: func(t *testing.T, r sempReply) {
			cfg, _, err := f.admin.Queue("default", "full")
			require.NoError(t, err)
			assert.Equal(t, QueueConfig{Name: "full", AccessType: AccessNonExclusive, Permission: "consume",
				MaxRedeliveryCount: 3, DeadMsgQueue: "dmq", Owner: "alice", MaxMsgSpoolUsage: 10, RespectTTL: true,
				Durable: true, MaxMsgSize: 2048, RejectMsgToSenderOnDiscard: "never"}, cfg, "ingress and egress stay off when asked")
			assert.Equal(t, false, r.data()["ingressEnabled"])
		}},
		{name: "duplicate", method: "POST", path: qPath, body: map[string]any{"queueName": "orders"}, wantStatus: 400, wantErr: "ALREADY_EXISTS", wantCode: 10},
		{name: "missing name", method: "POST", path: qPath, body: map[string]any{"accessType": "exclusive"}, wantStatus: 400, wantErr: "INVALID_PARAMETER"},
		{name: "unknown attribute", method: "POST", path: qPath, body: map[string]any{"queueName": "x", "bindCount": 1}, wantStatus: 400, wantErr: "INVALID_PARAMETER"},
		{name: "wrong type", method: "POST", path: qPath, body: map[string]any{"queueName": "x", "ingressEnabled": "yes"}, wantStatus: 400, wantErr: "INVALID_PARAMETER"},
		{name: "null attribute", method: "POST", path: qPath, body: `{"queueName":"x","owner":null}`, wantStatus: 400, wantErr: "INVALID_PARAMETER"},
		{name: "bad access type", method: "POST", path: qPath, body: map[string]any{"queueName": "x", "accessType": "shared"}, wantStatus: 400, wantErr: "INVALID_PARAMETER"},
		{name: "bad permission", method: "POST", path: qPath, body: map[string]any{"queueName": "x", "permission": "all"}, wantStatus: 400, wantErr: "INVALID_PARAMETER"},
		{name: "bad discard behaviour", method: "POST", path: qPath, body: map[string]any{"queueName": "x", "rejectMsgToSenderOnDiscardBehavior": "sometimes"}, wantStatus: 400, wantErr: "INVALID_PARAMETER"},
		{name: "negative max message size", method: "POST", path: qPath, body: map[string]any{"queueName": "x", "maxMsgSize": -1}, wantStatus: 400, wantErr: "INVALID_PARAMETER"},
		{name: "redelivery out of range", method: "POST", path: qPath, body: map[string]any{"queueName": "x", "maxRedeliveryCount": 256}, wantStatus: 400, wantErr: "INVALID_PARAMETER"},
		{name: "unmodelled attribute off default", method: "POST", path: qPath, body: map[string]any{"queueName": "x", "maxBindCount": 1}, wantStatus: 400, wantErr: "NOT_SUPPORTED"},
		{name: "vpn mismatch", method: "POST", path: qPath, body: map[string]any{"queueName": "x", "msgVpnName": "other"}, wantStatus: 400, wantErr: "INVALID_PARAMETER"},
		{name: "not JSON", method: "POST", path: qPath, body: "{", wantStatus: 400, wantErr: "INVALID_PARAMETER"},
		{name: "JSON array", method: "POST", path: qPath, body: "[]", wantStatus: 400, wantErr: "INVALID_PARAMETER"},
		{name: "trailing data", method: "POST", path: qPath, body: `{"queueName":"x"}{}`, wantStatus: 400, wantErr: "INVALID_PARAMETER"},
		{name: "unknown VPN", method: "POST", path: "/SEMP/v2/config/msgVpns/nope/queues", body: map[string]any{"queueName": "x"}, wantStatus: 404, wantErr: "NOT_FOUND", wantCode: 6},
		{name: "get", method: "GET", path: qPath + "/orders", wantStatus: 200, check: func(t *testing.T, r sempReply) {
			assert.Equal(t, "orders", r.data()["queueName"])
		}},
		{name: "get unknown", method: "GET", path: qPath + "/nope", wantStatus: 404, wantErr: "NOT_FOUND", wantCode: 6},
		{name: "patch", method: "PATCH", path: qPath + "/orders", body: map[string]any{"egressEnabled": false, "maxRedeliveryCount": 5}, wantStatus: 200, check: func(t *testing.T, r sempReply) {
			assert.Equal(t, false, r.data()["egressEnabled"])
			assert.Equal(t, true, r.data()["ingressEnabled"], "PATCH leaves the rest")
			assert.Equal(t, float64(5), r.data()["maxRedeliveryCount"])
		}},
		{name: "patch name mismatch", method: "PATCH", path: qPath + "/orders", body: map[string]any{"queueName": "other"}, wantStatus: 400, wantErr: "INVALID_PARAMETER"},
		{name: "patch unknown", method: "PATCH", path: qPath + "/nope", body: map[string]any{"owner": "x"}, wantStatus: 404, wantErr: "NOT_FOUND"},
		{name: "put replaces", method: "PUT", path: qPath + "/orders", body: map[string]any{"accessType": "non-exclusive"}, wantStatus: 200, check: func(t *testing.T, r sempReply) {
			assert.Equal(t, "non-exclusive", r.data()["accessType"])
			assert.Equal(t, float64(0), r.data()["maxRedeliveryCount"], "absent attributes return to defaults")
			assert.Equal(t, true, r.data()["egressEnabled"])
		}},
		{name: "put creates", method: "PUT", path: qPath + "/fresh", body: map[string]any{"owner": "bob"}, wantStatus: 200, check: func(t *testing.T, r sempReply) {
			assert.Equal(t, "fresh", r.data()["queueName"])
			assert.Equal(t, "bob", r.data()["owner"])
		}},
		{name: "delete", method: "DELETE", path: qPath + "/fresh", wantStatus: 200, check: func(t *testing.T, r sempReply) {
			_, _, err := f.admin.Queue("default", "fresh")
			require.ErrorIs(t, err, ErrUnknownQueue)
			assert.Nil(t, r.body["data"])
		}},
		{name: "delete unknown", method: "DELETE", path: qPath + "/fresh", wantStatus: 404, wantErr: "NOT_FOUND"},
		{name: "method not allowed", method: "POST", path: qPath + "/orders", body: map[string]any{}, wantStatus: 405, wantErr: "NOT_SUPPORTED"},
		{name: "monitor is read-only", method: "DELETE", path: "/SEMP/v2/monitor/msgVpns/default/queues/orders", wantStatus: 405, wantErr: "NOT_SUPPORTED"},
		{name: "unknown resource", method: "GET", path: "/SEMP/v2/config/msgVpns/default/topicEndpoints", wantStatus: 404, wantErr: "NOT_FOUND"},
		{name: "outside SEMP", method: "GET", path: "/SEMP/v1/config", wantStatus: 404, wantErr: "NOT_FOUND"},
		{name: "where unsupported", method: "GET", path: qPath + "?where=queueName%3D%3Dx", wantStatus: 400, wantErr: "NOT_SUPPORTED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := f.do(tt.method, tt.path, tt.body)
			require.Equal(t, tt.wantStatus, r.status, r.raw)
			assert.Equal(t, tt.wantErr, r.errStatus(), r.raw)
			if tt.wantCode != 0 {
				assert.Equal(t, tt.wantCode, r.errCode())
			}
			if tt.check != nil {
				tt.check(t, r)
			}
		})
	}
}

func TestSEMPEscapedNames(t *testing.T) {
	f := newSEMPFixture(t)
	const name, topic = "orders/eu west%", "orders/>/*/#x"
	r := f.do("POST", qPath, map[string]any{"queueName": name})
	require.Equal(t, 200, r.status, r.raw)
	escQ := "orders%2Feu%20west%25"
	assert.Equal(t, f.url+qPath+"/"+escQ, r.body["links"].(map[string]any)["uri"])

	r = f.do("POST", qPath+"/"+escQ+"/subscriptions", map[string]any{"subscriptionTopic": topic})
	require.Equal(t, 200, r.status, r.raw)
	assert.Equal(t, topic, r.data()["subscriptionTopic"])
	assert.Contains(t, r.raw, `"orders/>/*/#x"`, "topics are not HTML-escaped")
	escT := "orders%2F%3E%2F%2A%2F%23x"
	assert.Equal(t, f.url+qPath+"/"+escQ+"/subscriptions/"+escT, r.body["links"].(map[string]any)["uri"])

	cfg, _, err := f.admin.Queue("default", name)
	require.NoError(t, err)
	assert.Equal(t, []string{topic}, cfg.Subscriptions)

	r = f.do("GET", qPath+"/"+escQ+"/subscriptions/"+escT, nil)
	require.Equal(t, 200, r.status, r.raw)
	r = f.do("GET", qPath+"/orders", nil)
	require.Equal(t, 404, r.status, "a name with '/' is one segment, not a prefix")
	r = f.do("GET", qPath+"/"+escQ+"/subscriptions", nil)
	require.Equal(t, 200, r.status)
	require.Len(t, r.list(), 1)
	assert.Equal(t, map[string]any{"msgVpnName": "default", "queueName": name, "subscriptionTopic": topic}, r.list()[0])

	r = f.do("POST", qPath+"/"+escQ+"/subscriptions", map[string]any{"subscriptionTopic": topic})
	assert.Equal(t, "ALREADY_EXISTS", r.errStatus())
	r = f.do("POST", qPath+"/"+escQ+"/subscriptions", map[string]any{"subscriptionTopic": "a", "extra": 1})
	assert.Equal(t, "INVALID_PARAMETER", r.errStatus())
	r = f.do("POST", qPath+"/"+escQ+"/subscriptions", map[string]any{"subscriptionTopic": "a", "queueName": "other"})
	assert.Equal(t, "INVALID_PARAMETER", r.errStatus())
	r = f.do("POST", qPath+"/"+escQ+"/subscriptions", map[string]any{})
	assert.Equal(t, "INVALID_PARAMETER", r.errStatus())
	r = f.do("DELETE", qPath+"/"+escQ+"/subscriptions/"+escT, nil)
	require.Equal(t, 200, r.status, r.raw)
	r = f.do("DELETE", qPath+"/"+escQ+"/subscriptions/"+escT, nil)
	assert.Equal(t, "NOT_FOUND", r.errStatus())
	r = f.do("GET", qPath+"/"+escQ+"/subscriptions/"+escT, nil)
	assert.Equal(t, "NOT_FOUND", r.errStatus())
	r = f.do("POST", qPath+"/nope/subscriptions", map[string]any{"subscriptionTopic": "a"})
	assert.Equal(t, "NOT_FOUND", r.errStatus())
}

func TestSEMPPaging(t *testing.T) {
	f := newSEMPFixture(t)
	const n = 25
	for i := range n {
		require.NoError(t, f.admin.CreateQueue("default", QueueConfig{Name: fmt.Sprintf("q%02d", i)}))
	}
	f.admin.addTemp("default", "#P2P/QTMP/x")

	collect := func(path string, mutate func(page int)) (names []string, pages int) {
		for path != "" {
			r := f.do("GET", path, nil)
			require.Equal(t, 200, r.status, r.raw)
			for _, d := range r.list() {
				names = append(names, d["queueName"].(string))
			}
			links := r.body["links"].([]any)
			assert.Len(t, links, len(r.list()), "one links entry per object")
			meta := r.body["meta"].(map[string]any)
			path = ""
			if p, ok := meta["paging"].(map[string]any); ok {
				next := p["nextPageUri"].(string)
				require.True(t, strings.HasPrefix(next, f.url))
				path = strings.TrimPrefix(next, f.url)
				assert.Contains(t, path, "cursor="+p["cursorQuery"].(string))
			}
			if mutate != nil {
				mutate(pages)
			}
			pages++
		}
		return names, pages
	}

	names, pages := collect(qPath+"?count=10", nil)
	assert.Equal(t, 3, pages)
	require.Len(t, names, n, "temporary queues are not config objects")
	assert.True(t, slices.IsSorted(names))

	names, pages = collect(qPath, nil)
	assert.Equal(t, 3, pages, "default count is 10")
	assert.Len(t, names, n)

	// Deleting an already-returned queue between pages skips nothing.
	names, _ = collect(qPath+"?count=10", func(page int) {
		if page == 0 {
			require.NoError(t, f.admin.DeleteQueue("default", "q03"))
		}
	})
	assert.Len(t, names, n)

	names, _ = collect("/SEMP/v2/monitor/msgVpns/default/queues?count=7", nil)
	assert.Len(t, names, n-1+1, "monitor lists temporary queues")
	assert.Contains(t, names, "#P2P/QTMP/x")

	for _, bad := range []string{"?count=0", "?count=x", "?cursor=%25%25"} {
		r := f.do("GET", qPath+bad, nil)
		assert.Equal(t, "INVALID_PARAMETER", r.errStatus(), bad)
	}
	r := f.do("GET", "/SEMP/v2/config/msgVpns/nope/queues", nil)
	assert.Equal(t, "NOT_FOUND", r.errStatus())
	for i := range sempMaxCount {
		require.NoError(t, f.admin.CreateQueue("default", QueueConfig{Name: fmt.Sprintf("z%03d", i)}))
	}
	r = f.do("GET", qPath+"?count=1000", nil)
	assert.Len(t, r.list(), sempMaxCount, "count is capped")
	assert.NotNil(t, r.body["meta"].(map[string]any)["paging"])
}

func TestSEMPMonitor(t *testing.T) {
	f := newSEMPFixture(t)
	require.NoError(t, f.admin.CreateQueue("default", QueueConfig{Name: "q", AccessType: AccessNonExclusive,
		Subscriptions: []string{"a", "b"}, MaxRedeliveryCount: 2, DeadMsgQueue: "dmq"}))
	f.admin.setStats("default", "q", QueueStats{SpooledMsgCount: 7, SpooledBytes: 700, Unacked: 3, Redelivered: 4, Consumers: 2})
	f.admin.addTemp("default", "#P2P/QTMP/t")

	r := f.do("GET", "/SEMP/v2/monitor/msgVpns/default/queues/q", nil)
	require.Equal(t, 200, r.status, r.raw)
	d := r.data()
	assert.Equal(t, float64(7), d["spooledMsgCount"])
	assert.Equal(t, float64(700), d["msgSpoolUsage"])
	assert.Equal(t, float64(3), d["txUnackedMsgCount"])
	assert.Equal(t, float64(4), d["redeliveredMsgCount"])
	assert.Equal(t, "non-exclusive", d["accessType"])
	assert.Equal(t, true, d["durable"])
	assert.Equal(t, "dmq", d["deadMsgQueue"])
	assert.Equal(t, map[string]any{
		"msgs": map[string]any{"count": float64(7)}, "subscriptions": map[string]any{"count": float64(2)},
		"txFlows": map[string]any{"count": float64(2)},
	}, r.body["collections"])
	assert.Equal(t, f.url+"/SEMP/v2/monitor/msgVpns/default/queues/q", r.body["links"].(map[string]any)["uri"])

	// Live: the numbers follow the broker.
	f.admin.setStats("default", "q", QueueStats{})
	r = f.do("GET", "/SEMP/v2/monitor/msgVpns/default/queues/q", nil)
	assert.Equal(t, float64(0), r.data()["spooledMsgCount"])

	r = f.do("GET", "/SEMP/v2/monitor/msgVpns/default/queues/%23P2P%2FQTMP%2Ft", nil)
	require.Equal(t, 200, r.status, r.raw)
	assert.Equal(t, false, r.data()["durable"])
	r = f.do("GET", qPath+"/%23P2P%2FQTMP%2Ft", nil)
	assert.Equal(t, "NOT_FOUND", r.errStatus(), "the config API does not see temporary queues")

	r = f.do("GET", "/SEMP/v2/monitor/msgVpns/default/queues/q/subscriptions", nil)
	require.Equal(t, 200, r.status, r.raw)
	assert.Len(t, r.list(), 2)

	r = f.do("GET", "/SEMP/v2/monitor/msgVpns/default/queues", nil)
	require.Equal(t, 200, r.status, r.raw)
	assert.Len(t, r.body["collections"].([]any), 2, "collections align with data")
}

func TestSEMPSelect(t *testing.T) {
	f := newSEMPFixture(t)
	require.NoError(t, f.admin.CreateQueue("default", QueueConfig{Name: "q", Owner: "o"}))
	tests := []struct {
		query    string
		wantKeys []string
		wantErr  string
	}{
		{query: "select=queueName,accessType", wantKeys: []string{"accessType", "queueName"}},
		{query: "select=queue*", wantKeys: []string{"queueName"}},
		{query: "select=max*,-maxBindCount,-maxMsgSize,-maxTtl,-maxDelivered*", wantKeys: []string{"maxMsgSpoolUsage", "maxRedeliveryCount"}},
		{query: "select=nosuch", wantErr: "INVALID_PARAMETER"},
		{query: "select=-owner,queueName", wantErr: "INVALID_PARAMETER"},
		{query: "select=eventBindCountThreshold.setPercent", wantErr: "NOT_SUPPORTED"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			for _, p := range []string{qPath + "/q?", qPath + "?"} {
				r := f.do("GET", p+tt.query, nil)
				if tt.wantErr != "" {
					assert.Equal(t, tt.wantErr, r.errStatus(), r.raw)
					continue
				}
				require.Equal(t, 200, r.status, r.raw)
				d := r.data()
				if d == nil {
					d = r.list()[0]
				}
				var keys []string
				for k := range d {
					keys = append(keys, k)
				}
				slices.Sort(keys)
				assert.Equal(t, tt.wantKeys, keys)
			}
		})
	}
	r := f.do("GET", qPath+"/q?select=-owner", nil)
	require.Equal(t, 200, r.status)
	assert.NotContains(t, r.data(), "owner")
	assert.Contains(t, r.data(), "queueName")
}

// TestSEMPSpecCoverage checks that the spec-checked tests exercised every
// operation the handler implements, with success and error answers.
func TestSEMPSpecCoverage(t *testing.T) {
	f := newSEMPFixture(t)
	const mon = "/SEMP/v2/monitor/msgVpns/default/queues"
	calls := []struct {
		method, path string
		body         any
	}{
		{"GET", qPath, nil},
		{"POST", qPath, map[string]any{"queueName": "q"}},
		{"POST", qPath, map[string]any{"queueName": "q"}}, // already exists
		{"GET", qPath + "/q", nil},
		{"PATCH", qPath + "/q", map[string]any{"owner": "x"}},
		{"PUT", qPath + "/q", map[string]any{"owner": "y"}},
		{"POST", qPath + "/q/subscriptions", map[string]any{"subscriptionTopic": "t"}},
		{"GET", qPath + "/q/subscriptions", nil},
		{"GET", qPath + "/q/subscriptions/t", nil},
		{"GET", mon, nil}, {"GET", mon + "/q", nil}, {"GET", mon + "/q/subscriptions", nil},
		{"DELETE", qPath + "/q/subscriptions/t", nil},
		{"DELETE", qPath + "/q", nil},
	}
	for _, c := range calls {
		f.do(c.method, c.path, c.body)
	}
	// The second pass meets the deleted queue: every operation on it answers
	// an error (creating ones are left out).
	for _, c := range calls {
		if c.method == "PUT" || (c.method == "POST" && c.path == qPath) {
			continue
		}
		f.do(c.method, c.path, c.body)
	}
	covered := f.spec.covered()
	for _, want := range []string{
		"GET config/msgVpns/{msgVpnName}/queues 200",
		"POST config/msgVpns/{msgVpnName}/queues 200",
		"POST config/msgVpns/{msgVpnName}/queues 400",
		"GET config/msgVpns/{msgVpnName}/queues/{queueName} 200",
		"GET config/msgVpns/{msgVpnName}/queues/{queueName} 404",
		"PATCH config/msgVpns/{msgVpnName}/queues/{queueName} 200",
		"PATCH config/msgVpns/{msgVpnName}/queues/{queueName} 404",
		"PUT config/msgVpns/{msgVpnName}/queues/{queueName} 200",
		"DELETE config/msgVpns/{msgVpnName}/queues/{queueName} 200",
		"DELETE config/msgVpns/{msgVpnName}/queues/{queueName} 404",
		"GET config/msgVpns/{msgVpnName}/queues/{queueName}/subscriptions 200",
		"GET config/msgVpns/{msgVpnName}/queues/{queueName}/subscriptions 404",
		"POST config/msgVpns/{msgVpnName}/queues/{queueName}/subscriptions 200",
		"POST config/msgVpns/{msgVpnName}/queues/{queueName}/subscriptions 404",
		"GET config/msgVpns/{msgVpnName}/queues/{queueName}/subscriptions/{subscriptionTopic} 200",
		"DELETE config/msgVpns/{msgVpnName}/queues/{queueName}/subscriptions/{subscriptionTopic} 200",
		"DELETE config/msgVpns/{msgVpnName}/queues/{queueName}/subscriptions/{subscriptionTopic} 404",
		"GET monitor/msgVpns/{msgVpnName}/queues 200",
		"GET monitor/msgVpns/{msgVpnName}/queues/{queueName} 200",
		"GET monitor/msgVpns/{msgVpnName}/queues/{queueName} 404",
		"GET monitor/msgVpns/{msgVpnName}/queues/{queueName}/subscriptions 200",
	} {
		assert.Contains(t, covered, want)
	}
}

// FuzzSEMPRequest feeds arbitrary methods, paths and bodies to the handler:
// it must never panic, and every answer must be a spec-conformant SEMP
// envelope.
func FuzzSEMPRequest(f *testing.F) {
	for _, seed := range []struct{ method, target, body string }{
		{"GET", qPath, ""},
		{"POST", qPath, `{"queueName":"a/b","accessType":"non-exclusive"}`},
		{"PATCH", qPath + "/seed", `{"maxRedeliveryCount":300}`},
		{"PUT", qPath + "/x%2Fy", `{"owner":"o"}`},
		{"DELETE", qPath + "/seed", ""},
		{"POST", qPath + "/seed/subscriptions", `{"subscriptionTopic":">"}`},
		{"GET", qPath + "/seed/subscriptions/a%2F%3E", ""},
		{"GET", "/SEMP/v2/monitor/msgVpns/default/queues/seed?select=-queueName", ""},
		{"GET", qPath + "?count=1&cursor=c2VlZA", ""},
		{"POST", qPath, `{"queueName":"q","eventBindCountThreshold":7}`},
		{"GET", "/SEMP/v2/config/msgVpns//queues", ""},
	} {
		f.Add(seed.method, seed.target, seed.body)
	}
	f.Fuzz(func(t *testing.T, method, target, body string) {
		if !slices.Contains([]string{"GET", "POST", "PATCH", "PUT", "DELETE"}, method) {
			return
		}
		u, err := url.ParseRequestURI(target)
		if err != nil || !strings.HasPrefix(target, "/") {
			return
		}
		admin := newFakeAdmin("default")
		require.NoError(t, admin.CreateQueue("default", QueueConfig{Name: "seed", Subscriptions: []string{"a/>"}}))
		h := newSEMPHandler(admin, "admin", "pw", nil)
		req := httptest.NewRequest(method, "http://127.0.0.1/", strings.NewReader(body))
		req.URL.Path, req.URL.RawPath, req.URL.RawQuery = u.Path, u.RawPath, u.RawQuery
		req.SetBasicAuth("admin", "pw")
		rr := httptest.NewRecorder()
		h.ServeHTTP(rr, req)
		rec := newSpecRecorder(t)
		for _, p := range rec.check(method, req.URL.EscapedPath(), []byte(body), rr.Code, rr.Header(), rr.Body.Bytes()) {
			t.Errorf("%s %s %q: %s\nresponse: %s", method, target, body, p, rr.Body.String())
		}
	})
}
