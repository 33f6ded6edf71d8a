package solacetest

// Tests of the health-check listener and of the SEMP resources beyond
// queues, against a running Broker and the real Go client, every SEMP
// exchange checked against the spec.

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging"
	"solace.dev/go/messaging/pkg/solace/config"
	"solace.dev/go/messaging/pkg/solace/resource"
)

// brokerSEMP sends SEMP requests to a running broker as admin/admin and
// checks each exchange against the spec.
type brokerSEMP struct {
	t    *testing.T
	base string
	hc   *http.Client
}

func newBrokerSEMP(t *testing.T, b *Broker) *brokerSEMP {
	rec := newSpecRecorder(t)
	return &brokerSEMP{t: t, base: b.SEMPURL(), hc: &http.Client{Transport: rec.transport(http.DefaultTransport)}}
}

// do sends method to path (escaped, below /SEMP/v2) with an optional JSON
// body and returns the status and the decoded body.
func (s *brokerSEMP) do(method, path, body string) (int, map[string]any) {
	s.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(s.t.Context(), method, s.base+"/SEMP/v2/"+path, rd)
	require.NoError(s.t, err)
	req.SetBasicAuth("admin", "admin")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.hc.Do(req)
	require.NoError(s.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(s.t, err)
	var m map[string]any
	require.NoError(s.t, json.Unmarshal(raw, &m), "body: %s", raw)
	return resp.StatusCode, m
}

func errStatusOf(m map[string]any) string {
	meta, _ := m["meta"].(map[string]any)
	e, _ := meta["error"].(map[string]any)
	s, _ := e["status"].(string)
	return s
}

func dataOf(m map[string]any) map[string]any {
	d, _ := m["data"].(map[string]any)
	return d
}

func listOf(m map[string]any) []map[string]any {
	var out []map[string]any
	arr, _ := m["data"].([]any)
	for _, d := range arr {
		out = append(out, d.(map[string]any))
	}
	return out
}

func httpStatus(t *testing.T, method, u string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, u, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type")
}

func TestHealthCheckListener(t *testing.T) {
	b := NewTestBroker(t, Config{HealthAddr: "127.0.0.1:0"})
	require.NotEmpty(t, b.HealthURL())
	for _, tt := range []struct {
		method, path string
		want         int
	}{
		{"GET", "/health-check/direct-active", 200},
		{"GET", "/health-check/guaranteed-active", 200},
		{"GET", "/health-check/standby", 404},
		{"POST", "/health-check/direct-active", 405},
	} {
		got, _ := httpStatus(t, tt.method, b.HealthURL()+tt.path)
		assert.Equal(t, tt.want, got, "%s %s", tt.method, tt.path)
	}
	// A broker that refuses logins is not ready.
	b.Faults().RefuseLogins(time.Minute)
	got, _ := httpStatus(t, "GET", b.HealthURL()+"/health-check/direct-active")
	assert.Equal(t, 503, got)

	assert.Empty(t, NewTestBroker(t, Config{}).HealthURL(), "no listener unless configured")
}

func TestSEMPHelpNeedsNoAuth(t *testing.T) {
	b := NewTestBroker(t, Config{})
	for _, api := range []string{"config", "monitor", "action"} {
		got, ct := httpStatus(t, "GET", b.SEMPURL()+"/SEMP/v2/"+api+"/help/")
		assert.Equal(t, 200, got, api)
		assert.True(t, strings.HasPrefix(ct, "text/html"), ct)
	}
	got, _ := httpStatus(t, "GET", b.SEMPURL()+"/SEMP/v2/config/msgVpns/default")
	assert.Equal(t, 401, got, "the API itself still needs credentials")
}

func TestSEMPMonitorClient(t *testing.T) {
	b := NewTestBroker(t, Config{})
	s := newBrokerSEMP(t, b)
	svc := connect(t, b, config.ServicePropertyMap{config.ClientPropertyApplicationDescription: "my app"})
	name := url.PathEscape(svc.GetApplicationID())

	rcv, err := svc.CreateDirectMessageReceiverBuilder().WithSubscriptions(resource.TopicSubscriptionOf("mon/>")).Build()
	require.NoError(t, err)
	require.NoError(t, rcv.Start())
	defer func() { _ = rcv.Terminate(time.Second) }()
	pub, err := svc.CreateDirectMessagePublisherBuilder().Build()
	require.NoError(t, err)
	require.NoError(t, pub.Start())
	defer func() { _ = pub.Terminate(time.Second) }()
	require.NoError(t, pub.PublishString("hello", resource.TopicOf("mon/1")))
	_, err = rcv.ReceiveMessage(5 * time.Second)
	require.NoError(t, err)

	status, body := s.do("GET", "monitor/msgVpns/default/clients/"+name, "")
	require.Equal(t, 200, status, body)
	d := dataOf(body)
	info := svc.Info() // the API's own idea of itself
	assert.Equal(t, svc.GetApplicationID(), d["clientName"])
	assert.Equal(t, "default", d["clientUsername"])
	assert.Equal(t, "my app", d["description"])
	assert.Equal(t, info.GetAPIVersion(), d["softwareVersion"])
	assert.Equal(t, info.GetAPIBuildDate(), d["softwareDate"])
	assert.Equal(t, info.GetAPIImplementationVendor(), d["platform"])
	assert.Equal(t, 1.0, d["dataRxMsgCount"])
	assert.Equal(t, 1.0, d["dataTxMsgCount"])
	assert.Positive(t, d["dataRxByteCount"])
	assert.Equal(t, d["dataRxByteCount"], d["dataTxByteCount"], "a forwarded direct message is the same bytes both ways")

	status, body = s.do("GET", "monitor/msgVpns/default/clients/"+name+"/subscriptions", "")
	require.Equal(t, 200, status)
	var topics []string
	for _, sub := range listOf(body) {
		topics = append(topics, sub["subscriptionTopic"].(string))
	}
	assert.Contains(t, topics, "mon/>")

	status, body = s.do("GET", "monitor/msgVpns/default/clients", "")
	require.Equal(t, 200, status)
	require.Len(t, listOf(body), 1)

	status, body = s.do("GET", "monitor/msgVpns/default/clients/notexist", "")
	assert.Equal(t, 404, status)
	assert.Equal(t, "NOT_FOUND", errStatusOf(body))
	status, _ = s.do("GET", "monitor/msgVpns/nope/clients/"+name, "")
	assert.Equal(t, 404, status)
}

func TestSEMPDisconnectClient(t *testing.T) {
	b := NewTestBroker(t, Config{})
	s := newBrokerSEMP(t, b)
	svc := connect(t, b, nil)

	status, body := s.do("PUT", "action/msgVpns/default/clients/notexist/disconnect", "{}")
	assert.Equal(t, 404, status)
	assert.Equal(t, "NOT_FOUND", errStatusOf(body))

	status, _ = s.do("PUT", "action/msgVpns/default/clients/"+url.PathEscape(svc.GetApplicationID())+"/disconnect", "{}")
	require.Equal(t, 200, status)
	assert.Zero(t, b.ClientCount(), "the action returns once the client is gone")
	require.Eventually(t, func() bool { return !svc.IsConnected() }, 5*time.Second, 10*time.Millisecond)
}

func TestSEMPQueueMsgs(t *testing.T) {
	b := newBroker(t)
	s := newBrokerSEMP(t, b)
	svc := connect(t, b, nil)
	pub := startPublisher(t, svc)
	publish(t, svc, pub, "orders/1", "a")
	publish(t, svc, pub, "orders/2", "bb")

	status, body := s.do("GET", "monitor/msgVpns/default/queues/q1/msgs", "")
	require.Equal(t, 200, status)
	msgs := listOf(body)
	require.Len(t, msgs, 2)
	assert.Equal(t, true, msgs[0]["undelivered"])
	assert.Equal(t, 2.0, body["meta"].(map[string]any)["count"])
	id := msgs[0]["msgId"].(float64)

	rcv := startReceiver(t, svc, resource.QueueDurableExclusive("q1"), nil)
	m := receive(t, rcv)
	require.Eventually(t, func() bool {
		_, body := s.do("GET", "monitor/msgVpns/default/queues/q1/msgs", "")
		l := listOf(body)
		return len(l) == 2 && l[0]["undelivered"] == false
	}, 5*time.Second, 10*time.Millisecond)
	rgmid, ok := m.GetReplicationGroupMessageID()
	require.True(t, ok)
	status, body = s.do("GET", "monitor/msgVpns/default/queues/q1/msgs/"+strconv.FormatInt(int64(id), 10), "")
	require.Equal(t, 200, status)
	assert.Equal(t, rgmid.String(), dataOf(body)["replicationGroupMsgId"])

	require.NoError(t, rcv.Ack(m))
	require.Eventually(t, func() bool {
		_, body := s.do("GET", "monitor/msgVpns/default/queues/q1/msgs", "")
		return len(listOf(body)) == 1
	}, 5*time.Second, 10*time.Millisecond)

	status, _ = s.do("GET", "monitor/msgVpns/default/queues/nope/msgs", "")
	assert.Equal(t, 404, status)
}

func TestSEMPMsgVpn(t *testing.T) {
	b := NewTestBroker(t, Config{})
	s := newBrokerSEMP(t, b)

	status, body := s.do("GET", "monitor/msgVpns/default", "")
	require.Equal(t, 200, status)
	assert.Equal(t, "up", dataOf(body)["state"])
	assert.Equal(t, "internal", dataOf(body)["authenticationBasicType"])

	// With basic authentication "none" any password is accepted.
	bad := clientProps(b.SMFURL(), "someone", "wrong")
	svc, err := messaging.NewMessagingServiceBuilder().FromConfigurationProvider(bad).Build()
	require.NoError(t, err)
	require.Error(t, svc.Connect())
	status, body = s.do("PATCH", "config/msgVpns/default", `{"authenticationBasicType":"none"}`)
	require.Equal(t, 200, status, body)
	assert.Equal(t, "none", dataOf(body)["authenticationBasicType"])
	svc, err = messaging.NewMessagingServiceBuilder().FromConfigurationProvider(bad).Build()
	require.NoError(t, err)
	require.NoError(t, svc.Connect())

	// Disabling the VPN disconnects its clients and refuses logins.
	status, _ = s.do("PATCH", "config/msgVpns/default", `{"enabled":false}`)
	require.Equal(t, 200, status)
	require.Eventually(t, func() bool { return !svc.IsConnected() }, 5*time.Second, 10*time.Millisecond)
	_, body = s.do("GET", "monitor/msgVpns/default", "")
	assert.Equal(t, "down", dataOf(body)["state"])
	svc, err = messaging.NewMessagingServiceBuilder().FromConfigurationProvider(clientProps(b.SMFURL(), "default", "default")).Build()
	require.NoError(t, err)
	require.Error(t, svc.Connect())

	for _, tt := range []struct{ body, want string }{
		{`{"authenticationBasicType":"ldap"}`, "NOT_SUPPORTED"},
		{`{"maxConnectionCount":5}`, "NOT_SUPPORTED"},
		{`{"msgVpnName":"other"}`, "INVALID_PARAMETER"},
	} {
		status, body = s.do("PATCH", "config/msgVpns/default", tt.body)
		assert.Equal(t, 400, status, tt.body)
		assert.Equal(t, tt.want, errStatusOf(body), tt.body)
	}
	status, _ = s.do("PATCH", "config/msgVpns/nope", `{"enabled":true}`)
	assert.Equal(t, 404, status)
}

func TestSEMPClientProfile(t *testing.T) {
	b := NewTestBroker(t, Config{})
	s := newBrokerSEMP(t, b)
	const path = "config/msgVpns/default/clientProfiles/default"

	status, body := s.do("GET", path, "")
	require.Equal(t, 200, status)
	assert.Equal(t, true, dataOf(body)["allowGuaranteedEndpointCreateEnabled"])
	assert.Equal(t, "all", dataOf(body)["allowGuaranteedEndpointCreateDurability"])

	status, body = s.do("PATCH", path, `{"allowGuaranteedEndpointCreateEnabled":false,"allowGuaranteedEndpointCreateDurability":"durable","rejectMsgToSenderOnNoSubscriptionMatchEnabled":true}`)
	require.Equal(t, 200, status, body)
	p, err := b.ClientProfile("default", "default")
	require.NoError(t, err)
	assert.Equal(t, ClientProfile{Name: "default", EndpointCreateDurability: "durable", RejectMsgToSenderOnNoSubscriptionMatch: true}, p)

	status, body = s.do("GET", "monitor/msgVpns/default/clientProfiles", "")
	require.Equal(t, 200, status)
	require.Len(t, listOf(body), 1)

	for _, tt := range []struct{ path, body, want string }{
		{path, `{"allowGuaranteedEndpointCreateDurability":"some"}`, "INVALID_PARAMETER"},
		{path, `{"allowGuaranteedMsgSendEnabled":false}`, "NOT_SUPPORTED"},
		{path, `{"maxConnectionCountPerClientUsername":3}`, "NOT_SUPPORTED"},
		{path, `{"clientProfileName":"other"}`, "INVALID_PARAMETER"},
		{"config/msgVpns/default/clientProfiles/nope", `{}`, "NOT_FOUND"},
	} {
		_, body = s.do("PATCH", tt.path, tt.body)
		assert.Equal(t, tt.want, errStatusOf(body), tt.body)
	}
}

// TestClientCountersSeeWhatWasSent: a client's counters, read right after a
// publish returns, already count it (rxbarrier.go).
func TestClientCountersSeeWhatWasSent(t *testing.T) {
	b := NewTestBroker(t, Config{})
	svc := connect(t, b, nil)
	pub, err := svc.CreateDirectMessagePublisherBuilder().Build()
	require.NoError(t, err)
	require.NoError(t, pub.Start())
	defer func() { _ = pub.Terminate(time.Second) }()
	for i := range 50 {
		require.NoError(t, pub.PublishString("x", resource.TopicOf("count/me")))
		ci, err := b.Client("default", svc.GetApplicationID())
		require.NoError(t, err)
		require.Equal(t, int64(i+1), ci.DataRxMsgs, "publish %d", i)
	}
}

// SEMPMonitorDelay holds monitor requests at least that long.
func TestSEMPMonitorDelay(t *testing.T) {
	const delay = 150 * time.Millisecond
	b := NewTestBroker(t, Config{SEMPMonitorDelay: delay})
	s := newBrokerSEMP(t, b)
	start := time.Now()
	status, _ := s.do("GET", "monitor/msgVpns/default", "")
	require.Equal(t, 200, status)
	assert.GreaterOrEqual(t, time.Since(start), delay)
}
