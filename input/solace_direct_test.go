package input

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/config"
	"solace.dev/go/messaging/pkg/solace/resource"

	"github.com/connect-solace/connect-solace/internal/solacecfg"
	"github.com/connect-solace/connect-solace/internal/testkit/componenttest"
	"github.com/connect-solace/connect-solace/internal/testkit/solacekit"
	"github.com/connect-solace/connect-solace/solacetest"
	"github.com/connect-solace/connect-solace/solacetest/faultproxy"
)

// siDirectPublisher publishes direct messages with the raw client, waiting
// for room rather than dropping any.
type siDirectPublisher struct {
	svc solace.MessagingService
	pub solace.DirectMessagePublisher
}

func newSiDirectPublisher(t testing.TB, url string) *siDirectPublisher {
	t.Helper()
	svc := solacekit.Service(t, url, config.ServicePropertyMap{
		config.ServicePropertyGenerateSendTimestamps: true,
	})
	pub, err := svc.CreateDirectMessagePublisherBuilder().OnBackPressureWait(1024).Build()
	require.NoError(t, err)
	require.NoError(t, pub.Start())
	t.Cleanup(func() { _ = pub.Terminate(5 * time.Second) })
	return &siDirectPublisher{svc: svc, pub: pub}
}

// send publishes payload to topic, built by opt (may be nil).
func (p *siDirectPublisher) send(t testing.TB, topic, payload string, opt func(int, solace.OutboundMessageBuilder) solace.OutboundMessageBuilder) {
	t.Helper()
	bld := p.svc.MessageBuilder()
	if opt != nil {
		bld = opt(0, bld)
	}
	msg, err := bld.BuildWithStringPayload(payload)
	require.NoError(t, err)
	require.NoError(t, p.pub.Publish(msg, resource.TopicOf(topic)))
}

// readBodies reads messages from r (acking each) until stop returns true for
// one, and returns every body read, the last included.
func readBodies(t testing.TB, r *solaceReader, stop func(body string) bool) []string {
	t.Helper()
	var got []string
	for {
		batch, ack := readBatch(t, r)
		require.NoError(t, ack(t.Context(), nil))
		for _, m := range batch {
			b, err := m.AsBytes()
			require.NoError(t, err)
			got = append(got, string(b))
			if stop(string(b)) {
				return got
			}
		}
	}
}

func TestSolaceInputDirectWildcards(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	r := newSiReader(t, b, "topic_subscriptions: [ 'a/*/c', 'b/>', 'pre*/x' ]\n")
	pub := newSiDirectPublisher(t, b.SMFURL())
	for _, topic := range []string{"a/1/c", "a/1/2/c", "a/c", "b/1", "b/1/2", "b", "c/1", "prefix/x", "prefix/y", "x/prefix/x"} {
		pub.send(t, topic, topic, nil)
	}
	pub.send(t, "b/end", "end", nil)
	got := readBodies(t, r, func(b string) bool { return b == "end" })
	require.Equal(t, []string{"a/1/c", "b/1", "b/1/2", "prefix/x", "end"}, got)
}

