package semp

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pagedServer serves n queues named q000.. from the config and monitor
// collection endpoints in pages of at most limit objects, with cursors.
func pagedServer(t *testing.T, n, limit int, cursorOnly bool) (http.Handler, *atomic.Int32) {
	t.Helper()
	var pages atomic.Int32
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pages.Add(1)
		start := 0
		if cur := r.URL.Query().Get("cursor"); cur != "" {
			var err error
			start, err = strconv.Atoi(cur)
			if err != nil {
				sempError(w, r, 400, 11, "INVALID_PARAMETER", "bad cursor")
				return
			}
		}
		count := limit
		if s := r.URL.Query().Get("count"); s != "" {
			c, _ := strconv.Atoi(s)
			count = min(c, limit)
		}
		end := min(start+count, n)
		data := []map[string]any{}
		cols := []map[string]any{}
		for i := start; i < end; i++ {
			data = append(data, map[string]any{"queueName": fmt.Sprintf("q%03d", i), "subscriptionTopic": fmt.Sprintf("t/%d", i), "accessType": "exclusive"})
			cols = append(cols, map[string]any{"txFlows": map[string]any{"count": i}})
		}
		meta := map[string]any{"responseCode": 200, "request": map[string]any{"method": "GET"}, "count": n}
		if end < n {
			next := url.URL{Scheme: "http", Host: r.Host, Path: r.URL.Path, RawQuery: url.Values{"count": {strconv.Itoa(count)}, "cursor": {strconv.Itoa(end)}}.Encode()}
			paging := map[string]any{"nextPageUri": next.String()}
			if !cursorOnly {
				paging["cursorQuery"] = strconv.Itoa(end)
			} else {
				paging["cursorQuery"] = ""
			}
			meta["paging"] = paging
		}
		writeJSON(w, 200, map[string]any{"data": data, "collections": cols, "meta": meta})
	}), &pages
}

func TestListPaging(t *testing.T) {
	tests := []struct {
		name       string
		n, limit   int
		uriOnly    bool
		wantPages  int32
		listSubs   bool
		listStatus bool
	}{
		{name: "empty", n: 0, limit: 10, wantPages: 1},
		{name: "one page", n: 7, limit: 10, wantPages: 1},
		{name: "exact pages", n: 30, limit: 10, wantPages: 3},
		{name: "ragged", n: 31, limit: 10, wantPages: 4},
		{name: "next page uri only", n: 25, limit: 10, uriOnly: true, wantPages: 3},
		{name: "subscriptions", n: 12, limit: 5, wantPages: 3, listSubs: true},
		{name: "monitor", n: 12, limit: 5, wantPages: 3, listStatus: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, pages := pagedServer(t, tt.n, tt.limit, tt.uriOnly)
			c, _ := newTestClient(t, h)
			var got []string
			switch {
			case tt.listSubs:
				subs, err := c.ListSubscriptions(t.Context(), "default", "q")
				require.NoError(t, err)
				got = subs
			case tt.listStatus:
				st, err := c.ListQueueStatuses(t.Context(), "default")
				require.NoError(t, err)
				for i, s := range st {
					got = append(got, s.QueueName)
					assert.Equal(t, int64(i), s.BindCount, "collections align with data across pages")
				}
			default:
				qs, err := c.ListQueues(t.Context(), "default")
				require.NoError(t, err)
				for _, q := range qs {
					got = append(got, q.QueueName)
				}
			}
			require.Len(t, got, tt.n)
			for i, name := range got {
				if tt.listSubs {
					assert.Equal(t, fmt.Sprintf("t/%d", i), name)
				} else {
					assert.Equal(t, fmt.Sprintf("q%03d", i), name)
				}
			}
			assert.Equal(t, tt.wantPages, pages.Load())
		})
	}
}

func TestListRepeatedCursorFails(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"data": []any{map[string]any{"queueName": "q"}}, "meta": map[string]any{
			"responseCode": 200, "request": map[string]any{"method": "GET"},
			"paging": map[string]any{"cursorQuery": "same", "nextPageUri": "http://x/?cursor=same"},
		}})
	})
	c, _ := newTestClient(t, h)
	_, err := c.ListQueues(t.Context(), "default")
	require.ErrorContains(t, err, "repeated paging cursor")
}

// fakeQueues is a scripted config API for create/update/delete semantics.
type fakeQueues struct {
	mu     sync.Mutex
	queues map[string]map[string]any
	subs   map[string]map[string]bool
	// failNext makes the next request of that method fail with the given
	// status after applying it, like a broker that commits and then dies.
	failNext map[string]int
	bodies   []string
}

func newFakeQueues() *fakeQueues {
	return &fakeQueues{queues: map[string]map[string]any{}, subs: map[string]map[string]bool{}, failNext: map[string]int{}}
}

