package semp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	testUser = "admin"
	testPass = "s3cr3t-Pa55"
)

// newTestClient points a Client at h with fast retries.
func newTestClient(t *testing.T, h http.Handler, mod ...func(*Config)) (*Client, *httptest.Server) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	cfg := Config{URL: srv.URL, Username: testUser, Password: testPass, Timeout: 5 * time.Second}
	for _, m := range mod {
		m(&cfg)
	}
	c, err := New(cfg)
	require.NoError(t, err)
	c.backoff = func(int) time.Duration { return time.Millisecond }
	return c, srv
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func sempError(w http.ResponseWriter, r *http.Request, httpCode, code int, status, desc string) {
	writeJSON(w, httpCode, map[string]any{"meta": map[string]any{
		"error":        map[string]any{"code": code, "status": status, "description": desc},
		"request":      map[string]any{"method": r.Method, "uri": r.URL.String()},
		"responseCode": httpCode,
	}})
}

func sempOK(w http.ResponseWriter, r *http.Request, data any) {
	writeJSON(w, http.StatusOK, map[string]any{"data": data, "meta": map[string]any{
		"request": map[string]any{"method": r.Method, "uri": r.URL.String()}, "responseCode": 200,
	}})
}

func TestNewValidatesConfig(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
		base    string
		user    string
		pass    string
	}{
		{name: "empty", cfg: Config{}, wantErr: "URL is required"},
		{name: "scheme", cfg: Config{URL: "ftp://h"}, wantErr: "not http or https"},
		{name: "no host", cfg: Config{URL: "http://"}, wantErr: "no host"},
		{name: "bad url hides password", cfg: Config{URL: "http://u:" + testPass + "@h:99999%"}, wantErr: "not a valid URL"},
		{name: "plain", cfg: Config{URL: "http://127.0.0.1:8080", Username: "a", Password: "b"}, base: "http://127.0.0.1:8080", user: "a", pass: "b"},
		{name: "SEMP suffix", cfg: Config{URL: "https://h/SEMP/v2/"}, base: "https://h"},
		{name: "SEMP only", cfg: Config{URL: "https://h/proxy/SEMP"}, base: "https://h/proxy"},
		{name: "userinfo", cfg: Config{URL: "http://u:p@h"}, base: "http://h", user: "u", pass: "p"},
		{name: "explicit creds win", cfg: Config{URL: "http://u:p@h", Username: "x", Password: "y"}, base: "http://h", user: "x", pass: "y"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tt.cfg)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				assert.NotContains(t, err.Error(), testPass)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.base, c.base.String())
			assert.Equal(t, tt.user, c.user)
			assert.Equal(t, tt.pass, c.pass)
			assert.Equal(t, defaultTimeout, c.timeout)
			assert.Equal(t, defaultMaxRetries, c.maxRetries)
			assert.NotNil(t, c.http.Jar)
		})
	}
}

func TestSessionCookieReusedWithBasicAuth(t *testing.T) {
	var mu sync.Mutex
	var cookies []string
	var authOK []bool
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		mu.Lock()
		authOK = append(authOK, ok && u == testUser && p == testPass)
		if ck, err := r.Cookie("sempSession"); err == nil {
			cookies = append(cookies, ck.Value)
		} else {
			cookies = append(cookies, "")
			http.SetCookie(w, &http.Cookie{Name: "sempSession", Value: "sess-1", Path: "/", HttpOnly: true})
		}
		mu.Unlock()
		sempOK(w, r, map[string]any{"queueName": "q"})
	})
	c, _ := newTestClient(t, h)
	for range 3 {
		_, err := c.GetQueue(t.Context(), "default", "q")
		require.NoError(t, err)
	}
	assert.Equal(t, []string{"", "sess-1", "sess-1"}, cookies)
	assert.Equal(t, []bool{true, true, true}, authOK)
}

func TestCustomHTTPClientGetsJar(t *testing.T) {
	hc := &http.Client{}
	c, err := New(Config{URL: "http://127.0.0.1:1", HTTPClient: hc})
	require.NoError(t, err)
	assert.NotNil(t, c.http.Jar)
	assert.Nil(t, hc.Jar, "the caller's client is not modified")
}