// Two inputs with one share name split the stream: each of 2000 messages
// arrives at exactly one of them, and both get some.
func TestSolaceInputDirectSharedSubscription(t *testing.T) {
	const n = 2000
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	readers := []*solaceReader{
		newSiReader(t, b, "topic_subscriptions: [ 'work/>' ]\nshare_name: workers\nbatch_size: 50\n"),
		newSiReader(t, b, "topic_subscriptions: [ 'work/>' ]\nshare_name: workers\nbatch_size: 50\n"),
	}
	var (
		mu     sync.Mutex
		seen   = map[string]int{}
		per    = make([]int, len(readers))
		allIn  = make(chan struct{})
		closed bool
	)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var wg sync.WaitGroup
	for i, r := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				batch, ack, err := r.ReadBatch(ctx)
				if err != nil {
					return
				}
				_ = ack(ctx, nil)
				mu.Lock()
				for _, m := range batch {
					body, _ := m.AsBytes()
					seen[string(body)]++
					per[i]++
				}
				if !closed && len(seen) == n {
					closed = true
					close(allIn)
				}
				mu.Unlock()
			}
		}()
	}
	pub := newSiDirectPublisher(t, b.SMFURL())
	for i := range n {
		pub.send(t, fmt.Sprintf("work/%d", i%7), fmt.Sprintf("m-%d", i), nil)
	}
	select {
	case <-allIn:
	case <-time.After(30 * time.Second):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("only %d of %d messages arrived", len(seen), n)
	}
	cancel()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	for i := range n {
		require.Equal(t, 1, seen[fmt.Sprintf("m-%d", i)], "m-%d", i)
	}
	require.Len(t, seen, n)
	for i, c := range per {
		require.Positive(t, c, "input %d got no share", i)
	}
	t.Logf("shares: %v", per)
}

// A reader that does not read lets the client's buffer fill; every message
// is then either received or counted as discarded, and the strategy decides
// which ones survive.
func TestSolaceInputDirectBackPressureDiscards(t *testing.T) {
	const n = 500
	for _, tc := range []struct {
		strategy string
		survives string // a message that must be among the received
	}{
		// The first message finds the buffer empty.
		{siDropLatest, "m-0"},
		// The newest message is never the one dropped.
		{siDropOldest, "end"},
	} {
		t.Run(tc.strategy, func(t *testing.T) {
			b := solacetest.NewTestBroker(t, solacetest.Config{})
			r, m := newSiReaderWithMetrics(t, b, fmt.Sprintf("topic_subscriptions: [ bp ]\nback_pressure: { buffer_capacity: 10, strategy: %s }\nbatch_size: 1000\n", tc.strategy))
			pub := newSiDirectPublisher(t, b.SMFURL())
			for i := range n {
				pub.send(t, "bp", fmt.Sprintf("m-%d", i), nil)
			}
			pub.send(t, "bp", "end", nil)
			// Nothing is read until the broker sent everything and the
			// client discarded some.
			require.Eventually(t, func() bool {
				return brokerSent(t, b) == n+1 && m.get("solace_input_discarded") > 0
			}, 20*time.Second, 10*time.Millisecond)
			got := map[string]bool{}
			for {
				ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
				batch, ack, err := r.ReadBatch(ctx)
				cancel()
				if errors.Is(err, context.DeadlineExceeded) {
					break
				}
				require.NoError(t, err)
				require.NoError(t, ack(t.Context(), nil))
				for _, msg := range batch {
					body, _ := msg.AsBytes()
					got[string(body)] = true
				}
			}
			// Every message is received or counted as discarded (the
			// count is polled).
			require.Eventually(t, func() bool {
				return int64(len(got))+m.get("solace_input_discarded") == n+1
			}, 5*time.Second, 10*time.Millisecond)
			assert.True(t, got[tc.survives], "%s should survive %s", tc.survives, tc.strategy)
			t.Logf("%s: received %d, discarded %d", tc.strategy, len(got), m.get("solace_input_discarded"))
		})
	}
}

