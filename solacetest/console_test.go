package solacetest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// consoleClient calls a broker's console as the browser's script does.
type consoleClient struct {
	t    *testing.T
	base string
	hc   *http.Client
}

func newConsoleBroker(t *testing.T) (*Broker, *consoleClient) {
	b := NewTestBroker(t, Config{ConsoleAddr: "127.0.0.1:0", SEMPUser: "admin", SEMPPassword: "s3cret"})
	require.NoError(t, b.CreateQueue("default", QueueConfig{Name: "q1", Subscriptions: []string{"orders/>"}}))
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return b, &consoleClient{t: t, base: b.ConsoleURL(), hc: &http.Client{Jar: jar}}
}

// do sends a request with the SEMP user's credentials (unless set is
// given, which then sets the headers itself) and returns the status and
// body.
func (c *consoleClient) do(method, path, body string, set func(*http.Request)) (int, string) {
	c.t.Helper()
	req, err := http.NewRequestWithContext(c.t.Context(), method, c.base+path, strings.NewReader(body))
	require.NoError(c.t, err)
	if set != nil {
		set(req)
	} else {
		req.SetBasicAuth("admin", "s3cret")
		if method == http.MethodPost {
			req.Header.Set(consoleRequestHeader, "1")
			req.Header.Set("Origin", c.base)
		}
	}
	resp, err := c.hc.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	return resp.StatusCode, string(raw)
}

func (c *consoleClient) state() consoleState {
	c.t.Helper()
	status, body := c.do("GET", "/api/state", "", nil)
	require.Equal(c.t, 200, status, body)
	var st consoleState
	require.NoError(c.t, json.Unmarshal([]byte(body), &st))
	return st
}

func TestConsoleLogsInAsTheSEMPUser(t *testing.T) {
	_, c := newConsoleBroker(t)
	tests := []struct {
		name string
		set  func(*http.Request)
		want int
	}{
		{name: "no credentials", set: func(*http.Request) {}, want: 401},
		{name: "wrong password", set: func(r *http.Request) { r.SetBasicAuth("admin", "admin") }, want: 401},
		{name: "the SEMP user", set: func(r *http.Request) { r.SetBasicAuth("admin", "s3cret") }, want: 200},
		{name: "then the session cookie alone", set: func(*http.Request) {}, want: 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, _ := c.do("GET", "/api/state", "", tc.set)
			require.Equal(t, tc.want, status)
		})
	}
	u, err := http.NewRequest("GET", c.base, nil)
	require.NoError(t, err)
	require.Len(t, c.hc.Jar.Cookies(u.URL), 1)
	require.Equal(t, consoleCookieName, c.hc.Jar.Cookies(u.URL)[0].Name)
}

func TestConsolePagesEscapeWhatTheyShow(t *testing.T) {
	b, c := newConsoleBroker(t)
	require.NoError(t, b.CreateQueue("default", QueueConfig{Name: `<b>q"x</b>`}))
	for _, path := range []string{"/", "/queues", "/topics", "/publish", "/vpns/default/queues/q1", "/static/console.js", "/static/console.css"} {
		t.Run(path, func(t *testing.T) {
			status, body := c.do("GET", path, "", nil)
			require.Equal(t, 200, status, body)
			require.NotEmpty(t, body)
		})
	}
	status, body := c.do("GET", "/vpns/default/queues/%3Cb%3Eq%22x%3C%2Fb%3E", "", nil)
	require.Equal(t, 200, status)
	require.NotContains(t, body, `<b>q"x</b>`)
	require.Contains(t, body, `&lt;b&gt;q&#34;x&lt;/b&gt;`)
	status, _ = c.do("GET", "/vpns/default/queues/nope", "", nil)
	require.Equal(t, 404, status)

	resp, err := c.hc.Get(c.base + "/")
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Contains(t, resp.Header.Get("Content-Security-Policy"), "default-src 'self'", "no inline script may run")
}

func TestConsoleActionsNeedTheConsolesOwnRequests(t *testing.T) {
	b, c := newConsoleBroker(t)
	_, err := b.Publish("default", Message{Queue: "q1", Payload: []byte("keep")})
	require.NoError(t, err)
	auth := func(r *http.Request) { r.SetBasicAuth("admin", "s3cret") }
	tests := []struct {
		name string
		set  func(*http.Request)
	}{
		{name: "a form post without the header", set: func(r *http.Request) {
			auth(r)
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}},
		{name: "another origin", set: func(r *http.Request) {
			auth(r)
			r.Header.Set(consoleRequestHeader, "1")
			r.Header.Set("Origin", "http://evil.example")
		}},
		{name: "a cross-site fetch", set: func(r *http.Request) {
			auth(r)
			r.Header.Set(consoleRequestHeader, "1")
			r.Header.Set("Sec-Fetch-Site", "cross-site")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, body := c.do("POST", "/api/vpns/default/queues/q1/purge", "{}", tc.set)
			require.Equal(t, 403, status, body)
			require.Equal(t, []string{"keep"}, QueuePayloads(t, b, "default", "q1"))
		})
	}
	status, _ := c.do("GET", "/api/vpns/default/queues/q1/purge", "", nil)
	require.Equal(t, 405, status, "a link cannot purge")
}