func TestRetries(t *testing.T) {
	tests := []struct {
		name       string
		maxRetries int
		statuses   []int // per attempt; the last repeats
		wantCalls  int
		wantErr    bool
		wantStatus int
	}{
		{name: "503 then ok", statuses: []int{503, 503, 200}, wantCalls: 3},
		{name: "429 then ok", statuses: []int{429, 200}, wantCalls: 2},
		{name: "529 no session then ok", statuses: []int{529, 200}, wantCalls: 2},
		{name: "500 exhausts default retries", statuses: []int{500}, wantCalls: 4, wantErr: true, wantStatus: 500},
		{name: "custom retries", maxRetries: 1, statuses: []int{502}, wantCalls: 2, wantErr: true, wantStatus: 502},
		{name: "retries disabled", maxRetries: -1, statuses: []int{503}, wantCalls: 1, wantErr: true, wantStatus: 503},
		{name: "400 not retried", statuses: []int{400}, wantCalls: 1, wantErr: true, wantStatus: 400},
		{name: "401 not retried", statuses: []int{401}, wantCalls: 1, wantErr: true, wantStatus: 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := int(calls.Add(1))
				st := tt.statuses[min(n, len(tt.statuses))-1]
				if st == 200 {
					sempOK(w, r, map[string]any{"queueName": "q"})
					return
				}
				sempError(w, r, st, 11, "FAIL", fmt.Sprintf("attempt %d", n))
			})
			c, _ := newTestClient(t, h, func(c *Config) { c.MaxRetries = tt.maxRetries })
			q, err := c.GetQueue(t.Context(), "default", "q")
			assert.Equal(t, tt.wantCalls, int(calls.Load()))
			if !tt.wantErr {
				require.NoError(t, err)
				assert.Equal(t, "q", q.QueueName)
				return
			}
			var se *Error
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tt.wantStatus, se.HTTPStatus)
			assert.Equal(t, fmt.Sprintf("attempt %d", tt.wantCalls), se.Description, "the last attempt's error is reported")
		})
	}
}

func TestRetryConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())

	c, err := New(Config{URL: "http://" + addr, Username: testUser, Password: testPass, MaxRetries: 2})
	require.NoError(t, err)
	var waits atomic.Int32
	c.backoff = func(int) time.Duration { waits.Add(1); return time.Millisecond }
	_, err = c.GetQueue(t.Context(), "default", "q")
	require.Error(t, err)
	assert.Equal(t, int32(2), waits.Load(), "two retries after the first refusal")
	assert.Contains(t, err.Error(), "after 3 attempts")
	assert.NotContains(t, err.Error(), testPass)
}

func TestRetryAttemptTimeout(t *testing.T) {
	var calls atomic.Int32
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			select { // hang until the client gives up on this attempt
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		sempOK(w, r, map[string]any{"queueName": "q"})
	})
	c, _ := newTestClient(t, h, func(c *Config) { c.Timeout = 50 * time.Millisecond })
	q, err := c.GetQueue(t.Context(), "default", "q")
	require.NoError(t, err)
	assert.Equal(t, "q", q.QueueName)
	assert.Equal(t, int32(2), calls.Load())
}

func TestRetryHonoursContext(t *testing.T) {
	var calls atomic.Int32
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		sempError(w, r, 503, 0, "", "busy")
	})
	c, _ := newTestClient(t, h)
	waiting := make(chan struct{})
	c.backoff = func(int) time.Duration { close(waiting); return time.Hour }
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { _, err := c.GetQueue(ctx, "default", "q"); done <- err }()
	<-waiting
	cancel()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
		assert.Contains(t, err.Error(), "busy", "the error names what was being retried")
	case <-time.After(5 * time.Second):
		t.Fatal("GetQueue did not return after its context was cancelled")
	}
	assert.Equal(t, int32(1), calls.Load())
}