// After the network drops, the client reconnects by itself and re-adds the
// subscriptions: messages published afterwards arrive.
func TestSolaceInputDirectResubscribesAfterReset(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	p, err := faultproxy.New(strings.TrimPrefix(b.SMFURL(), "tcp://"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	r, m := newSiReaderWithMetrics(t, testURL("tcp://"+p.Addr()), "topic_subscriptions: [ 'rs/>' ]\n")
	pub := newSiDirectPublisher(t, b.SMFURL())
	pub.send(t, "rs/1", "before", nil)
	readBodies(t, r, func(b string) bool { return b == "before" })

	p.Reset()
	require.Eventually(t, func() bool { return m.get("solace_input_reconnects") >= 1 }, 20*time.Second, 10*time.Millisecond)
	// The reconnected session subscribes again; until the broker has the
	// subscription, messages are (rightly) lost, so publish until one
	// arrives.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		for i := 0; ctx.Err() == nil; i++ {
			msg, err := pub.svc.MessageBuilder().BuildWithStringPayload(fmt.Sprintf("after-%d", i))
			if err == nil {
				_ = pub.pub.Publish(msg, resource.TopicOf("rs/2"))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	readBodies(t, r, func(b string) bool { return strings.HasPrefix(b, "after-") })
}

// testURL is a broker address for newSiReaderWithMetrics.
type testURL string

func (u testURL) SMFURL() string { return string(u) }

// Direct mode gives every attribute under the keys queue mode uses; what only
// a queue has (delivery count, replication group message id) is absent.
func TestSolaceInputDirectMetadata(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	r := newSiReader(t, b, "topic_subscriptions: [ 'orders/>' ]\n")
	pub := newSiDirectPublisher(t, b.SMFURL())
	pub.send(t, "orders/eu/new", `{"id":1}`, siEveryAttribute(config.MessagePropertyMap{"region": "eu", "count": int32(3), "flag": true}))
	batch, ack := readBatch(t, r)
	require.Len(t, batch, 1)
	require.NoError(t, ack(t.Context(), nil))
	body, err := batch[0].AsBytes()
	require.NoError(t, err)
	require.JSONEq(t, `{"id":1}`, string(body))

	meta := metaOf(t, batch[0])
	want := map[string]any{
		"solace_destination":              "orders/eu/new",
		"solace_destination_type":         "topic",
		"solace_application_message_id":   "app-1",
		"solace_application_message_type": "order",
		"solace_correlation_id":           "corr-1",
		"solace_priority":                 int64(9),
		"solace_redelivered":              false,
		"solace_time_to_live":             int64(90000),
		"solace_sequence_number":          int64(77),
		"solace_sender_id":                "sender-9",
		"solace_class_of_service":         int64(1),
		"solace_http_content_type":        "application/json",
		"solace_http_content_encoding":    "gzip",
		"region":                          "eu",
		"count":                           int64(3),
		"flag":                            true,
	}
	for k, v := range want {
		assert.Equal(t, v, meta[k], "metadata %s", k)
	}
	assert.Equal(t, meta["solace_receive_timestamp"].(time.Time).Add(90*time.Second), meta["solace_expiration"])
	for _, k := range []string{"solace_sender_timestamp", "solace_receive_timestamp", "solace_timestamp"} {
		require.IsType(t, time.Time{}, meta[k], k)
		assert.WithinDuration(t, time.Now(), meta[k].(time.Time), time.Minute, k)
	}
	assert.Equal(t, meta["solace_sender_timestamp"], meta["solace_timestamp"])
	for k := range meta {
		if strings.HasPrefix(k, "solace_") {
			assert.Contains(t, siMetaKeysAndTimestamp(), k, "a key queue mode does not name")
		}
	}
	assert.NotContains(t, meta, "solace_delivery_count")
	want["solace_expiration"], want["solace_sender_timestamp"], want["solace_receive_timestamp"], want["solace_timestamp"] = nil, nil, nil, nil
	for k := range meta {
		_, ok := want[k]
		assert.True(t, ok, "unexpected metadata %s = %v", k, meta[k])
	}
}

// siMetaKeysAndTimestamp are the keys queue mode names.
func siMetaKeysAndTimestamp() []string {
	return append(solacecfg.MetaKeys[:], solacecfg.MetaTimestamp)
}

// deduplicate drops a copy of a message the pipeline acked; a nack is
// counted, as the message is lost.
func TestSolaceInputDirectDedupAndNack(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	r, m := newSiReaderWithMetrics(t, b, "topic_subscriptions: [ dd ]\ndeduplicate: true\n")
	pub := newSiDirectPublisher(t, b.SMFURL())
	withID := func(id string) func(int, solace.OutboundMessageBuilder) solace.OutboundMessageBuilder {
		return func(_ int, bld solace.OutboundMessageBuilder) solace.OutboundMessageBuilder {
			return bld.WithApplicationMessageID(id)
		}
	}
	pub.send(t, "dd", "first", withID("x"))
	batch, ack := readBatch(t, r)
	require.Len(t, batch, 1)
	require.NoError(t, ack(t.Context(), nil))
	pub.send(t, "dd", "copy", withID("x"))
	pub.send(t, "dd", "other", withID("y"))
	batch, ack = readBatch(t, r)
	body, _ := batch[0].AsBytes()
	require.Equal(t, "other", string(body), "the copy of x is dropped")
	require.Equal(t, int64(1), m.get("solace_input_duplicates_dropped"))
	require.NoError(t, ack(t.Context(), errors.New("output refused")), "a nack is not an error")
	require.Equal(t, int64(1), m.get("solace_input_nacked"))
	// y was nacked, so its key is not remembered: a copy passes.
	pub.send(t, "dd", "y again", withID("y"))
	batch, _ = readBatch(t, r)
	body, _ = batch[0].AsBytes()
	require.Equal(t, "y again", string(body))
}

func TestSolaceInputDirectLint(t *testing.T) {
	conn := "urls: [ tcp://127.0.0.1:55555 ]\nusername: u\n"
	tests := []struct{ name, yaml, want string }{
		{"direct", "topic_subscriptions: [ a/> ]", ""},
		{"shared", "topic_subscriptions: [ a/>, b/* ]\nshare_name: s\nback_pressure: { buffer_capacity: 5, strategy: drop_oldest }", ""},
		{"with queue", "topic_subscriptions: [ a/> ]\nqueue: q", "fields topic_subscriptions and queue: direct mode"},
		{"with topic", "topic_subscriptions: [ a/> ]\ntopic: a\nsemp: { url: http://h:8080 }", "fields topic_subscriptions and topic: direct mode"},
		{"with queue_name", "topic_subscriptions: [ a/> ]\nqueue_name: x", "fields topic_subscriptions and queue_name"},
		{"with selector", "topic_subscriptions: [ a/> ]\nselector: \"a = 1\"", "fields topic_subscriptions and selector"},
		{"with flows", "topic_subscriptions: [ a/> ]\nflows: 2", "field flows: only used with a queue"},
		{"with replay", "topic_subscriptions: [ a/> ]\nreplay: { from: start }", "field replay: only used with a queue"},
		{"with nack_outcome", "topic_subscriptions: [ a/> ]\nnack_outcome: rejected", "field nack_outcome: only used with a queue"},
		{"share without subscriptions", "queue: q\nshare_name: s", "field share_name: only used with topic_subscriptions"},
		{"empty subscription", "topic_subscriptions: [ '' ]", "field topic_subscriptions[0]: empty"},
		{"zero buffer", "topic_subscriptions: [ a ]\nback_pressure: { buffer_capacity: 0 }", "field back_pressure.buffer_capacity"},
		{"bad strategy", "topic_subscriptions: [ a ]\nback_pressure: { strategy: drop_all }", "drop_all"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			componenttest.LintWants(t, componenttest.Input, "solace", conn+tc.yaml, tc.want)
			if tc.want == "" || strings.Contains(tc.want, "drop_all") {
				return
			}
			pc, err := siSpec().ParseYAML(conn+tc.yaml, nil)
			require.NoError(t, err)
			_, err = newSolaceReaderFromParsed(pc, service.MockResources())
			require.ErrorContains(t, err, tc.want, "the constructor refuses it too")
		})
	}
}

// brokerSent is how many data messages the broker sent its clients.
func brokerSent(t testing.TB, b *solacetest.Broker) int64 {
	t.Helper()
	cs, err := b.Clients("default")
	require.NoError(t, err)
	var n int64
	for _, c := range cs {
		n += c.DataTxMsgs
	}
	return n
}