func (f *fakeQueues) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var body map[string]any
	if r.Body != nil {
		raw := make([]byte, 0, 512)
		buf := make([]byte, 512)
		for {
			n, err := r.Body.Read(buf)
			raw = append(raw, buf[:n]...)
			if err != nil {
				break
			}
		}
		if len(raw) > 0 {
			f.bodies = append(f.bodies, string(raw))
			if err := json.Unmarshal(raw, &body); err != nil {
				sempError(w, r, 400, 11, "INVALID_PARAMETER", err.Error())
				return
			}
		}
	}
	fail := f.failNext[r.Method]
	delete(f.failNext, r.Method)
	respond := func(code int, errCode int, status, desc string, data any) {
		if fail != 0 {
			sempError(w, r, fail, 0, "", "internal error after commit")
			return
		}
		if code != 200 {
			sempError(w, r, code, errCode, status, desc)
			return
		}
		sempOK(w, r, data)
	}
	// Paths: /SEMP/v2/config/msgVpns/v/queues[/q[/subscriptions[/t]]]
	var segs []string
	for _, s := range splitEscaped(r.URL.EscapedPath()) {
		u, _ := url.PathUnescape(s)
		segs = append(segs, u)
	}
	segs = segs[5:] // after "", SEMP, v2, config, msgVpns
	switch {
	case len(segs) == 2 && r.Method == http.MethodPost:
		name, _ := body["queueName"].(string)
		if _, ok := f.queues[name]; ok {
			respond(400, 10, "ALREADY_EXISTS", "Object already exists", nil)
			return
		}
		q := map[string]any{"accessType": "exclusive", "ingressEnabled": false, "egressEnabled": false, "msgVpnName": segs[0]}
		for k, v := range body {
			q[k] = v
		}
		f.queues[name] = q
		respond(200, 0, "", "", q)
	case len(segs) == 3:
		q, ok := f.queues[segs[2]]
		if !ok {
			respond(400, 6, "NOT_FOUND", "Could not find match for queue", nil)
			return
		}
		switch r.Method {
		case http.MethodGet:
			respond(200, 0, "", "", q)
		case http.MethodPatch:
			for k, v := range body {
				q[k] = v
			}
			respond(200, 0, "", "", q)
		case http.MethodDelete:
			delete(f.queues, segs[2])
			respond(200, 0, "", "", nil)
		}
	case len(segs) == 4 && r.Method == http.MethodPost:
		topic, _ := body["subscriptionTopic"].(string)
		if f.subs[segs[2]] == nil {
			f.subs[segs[2]] = map[string]bool{}
		}
		if f.subs[segs[2]][topic] {
			respond(400, 10, "ALREADY_EXISTS", "Object already exists", nil)
			return
		}
		f.subs[segs[2]][topic] = true
		respond(200, 0, "", "", body)
	case len(segs) == 5 && r.Method == http.MethodDelete:
		if !f.subs[segs[2]][segs[4]] {
			respond(400, 6, "NOT_FOUND", "Could not find match for subscription", nil)
			return
		}
		delete(f.subs[segs[2]], segs[4])
		respond(200, 0, "", "", nil)
	default:
		sempError(w, r, 404, 6, "NOT_FOUND", "no such resource")
	}
}