func TestRetryAfterHeader(t *testing.T) {
	var calls atomic.Int32
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "0")
			sempError(w, r, 429, 0, "", "slow down")
			return
		}
		sempOK(w, r, map[string]any{"queueName": "q"})
	})
	c, _ := newTestClient(t, h)
	c.backoff = func(int) time.Duration { return time.Hour } // Retry-After must win
	_, err := c.GetQueue(t.Context(), "default", "q")
	require.NoError(t, err)
	assert.Equal(t, int32(2), calls.Load())
}

func TestErrorDecoding(t *testing.T) {
	tests := []struct {
		name          string
		handler       http.HandlerFunc
		want          Error
		notFound      bool
		alreadyExists bool
		unauthorized  bool
		text          []string
	}{
		{
			name: "not found 404",
			handler: func(w http.ResponseWriter, r *http.Request) {
				sempError(w, r, 404, 6, "NOT_FOUND", `Could not find match for queue "q"`)
			},
			want:     Error{HTTPStatus: 404, Code: 6, Status: "NOT_FOUND", Description: `Could not find match for queue "q"`},
			notFound: true,
			text:     []string{"HTTP 404", "NOT_FOUND", "code 6", `Could not find match for queue "q"`, "GET /SEMP/v2/config/msgVpns/default/queues/q"},
		},
		{
			name: "not found as real brokers send it (400)",
			handler: func(w http.ResponseWriter, r *http.Request) {
				sempError(w, r, 400, 6, "NOT_FOUND", "gone")
			},
			want:     Error{HTTPStatus: 400, Code: 6, Status: "NOT_FOUND", Description: "gone"},
			notFound: true,
		},
		{
			name: "already exists",
			handler: func(w http.ResponseWriter, r *http.Request) {
				sempError(w, r, 400, 10, "ALREADY_EXISTS", "Object already exists")
			},
			want:          Error{HTTPStatus: 400, Code: 10, Status: "ALREADY_EXISTS", Description: "Object already exists"},
			alreadyExists: true,
		},
		{
			name: "unauthorized",
			handler: func(w http.ResponseWriter, r *http.Request) {
				sempError(w, r, 401, 8, "UNAUTHORIZED", "bad credentials")
			},
			want:         Error{HTTPStatus: 401, Code: 8, Status: "UNAUTHORIZED", Description: "bad credentials"},
			unauthorized: true,
		},
		{
			name: "plain 404 without envelope",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				http.Error(w, "<html>\n<body>Not   here</body></html>", 404)
			},
			want:     Error{HTTPStatus: 404, Description: "<html> <body>Not here</body></html>"},
			notFound: true,
			text:     []string{"HTTP 404 Not Found", "Not here"},
		},
		{
			name: "long proxy page is cut",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				http.Error(w, strings.Repeat("é", 500), 418)
			},
			want: Error{HTTPStatus: 418, Description: strings.Repeat("é", 100) + "..."},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newTestClient(t, tt.handler)
			_, err := c.GetQueue(t.Context(), "default", "q")
			var se *Error
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tt.want.HTTPStatus, se.HTTPStatus)
			assert.Equal(t, tt.want.Code, se.Code)
			assert.Equal(t, tt.want.Status, se.Status)
			assert.Equal(t, tt.want.Description, se.Description)
			assert.Equal(t, http.MethodGet, se.Method)
			assert.Equal(t, "/SEMP/v2/config/msgVpns/default/queues/q", se.Path)
			assert.Equal(t, tt.notFound, IsNotFound(err))
			assert.Equal(t, tt.alreadyExists, IsAlreadyExists(err))
			assert.Equal(t, tt.unauthorized, IsUnauthorized(err))
			for _, s := range tt.text {
				assert.Contains(t, err.Error(), s)
			}
			assert.NotContains(t, err.Error(), testPass)
		})
	}
	assert.False(t, IsNotFound(nil))
	assert.False(t, IsNotFound(io.EOF))
	assert.False(t, IsAlreadyExists(fmt.Errorf("wrapped: %w", io.EOF)))
	assert.True(t, IsNotFound(fmt.Errorf("wrapped: %w", &Error{Status: StatusNotFound})))
}

