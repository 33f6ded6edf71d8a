package solacetest

// The console in a real browser: headless Chromium driven over W3C
// WebDriver (internal/testkit/webdriver, chromedriver from
// .ci/setup.d/40-chromium.sh). With CONSOLE_SCREENSHOTS_DIR set it also
// saves screenshots of the pages there (docs/images holds them).

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace/config"
	"solace.dev/go/messaging/pkg/solace/message"
	"solace.dev/go/messaging/pkg/solace/resource"

	"github.com/connect-solace/connect-solace/internal/testkit/webdriver"
)

// scriptPayload would set window.pwned if the console put it into the page
// as HTML.
const scriptPayload = `<script>window.pwned=1</script><img src=x onerror="window.pwned=1">`

func TestConsoleInBrowser(t *testing.T) {
	b := NewTestBroker(t, Config{ConsoleAddr: "127.0.0.1:0", SEMPUser: "admin", SEMPPassword: "s3cret"})
	for _, q := range []QueueConfig{
		{Name: "orders", Subscriptions: []string{"orders/>"}, DeadMsgQueue: "orders.dmq", MaxRedeliveryCount: 3},
		{Name: "orders.dmq"},
		{Name: "audit", AccessType: AccessNonExclusive, Subscriptions: []string{"orders/*/created", "audit/>"}},
	} {
		require.NoError(t, b.CreateQueue("default", q))
	}
	svc := connect(t, b, config.ServicePropertyMap{config.ClientPropertyName: "order-service"})
	pub := startPublisher(t, svc)
	msg, err := svc.MessageBuilder().WithCorrelationID("corr-42").WithApplicationMessageID("order-42").WithPriority(6).
		FromConfigurationProvider(config.MessagePropertyMap{"region": "eu-west", "tenant": "acme"}).
		BuildWithStringPayload(`{"order":42,"items":["tea","milk"]}`)
	require.NoError(t, err)
	require.NoError(t, pub.PublishAwaitAcknowledgement(msg, resource.TopicOf("orders/eu/created"), 5*time.Second, nil))
	for i := range 3 {
		publish(t, svc, pub, "orders/us/created", "order "+strconv.Itoa(i))
	}
	_, err = b.Publish("default", Message{Queue: "orders", Payload: []byte(scriptPayload)})
	require.NoError(t, err)
	_, err = b.Publish("default", Message{Queue: "orders", Payload: []byte{0xde, 0xad, 0xbe, 0xef, 0x00, 0x01}})
	require.NoError(t, err)

	// A subscriber for what the page publishes, and a bound consumer for
	// the queues page's flows.
	sub := connect(t, b, config.ServicePropertyMap{config.ClientPropertyName: "console-subscriber"})
	direct, err := sub.CreateDirectMessageReceiverBuilder().WithSubscriptions(resource.TopicSubscriptionOf("console/>")).Build()
	require.NoError(t, err)
	require.NoError(t, direct.Start())
	t.Cleanup(func() { _ = direct.Terminate(time.Second) })
	startReceiver(t, sub, resource.QueueNonDurableExclusive("scratch"), nil)

	base, err := url.Parse(b.ConsoleURL())
	require.NoError(t, err)
	base.User = url.UserPassword("admin", "s3cret")
	page := func(path string) string { return base.String() + path }
	wd := webdriver.NewSession(t, 1400, 1250)
	shots := screenshotter(t, wd)

	// The overview: the VPN with its clients.
	wd.Navigate(page("/"))
	wd.WaitText("#clients tbody", func(s string) bool {
		return strings.Contains(s, "order-service") && strings.Contains(s, "console-subscriber")
	})
	shots("console-overview.png")

	// Queues and their depths are what SEMP says.
	wd.Navigate(page("/queues"))
	want := sempDepths(t, b)
	wantText := map[string]string{}
	for q, n := range want {
		wantText[q] = strconv.Itoa(n)
	}
	var got map[string]string
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("queue table: %v, SEMP: %v", got, want)
		}
	})
	wd.Wait("the queue table to match SEMP", func() bool {
		wd.Exec(`const m = {}; for (const r of document.querySelectorAll("#queues tbody tr[data-queue]")) m[r.dataset.queue] = r.dataset.depth; return m;`, &got)
		return maps.Equal(got, wantText)
	})
	require.Equal(t, 6, want["orders"])
	require.Equal(t, 4, want["audit"])
	wd.WaitText(`#queues tr[data-queue="orders"]`, func(s string) bool { return strings.Contains(s, "orders.dmq") })
	shots("console-queues.png")

	// Browse: a message from the Go client, with its attributes.
	wd.Click(`#queues tr[data-queue="orders"] a`)
	wd.WaitText("#queue-depth", func(s string) bool { return s == "6 messages" })
	require.Len(t, wd.FindAll("#msgs tbody tr"), 6)
	show := func(row int) { wd.Click("#msgs tbody tr:nth-child(" + strconv.Itoa(row) + ") button") }
	show(1)
	attr := func(name string) string {
		return wd.WaitText(`#msg-attrs tr[data-attr="`+name+`"] td:last-child`, func(s string) bool { return s != "" })
	}
	require.Equal(t, "corr-42", attr("CorrelationID"))
	require.Equal(t, "order-42", attr("ApplicationMessageID"))
	require.Equal(t, "topic orders/eu/created", attr("Destination"))
	require.Equal(t, "6", attr("Priority"))
	require.Equal(t, "persistent", attr("Delivery mode"))
	wd.WaitText(`#msg-props tr[data-attr="region"] td:last-child`, func(s string) bool { return s == "eu-west" })
	wd.WaitText(`#msg-props tr[data-attr="tenant"] td:last-child`, func(s string) bool { return s == "acme" })
	require.Equal(t, "json", wd.Find("#msg-payload").Attribute("data-view"))
	require.Contains(t, wd.Find("#msg-payload").Text(), `"order": 42`)
	shots("console-browse.png")
	wd.Click(`#payload-view option[value="hex"]`)
	wd.WaitText("#msg-payload", func(s string) bool { return strings.HasPrefix(s, "00000000  7b 22 6f 72") })

	// A <script> payload shows as text and does not run.
	wd.Click(`#payload-view option[value="auto"]`)
	show(5)
	wd.WaitText("#msg-payload", func(s string) bool { return s == scriptPayload })
	var injected struct {
		Pwned    any `json:"pwned"`
		Elements int `json:"elements"`
	}
	wd.Exec(`return {pwned: window.pwned === undefined ? null : window.pwned,
		elements: document.querySelectorAll("main script, main img").length};`, &injected)
	require.Nil(t, injected.Pwned, "the payload's script ran")
	require.Zero(t, injected.Elements, "the payload became elements")
	show(6)
	wd.WaitText("#msg-payload", func(s string) bool { return strings.HasPrefix(s, "00000000  de ad be ef 00 01") })

	// Delete the binary message from the page.
	wd.Click("#delete-msg")
	wd.WaitText("#queue-depth", func(s string) bool { return s == "5 messages" })
	require.Equal(t, 5, sempDepths(t, b)["orders"])

	// Publish from the page; the Go client's subscriber gets it.
	wd.Navigate(page("/publish"))
	form := wd.Find("#publish")
	form.Find(`[name=destination]`).Type("console/hello")
	form.Find(`[name=deliveryMode] option[value=direct]`).Click()
	form.Find(`[name=payload]`).Type("hello from the browser")
	form.Find(`[name=correlationId]`).Type("from-console")
	form.Find(`[name=userProperties]`).Type("source=console\nrun=1")
	shots("console-publish.png")
	form.Find(`button[type=submit]`).Click()
	wd.WaitText("#status", func(s string) bool { return strings.HasPrefix(s, "published to topic console/hello") })
	in, err := direct.ReceiveMessage(5 * time.Second)
	require.NoError(t, err)
	requireConsoleMessage(t, in)

	// Topics: subscriptions per client.
	wd.Navigate(page("/topics"))
	wd.WaitText("#client-subs tbody", func(s string) bool { return strings.Contains(s, "default console-subscriber console/>") })
	shots("console-topics.png")

	// Purge a queue from the queues page (its confirm dialog is accepted).
	wd.Navigate(page("/queues"))
	wd.Click(`#queues tr[data-queue="orders"] button`)
	wd.Wait("the purged queue to show 0", func() bool {
		var depth string
		wd.Exec(`const r = document.querySelector('#queues tr[data-queue="orders"]'); return r ? r.dataset.depth : "";`, &depth)
		return depth == "0"
	})
	require.Zero(t, sempDepths(t, b)["orders"])
	require.Equal(t, 4, sempDepths(t, b)["audit"], "only the one queue was purged")

	// A fault from the overview.
	wd.Navigate(page("/"))
	wd.Click(`button[data-fault="pause-delivery"]`)
	wd.WaitText("#faults", func(s string) bool { return s == "delivery paused" })
	require.True(t, b.Faults().State().DeliveryPaused)
}