func TestConsoleShowsAndChangesTheBroker(t *testing.T) {
	b, c := newConsoleBroker(t)
	svc := connect(t, b, nil)
	publishReq := `{"vpn":"default","destinationType":"topic","destination":"orders/1","payload":"<script>alert(1)</script>",
		"persistent":true,"priority":3,"correlationId":"c-1","userProperties":{"k":"v"}}`
	status, body := c.do("POST", "/api/publish", publishReq, nil)
	require.Equal(t, 200, status, body)
	require.JSONEq(t, `{"queues":1}`, body)
	publish(t, svc, startPublisher(t, svc), "orders/2", `{"id":2}`)

	st := c.state()
	require.Len(t, st.VPNs, 1)
	require.Len(t, st.VPNs[0].Clients, 1)
	require.Len(t, st.VPNs[0].Queues, 1)
	q := st.VPNs[0].Queues[0]
	require.Equal(t, "q1", q.Name)
	require.Equal(t, 2, q.Stats.SpooledMsgCount)
	require.Equal(t, []string{"orders/>"}, q.Subscriptions)

	status, body = c.do("GET", "/api/vpns/default/queues/q1/msgs", "", nil)
	require.Equal(t, 200, status, body)
	var browsed struct {
		Total int
		Msgs  []consoleMsg
	}
	require.NoError(t, json.Unmarshal([]byte(body), &browsed))
	require.Equal(t, 2, browsed.Total)
	require.Equal(t, "<script>alert(1)</script>", string(browsed.Msgs[0].Payload))
	require.Equal(t, map[string]any{"CorrelationID": "c-1"}, browsed.Msgs[0].Headers, body)
	require.Equal(t, map[string]any{"k": "v"}, browsed.Msgs[0].UserProperties)
	require.NotContains(t, body, "<script>", "JSON escapes markup too")

	id := strconv.FormatUint(browsed.Msgs[0].MsgID, 10)
	status, _ = c.do("POST", "/api/vpns/default/queues/q1/msgs/"+id+"/delete", "{}", nil)
	require.Equal(t, 200, status)
	status, _ = c.do("POST", "/api/vpns/default/queues/q1/msgs/"+id+"/delete", "{}", nil)
	require.Equal(t, 404, status)
	require.Equal(t, []string{`{"id":2}`}, QueuePayloads(t, b, "default", "q1"))

	status, body = c.do("POST", "/api/vpns/default/queues/q1/purge", "{}", nil)
	require.Equal(t, 200, status)
	require.JSONEq(t, `{"deleted":1}`, body)
	require.Zero(t, c.state().VPNs[0].Queues[0].Stats.SpooledMsgCount)

	status, body = c.do("POST", "/api/faults", `{"fault":"pause-delivery"}`, nil)
	require.Equal(t, 200, status, body)
	require.True(t, b.Faults().State().DeliveryPaused)
	require.True(t, c.state().Faults.DeliveryPaused)
	status, _ = c.do("POST", "/api/faults", `{"fault":"resume-delivery"}`, nil)
	require.Equal(t, 200, status)
	require.False(t, b.Faults().State().DeliveryPaused)
}

func TestConsoleRefusesBadRequestsNamingTheField(t *testing.T) {
	_, c := newConsoleBroker(t)
	tests := []struct {
		name, path, body, want string
	}{
		{name: "destination type", path: "/api/publish", body: `{"vpn":"default","destinationType":"pigeon","destination":"a"}`, want: "destinationType"},
		{name: "unknown queue", path: "/api/publish", body: `{"vpn":"default","destinationType":"queue","destination":"nope"}`, want: "Queue Not Found"},
		{name: "priority", path: "/api/publish", body: `{"vpn":"default","destinationType":"topic","destination":"a","priority":256}`, want: "priority 256"},
		{name: "not JSON", path: "/api/publish", body: `vpn=default`, want: "reading the request"},
		{name: "unknown fault", path: "/api/faults", body: `{"fault":"meteor"}`, want: `fault "meteor"`},
		{name: "negative fault arg", path: "/api/faults", body: `{"fault":"refuse-logins","arg":-1}`, want: "arg must not be negative"},
		{name: "purge of an unknown queue", path: "/api/vpns/default/queues/nope/purge", body: `{}`, want: "unknown queue"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, body := c.do("POST", tc.path, tc.body, nil)
			require.GreaterOrEqual(t, status, 400)
			var e map[string]string
			require.NoError(t, json.Unmarshal([]byte(body), &e), body)
			require.Contains(t, e["error"], tc.want)
		})
	}
}

func TestConsoleAddressTaken(t *testing.T) {
	first := NewTestBroker(t, Config{ConsoleAddr: "127.0.0.1:0"})
	taken := strings.TrimPrefix(first.ConsoleURL(), "http://")
	cases := []struct {
		name     string
		optional bool
		wantErr  string
	}{
		{name: "asked for: the broker does not start", wantErr: "listening for the web console on " + taken},
		{name: "optional: the broker starts without it", optional: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Start(Config{ConsoleAddr: taken, ConsoleOptional: tc.optional})
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			t.Cleanup(func() { _ = b.Close() })
			require.Empty(t, b.ConsoleURL())
			require.NotEmpty(t, b.SMFURL())
		})
	}
}