// TestPasswordNeverInErrors drives every failure path with the password in
// the URL and the config and checks no error text carries it.
func TestPasswordNeverInErrors(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sempError(w, r, 401, 8, "UNAUTHORIZED", "rejected")
	})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := ln.Addr().String()
	require.NoError(t, ln.Close())

	for _, base := range []string{srv.URL, "http://" + dead} {
		withUserinfo := strings.Replace(base, "http://", "http://"+testUser+":"+testPass+"@", 1)
		for _, cfg := range []Config{
			{URL: withUserinfo, MaxRetries: 1},
			{URL: base, Username: testUser, Password: testPass, MaxRetries: 1},
		} {
			c, err := New(cfg)
			require.NoError(t, err)
			c.backoff = func(int) time.Duration { return time.Millisecond }
			_, err = c.GetQueue(t.Context(), "default", "q")
			require.Error(t, err)
			assert.NotContains(t, err.Error(), testPass)
			assert.NotContains(t, fmt.Sprintf("%+v %#v", err, err), testPass)
		}
	}
}

func TestPathEscaping(t *testing.T) {
	tests := []struct {
		name        string
		call        func(c *Client) error
		wantMethod  string
		wantEscaped string
	}{
		{
			name:        "queue with slash and space",
			call:        func(c *Client) error { _, err := c.GetQueue(t.Context(), "my vpn", "orders/eu west"); return err },
			wantMethod:  http.MethodGet,
			wantEscaped: "/SEMP/v2/config/msgVpns/my%20vpn/queues/orders%2Feu%20west",
		},
		{
			name: "topic with wildcards",
			call: func(c *Client) error {
				return c.RemoveSubscription(t.Context(), "default", "q/1", "a/*/b/>")
			},
			wantMethod:  http.MethodDelete,
			wantEscaped: "/SEMP/v2/config/msgVpns/default/queues/q%2F1/subscriptions/a%2F%2A%2Fb%2F%3E",
		},
		{
			name: "topic with hash and percent",
			call: func(c *Client) error {
				return c.RemoveSubscription(t.Context(), "default", "q", "#share/g/x%y?z")
			},
			wantMethod:  http.MethodDelete,
			wantEscaped: "/SEMP/v2/config/msgVpns/default/queues/q/subscriptions/%23share%2Fg%2Fx%25y%3Fz",
		},
		{
			name:        "monitor",
			call:        func(c *Client) error { _, err := c.QueueStatus(t.Context(), "default", "a/b"); return err },
			wantMethod:  http.MethodGet,
			wantEscaped: "/SEMP/v2/monitor/msgVpns/default/queues/a%2Fb",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := make(chan [2]string, 1)
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got <- [2]string{r.Method, r.URL.EscapedPath()}
				sempOK(w, r, map[string]any{"queueName": "x"})
			})
			c, _ := newTestClient(t, h)
			require.NoError(t, tt.call(c))
			g := <-got
			assert.Equal(t, tt.wantMethod, g[0])
			assert.Equal(t, tt.wantEscaped, g[1])
		})
	}
}

func TestEmptyNamesRejected(t *testing.T) {
	c, err := New(Config{URL: "http://127.0.0.1:1"})
	require.NoError(t, err)
	ctx := t.Context()
	for name, call := range map[string]func() error{
		"GetQueue":           func() error { _, err := c.GetQueue(ctx, "", "q"); return err },
		"CreateQueue":        func() error { _, err := c.CreateQueue(ctx, "v", Queue{}); return err },
		"DeleteQueue":        func() error { return c.DeleteQueue(ctx, "v", "") },
		"AddSubscription":    func() error { return c.AddSubscription(ctx, "v", "q", "") },
		"ListSubscriptions":  func() error { _, err := c.ListSubscriptions(ctx, "v", ""); return err },
		"RemoveSubscription": func() error { return c.RemoveSubscription(ctx, "", "q", "t") },
		"QueueStatus":        func() error { _, err := c.QueueStatus(ctx, "v", ""); return err },
		"ListQueues":         func() error { _, err := c.ListQueues(ctx, ""); return err },
	} {
		err := call()
		require.ErrorContains(t, err, "empty name", name)
	}
}