// requireConsoleMessage checks what the publish form sent.
func requireConsoleMessage(t *testing.T, in message.InboundMessage) {
	t.Helper()
	payload, _ := in.GetPayloadAsBytes()
	require.Equal(t, "hello from the browser", string(payload))
	require.Equal(t, "console/hello", in.GetDestinationName())
	cid, ok := in.GetCorrelationID()
	require.True(t, ok)
	require.Equal(t, "from-console", cid)
	props := in.GetProperties()
	require.Equal(t, "console", props["source"])
	require.Equal(t, "1", props["run"])
}

// sempDepths reads every queue's message count from SEMP's monitor API,
// temporary queues included.
func sempDepths(t *testing.T, b *Broker) map[string]int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", b.SEMPURL()+"/SEMP/v2/monitor/msgVpns/default/queues?count=100", nil)
	require.NoError(t, err)
	req.SetBasicAuth("admin", "s3cret")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var body struct {
		Data []struct {
			QueueName       string `json:"queueName"`
			SpooledMsgCount int    `json:"spooledMsgCount"`
		} `json:"data"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	out := map[string]int{}
	for _, q := range body.Data {
		out[q.QueueName] = q.SpooledMsgCount
	}
	return out
}

// screenshotter saves screenshots into CONSOLE_SCREENSHOTS_DIR when it is
// set, and does nothing otherwise.
func screenshotter(t *testing.T, wd *webdriver.Session) func(name string) {
	dir := os.Getenv("CONSOLE_SCREENSHOTS_DIR")
	return func(name string) {
		if dir == "" {
			return
		}
		// Two refreshes: the rates need two samples.
		wd.Wait("two refreshes", func() bool {
			var n int
			wd.Exec(`return document.body.dataset.page === "publish" ? 2 : Number(document.body.dataset.refreshes || 0);`, &n)
			return n >= 2
		})
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), wd.Screenshot(), 0o644))
	}
}