func splitEscaped(p string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(p); i++ {
		if i == len(p) || p[i] == '/' {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return out
}

func TestQueueLifecycle(t *testing.T) {
	f := newFakeQueues()
	c, _ := newTestClient(t, f)
	ctx := t.Context()

	q, err := c.CreateQueue(ctx, "default", Queue{QueueName: "orders/eu", AccessType: AccessTypeNonExclusive, IngressEnabled: Bool(true), MaxRedeliveryCount: Int64(3)})
	require.NoError(t, err)
	assert.Equal(t, "orders/eu", q.QueueName)
	assert.Equal(t, AccessTypeNonExclusive, q.AccessType)
	assert.Equal(t, Bool(true), q.IngressEnabled)
	assert.Equal(t, Bool(false), q.EgressEnabled, "broker default comes back")
	assert.Equal(t, Int64(3), q.MaxRedeliveryCount)
	assert.JSONEq(t, `{"queueName":"orders/eu","accessType":"non-exclusive","ingressEnabled":true,"maxRedeliveryCount":3}`, f.bodies[0],
		"unset fields are omitted so the broker applies its defaults")

	_, err = c.CreateQueue(ctx, "default", Queue{QueueName: "orders/eu"})
	require.True(t, IsAlreadyExists(err), "got %v", err)

	created, err := c.EnsureQueue(ctx, "default", Queue{QueueName: "orders/eu"})
	require.NoError(t, err)
	assert.False(t, created)
	created, err = c.EnsureQueue(ctx, "default", Queue{QueueName: "other"})
	require.NoError(t, err)
	assert.True(t, created)

	q, err = c.UpdateQueue(ctx, "default", Queue{QueueName: "orders/eu", EgressEnabled: Bool(true)})
	require.NoError(t, err)
	assert.Equal(t, Bool(true), q.EgressEnabled)
	assert.Equal(t, AccessTypeNonExclusive, q.AccessType, "PATCH leaves unset fields alone")

	got, err := c.GetQueue(ctx, "default", "orders/eu")
	require.NoError(t, err)
	assert.Equal(t, q, got)

	require.NoError(t, c.AddSubscription(ctx, "default", "orders/eu", "orders/>"))
	require.NoError(t, c.AddSubscription(ctx, "default", "orders/eu", "orders/>"), "already subscribed is success")
	require.NoError(t, c.RemoveSubscription(ctx, "default", "orders/eu", "orders/>"))
	err = c.RemoveSubscription(ctx, "default", "orders/eu", "orders/>")
	require.True(t, IsNotFound(err), "removing twice reports not found: %v", err)

	require.NoError(t, c.DeleteQueue(ctx, "default", "orders/eu"))
	_, err = c.GetQueue(ctx, "default", "orders/eu")
	require.True(t, IsNotFound(err), "got %v", err)
	err = c.DeleteQueue(ctx, "default", "orders/eu")
	require.True(t, IsNotFound(err), "deleting a missing queue reports not found: %v", err)
}

// TestRetryAfterAppliedRequest covers a broker that applies a request and
// then fails the response: the retry meets our own object, which must not
// surface as an error.
func TestRetryAfterAppliedRequest(t *testing.T) {
	ctx := t.Context()
	t.Run("create", func(t *testing.T) {
		f := newFakeQueues()
		c, _ := newTestClient(t, f)
		f.failNext[http.MethodPost] = 500
		q, err := c.CreateQueue(ctx, "default", Queue{QueueName: "q", AccessType: AccessTypeNonExclusive})
		require.NoError(t, err)
		assert.Equal(t, AccessTypeNonExclusive, q.AccessType)
	})
	t.Run("create refused with 503 is not ours", func(t *testing.T) {
		f := newFakeQueues()
		c, _ := newTestClient(t, f)
		_, err := c.CreateQueue(ctx, "default", Queue{QueueName: "q"})
		require.NoError(t, err)
		// 503 means the broker did nothing; the later ALREADY_EXISTS is real.
		f.mu.Lock()
		f.failNext[http.MethodPost] = 503
		f.mu.Unlock()
		_, err = c.CreateQueue(ctx, "default", Queue{QueueName: "q"})
		require.True(t, IsAlreadyExists(err), "got %v", err)
	})
	t.Run("delete", func(t *testing.T) {
		f := newFakeQueues()
		c, _ := newTestClient(t, f)
		_, err := c.CreateQueue(ctx, "default", Queue{QueueName: "q"})
		require.NoError(t, err)
		f.mu.Lock()
		f.failNext[http.MethodDelete] = 502
		f.mu.Unlock()
		require.NoError(t, c.DeleteQueue(ctx, "default", "q"))
		_, err = c.GetQueue(ctx, "default", "q")
		require.True(t, IsNotFound(err))
	})
	t.Run("remove subscription", func(t *testing.T) {
		f := newFakeQueues()
		c, _ := newTestClient(t, f)
		require.NoError(t, c.AddSubscription(ctx, "default", "q", "a/b"))
		f.mu.Lock()
		f.failNext[http.MethodDelete] = 500
		f.mu.Unlock()
		require.NoError(t, c.RemoveSubscription(ctx, "default", "q", "a/b"))
	})
}

func TestQueueStatusDecoding(t *testing.T) {
	tests := []struct {
		name string
		body string
		want QueueStatus
	}{
		{
			name: "with collections",
			body: `{"data":{"queueName":"q","msgVpnName":"default","accessType":"non-exclusive","durable":true,
				"ingressEnabled":true,"egressEnabled":false,"spooledMsgCount":99,"msgSpoolUsage":2048,"maxMsgSpoolUsage":5000,
				"txUnackedMsgCount":2,"redeliveredMsgCount":4,"maxRedeliveryCount":3,"deadMsgQueue":"#DEAD_MSG_QUEUE",
				"bindRequestCount":10},
				"collections":{"msgs":{"count":5},"txFlows":{"count":2},"subscriptions":{"count":3}},
				"links":{"uri":"x"},"meta":{"responseCode":200,"request":{"method":"GET"}}}`,
			want: QueueStatus{QueueName: "q", MsgVpnName: "default", AccessType: "non-exclusive", Durable: true,
				IngressEnabled: true, SpooledMsgCount: 5, MsgSpoolUsage: 2048, MaxMsgSpoolUsage: 5000,
				BindCount: 2, TxUnackedMsgCount: 2, RedeliveredMsgCount: 4, MaxRedeliveryCount: 3,
				DeadMsgQueue: "#DEAD_MSG_QUEUE", SubscriptionCount: 3},
		},
		{
			name: "without collections falls back to spooledMsgCount",
			body: `{"data":{"queueName":"q","spooledMsgCount":7,"msgSpoolUsage":70},"meta":{"responseCode":200,"request":{"method":"GET"}}}`,
			want: QueueStatus{QueueName: "q", SpooledMsgCount: 7, MsgSpoolUsage: 70},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				require.Equal(t, "/SEMP/v2/monitor/msgVpns/default/queues/q", r.URL.Path)
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(tt.body))
			})
			c, _ := newTestClient(t, h)
			st, err := c.QueueStatus(t.Context(), "default", "q")
			require.NoError(t, err)
			assert.Equal(t, tt.want, *st)
		})
	}
}
