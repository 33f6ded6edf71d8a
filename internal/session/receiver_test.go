package session

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/config"
	"solace.dev/go/messaging/pkg/solace/resource"

	"github.com/connect-solace/connect-solace/internal/session/ccsmp"
	"github.com/connect-solace/connect-solace/solacetest"
)

// rxFixture is a broker with one queue, a connected session for the receiver
// and a raw persistent publisher for feeding the queue.
type rxFixture struct {
	b    *solacetest.Broker
	sess *Session
	// reconnects counts sess's reconnections (Events.OnReconnected).
	reconnects *atomic.Int64
	svc        solace.MessagingService
	pub        solace.PersistentMessagePublisher
}

func newRxFixture(t *testing.T, queues ...solacetest.QueueConfig) *rxFixture {
	t.Helper()
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	for _, q := range queues {
		require.NoError(t, b.CreateQueue("default", q))
	}
	cfg := DefaultConfig(b.SMFURL())
	cfg.Username, cfg.Password = "default", "default"
	cfg.ReconnectAttempts = 20
	cfg.ReconnectInterval = 100 * time.Millisecond
	cfg.ConnectRetries = 0
	reconnects := new(atomic.Int64)
	sess, err := Connect(t.Context(), cfg, nil, Events{OnReconnected: func() { reconnects.Add(1) }})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sess.Close(context.Background()) })

	pubCfg := cfg
	pubCfg.SendTimestamps = true
	pubSess, err := Connect(t.Context(), pubCfg, nil, Events{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = pubSess.Close(context.Background()) })
	pub, err := pubSess.Service().CreatePersistentMessagePublisherBuilder().Build()
	require.NoError(t, err)
	require.NoError(t, pub.Start())
	t.Cleanup(func() { _ = pub.Terminate(time.Second) })
	return &rxFixture{b: b, sess: sess, reconnects: reconnects, svc: pubSess.Service(), pub: pub}
}

func (f *rxFixture) publish(t *testing.T, topic string, n int, build func(i int, b solace.OutboundMessageBuilder) solace.OutboundMessageBuilder) {
	t.Helper()
	for i := range n {
		bld := f.svc.MessageBuilder()
		if build != nil {
			bld = build(i, bld)
		}
		msg, err := bld.BuildWithByteArrayPayload(fmt.Appendf(nil, "m%d", i))
		require.NoError(t, err)
		require.NoError(t, f.pub.PublishAwaitAcknowledgement(msg, resource.TopicOf(topic), 5*time.Second, nil))
	}
}

func (f *rxFixture) stats(t *testing.T, q string) solacetest.QueueStats {
	t.Helper()
	_, st, err := f.b.Queue("default", q)
	require.NoError(t, err)
	return st
}

func receiveN(t *testing.T, r *rcv, n int) []*dlv {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	out := make([]*dlv, 0, n)
	for len(out) < n {
		in, err := r.Receive(ctx)
		require.NoError(t, err, "received %d of %d", len(out), n)
		in.Read(nil)
		out = append(out, in)
	}
	return out
}

func withoutReceiveTime(meta []MetaField) []MetaField {
	var out []MetaField
	for _, f := range meta {
		// Both derive from the local receive time, read twice here.
		if f.Key != MetaReceiveTimestamp && f.Key != MetaExpiration {
			out = append(out, f)
		}
	}
	return out
}

// boxedData is the data pointer of an interface value.
func boxedData(v any) *byte { return (*[2]*byte)(unsafe.Pointer(&v))[1] }

func withoutKeys(meta []MetaField, keys ...Attr) []MetaField {
	var out []MetaField
	for _, f := range meta {
		if !slices.Contains(keys, f.Key) {
			out = append(out, f)
		}
	}
	return out
}

func metaMap(meta []MetaField) map[Attr]any {
	m := map[Attr]any{}
	for _, f := range meta {
		m[f.Key] = f.Value
	}
	return m
}

func TestReceiverDeliversWithAttributesAndAcks(t *testing.T) {
	f := newRxFixture(t, solacetest.QueueConfig{Name: "q1", Subscriptions: []string{"orders/>"}})
	f.publish(t, "orders/eu", 5, func(i int, b solace.OutboundMessageBuilder) solace.OutboundMessageBuilder {
		return b.WithApplicationMessageID(fmt.Sprintf("app-%d", i)).
			WithCorrelationID("corr").
			WithPriority(7).
			WithSequenceNumber(uint64(100+i)).
			WithSenderID("sender-1").
			WithApplicationMessageType("order").
			WithProperty(config.MessagePropertyPersistentTimeToLive, 60000).
			WithProperty(config.MessagePropertyClassOfService, 2).
			FromConfigurationProvider(config.MessagePropertyMap{"region": "eu", "n": int32(i)})
	})
	r, err := NewReceiver[struct{}](t.Context(), f.sess, ReceiverConfig{Queue: "q1"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close(context.Background()) })

	msgs := receiveN(t, r, 5)
	for i, in := range msgs {
		require.Equal(t, fmt.Sprintf("m%d", i), string(in.Payload))
		m := metaMap(in.Meta)
		require.Equal(t, "orders/eu", m[MetaDestination])
		require.Equal(t, DestinationTopic, m[MetaDestinationType])
		require.Equal(t, fmt.Sprintf("app-%d", i), m[MetaApplicationMessageID])
		require.Equal(t, "order", m[MetaApplicationMessageType])
		require.Equal(t, "corr", m[MetaCorrelationID])
		require.Equal(t, int64(7), m[MetaPriority])
		require.Equal(t, int64(100+i), m[MetaSequenceNumber])
		require.Equal(t, "sender-1", m[MetaSenderID])
		require.Equal(t, int64(2), m[MetaClassOfService])
		require.Equal(t, int64(60000), m[MetaTimeToLive])
		require.Equal(t, m[MetaReceiveTimestamp].(time.Time).Add(time.Minute), m[MetaExpiration])
		require.Equal(t, false, m[MetaRedelivered])
		require.IsType(t, time.Time{}, m[MetaReceiveTimestamp])
		require.Equal(t, map[string]any{"region": "eu", "n": int64(i)}, in.Properties)
		require.Equal(t, fmt.Sprintf("app:app-%d", i), in.DedupKey())

		// The one-call native read and the pure Go API path must agree on
		// everything the API can read; the native path adds the rest.
		h, ok := ccsmp.HandleOf(in.msg)
		require.True(t, ok, "the native handle must be reachable for %T", in.msg)
		native, api := newInboundNative(in.msg, h, nil), newInboundAPI(in.msg, nil)
		require.Equal(t, withoutReceiveTime(api.Meta), withoutKeys(withoutReceiveTime(native.Meta), nativeOnlyMeta...))
		apiKeys := metaMap(api.Meta)
		for _, k := range nativeOnlyMeta {
			require.NotContains(t, apiKeys, k, "the Go API cannot read %s", k)
		}
		require.Equal(t, int64(60000), metaMap(native.Meta)[MetaTimeToLive])
		require.Equal(t, api.Payload, native.Payload)
		require.Equal(t, api.Properties, native.Properties)
		require.Equal(t, api.DedupKey(), native.DedupKey())
		require.Equal(t, api.SenderTimestamp, native.SenderTimestamp)
		require.Equal(t, api.Redelivered, native.Redelivered)
		require.False(t, native.SenderTimestamp.IsZero(), "the publisher stamps its messages")
		// The receiver converts with its flow's caches (destination, sender
		// timestamp); they must not change a value.
		require.Equal(t, withoutReceiveTime(native.Meta), withoutReceiveTime(in.Meta))
		var dc destCache
		first, second := newInboundNative(in.msg, h, &dc), newInboundNative(in.msg, h, &dc)
		require.Same(t, boxedData(metaMap(first.Meta)[MetaSenderTimestamp]), boxedData(metaMap(second.Meta)[MetaSenderTimestamp]),
			"a repeated sender timestamp reuses its boxed value")
		// The replication group message id is formatted in Go, not by
		// CCSMP's (slower) toString, for this client's layout.
		require.True(t, ccsmp.RGMIDFormattedInGo())
	}
	require.Equal(t, 5, f.stats(t, "q1").Unacked)
	for _, in := range msgs {
		require.NoError(t, r.Settle(in, Accepted))
	}
	require.Eventually(t, func() bool { return f.stats(t, "q1").SpooledMsgCount == 0 }, 5*time.Second, 20*time.Millisecond)
}

// TestReceiverFallsBackToAPI runs a receiver without the native read, as
// with a client the probe refuses: messages still arrive with what the Go
// API can read, each is counted, and settling works.
func TestReceiverFallsBackToAPI(t *testing.T) {
	f := newRxFixture(t, solacetest.QueueConfig{Name: "q1", Subscriptions: []string{"t"}})
	f.publish(t, "t", 3, func(i int, b solace.OutboundMessageBuilder) solace.OutboundMessageBuilder {
		return b.WithApplicationMessageID(fmt.Sprintf("app-%d", i)).
			WithProperty(config.MessagePropertyPersistentTimeToLive, 60000)
	})
	var fallbacks atomic.Int64
	r, err := newReceiver[struct{}](t.Context(), f.sess.svc, ReceiverConfig{Queue: "q1", OnNativeFallback: func() { fallbacks.Add(1) }},
		nil, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close(context.Background()) })

	msgs := receiveN(t, r, 3)
	for i, in := range msgs {
		m := metaMap(in.Meta)
		require.Equal(t, fmt.Sprintf("m%d", i), string(in.Payload))
		require.Equal(t, "t", m[MetaDestination])
		require.Equal(t, DestinationTopic, m[MetaDestinationType])
		require.Equal(t, fmt.Sprintf("app-%d", i), m[MetaApplicationMessageID])
		require.NotContains(t, m, MetaTimeToLive, "the Go API cannot read the TTL")
		require.NoError(t, r.Settle(in, Accepted))
	}
	require.Equal(t, int64(3), fallbacks.Load())
	require.Eventually(t, func() bool { return f.stats(t, "q1").SpooledMsgCount == 0 }, 5*time.Second, 20*time.Millisecond)
}

func TestReceiverSettlementOutcomes(t *testing.T) {
	f := newRxFixture(t,
		solacetest.QueueConfig{Name: "dmq"},
		solacetest.QueueConfig{Name: "q1", Subscriptions: []string{"t"}, DeadMsgQueue: "dmq"})
	f.publish(t, "t", 2, func(i int, b solace.OutboundMessageBuilder) solace.OutboundMessageBuilder {
		return b.WithProperty(config.MessagePropertyPersistentDMQEligible, true)
	})
	r, err := NewReceiver[struct{}](t.Context(), f.sess, ReceiverConfig{Queue: "q1"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close(context.Background()) })

	first := receiveN(t, r, 2)
	require.NoError(t, r.Settle(first[0], Failed))
	require.NoError(t, r.Settle(first[1], Rejected))

	again := receiveN(t, r, 1)[0]
	require.Equal(t, "m0", string(again.Payload))
	require.True(t, again.Redelivered, "a FAILED message comes back flagged")
	require.Eventually(t, func() bool { return f.stats(t, "dmq").SpooledMsgCount == 1 }, 5*time.Second, 20*time.Millisecond)
	dead, err := f.b.QueueMessages("default", "dmq")
	require.NoError(t, err)
	require.Equal(t, [][]byte{[]byte("m1")}, dead)
	require.NoError(t, r.Settle(again, Accepted))
	require.Eventually(t, func() bool { return f.stats(t, "q1").SpooledMsgCount == 0 }, 5*time.Second, 20*time.Millisecond)
}

func TestReceiverCloseLeavesUnsettledForRedelivery(t *testing.T) {
	f := newRxFixture(t, solacetest.QueueConfig{Name: "q1", Subscriptions: []string{"t"}})
	f.publish(t, "t", 10, nil)
	r, err := NewReceiver[struct{}](t.Context(), f.sess, ReceiverConfig{Queue: "q1", Buffer: 4})
	require.NoError(t, err)
	got := receiveN(t, r, 3)
	require.NoError(t, r.Settle(got[0], Accepted))
	require.NoError(t, r.Close(t.Context()))
	// Settling after Close must fail harmlessly and never reach the broker.
	err = r.Settle(got[1], Accepted)
	require.ErrorIs(t, err, ErrStaleFlow)

	require.Eventually(t, func() bool {
		st := f.stats(t, "q1")
		return st.SpooledMsgCount == 9 && st.Unacked == 0 && st.Consumers == 0
	}, 5*time.Second, 20*time.Millisecond)

	r2, err := NewReceiver[struct{}](t.Context(), f.sess, ReceiverConfig{Queue: "q1"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = r2.Close(context.Background()) })
	rest := receiveN(t, r2, 9)
	seen := map[string]bool{}
	for _, in := range rest {
		seen[string(in.Payload)] = true
		require.NoError(t, r2.Settle(in, Accepted))
	}
	require.Len(t, seen, 9)
	require.False(t, seen["m0"], "the acked message must not come back")
	require.True(t, seen["m1"] && seen["m2"], "messages handed out but not settled come back")
}

func TestReceiverSeveralFlowsShareQueue(t *testing.T) {
	f := newRxFixture(t, solacetest.QueueConfig{Name: "q1", AccessType: solacetest.AccessNonExclusive, Subscriptions: []string{"t"}})
	r, err := NewReceiver[struct{}](t.Context(), f.sess, ReceiverConfig{Queue: "q1", Flows: 3})
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close(context.Background()) })
	require.Equal(t, 3, f.stats(t, "q1").Consumers)

	f.publish(t, "t", 30, nil)
	msgs := receiveN(t, r, 30)
	perFlow := map[int]int{}
	payloads := map[string]bool{}
	for _, in := range msgs {
		perFlow[in.flow.id]++
		payloads[string(in.Payload)] = true
		require.NoError(t, r.Settle(in, Accepted))
	}
	require.Len(t, payloads, 30)
	require.Len(t, perFlow, 3, "every flow should get a share: %v", perFlow)
	require.Eventually(t, func() bool { return f.stats(t, "q1").SpooledMsgCount == 0 }, 5*time.Second, 20*time.Millisecond)
}

// TestReceiverSurvivesConnectionDrop drops the connection while messages are
// unsettled: nothing may be lost, every message handed out again must be
// flagged redelivered, and settling the pre-drop copies must not error
// except as ErrStaleFlow.
func TestReceiverSurvivesConnectionDrop(t *testing.T) {
	f := newRxFixture(t, solacetest.QueueConfig{Name: "q1", Subscriptions: []string{"t"}})
	const n = 40
	f.publish(t, "t", n, nil)
	var staleDropped atomic.Int64
	r, err := NewReceiver[struct{}](t.Context(), f.sess, ReceiverConfig{Queue: "q1", OnStaleDropped: func() { staleDropped.Add(1) }})
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close(context.Background()) })

	before := receiveN(t, r, 10)
	for _, in := range before[:5] {
		require.NoError(t, r.Settle(in, Accepted))
	}
	// Wait for the five acks to reach the broker before cutting the line.
	require.Eventually(t, func() bool { return f.stats(t, "q1").SpooledMsgCount == n-5 }, 5*time.Second, 20*time.Millisecond)
	f.b.Faults().DropConnections()
	require.Eventually(t, func() bool { return f.reconnects.Load() >= 1 }, 10*time.Second, 20*time.Millisecond)
	for _, in := range before[5:] {
		if err := r.Settle(in, Accepted); err != nil {
			require.ErrorIs(t, err, ErrStaleFlow)
		}
	}

	handedOut := map[string]bool{}
	for _, in := range before {
		handedOut[string(in.Payload)] = true
	}
	got := map[string]int{}
	for _, in := range before[:5] {
		got[string(in.Payload)]++
	}
	deadline := time.Now().Add(15 * time.Second)
	for f.stats(t, "q1").SpooledMsgCount > 0 {
		require.True(t, time.Now().Before(deadline), "queue still holds %+v after receiving %d distinct", f.stats(t, "q1"), len(got))
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		in, err := r.Receive(ctx)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			continue // acks may still be on their way
		}
		require.NoError(t, err)
		in.Read(nil)
		p := string(in.Payload)
		if handedOut[p] {
			require.True(t, in.Redelivered, "%s was handed out before the drop and must come back flagged", p)
		}
		require.NoError(t, r.Settle(in, Accepted))
		got[p]++
	}
	require.Len(t, got, n, "every message must arrive")
	for i := range 5 {
		require.Equal(t, 1, got[fmt.Sprintf("m%d", i)], "m%d was acked before the drop and must not come back", i)
	}
	require.Positive(t, staleDropped.Load(), "copies waiting in the hand-off channel at the drop are dropped, not duplicated")
}

func inPayloads(ins []*dlv, p string) bool {
	for _, in := range ins {
		if string(in.Payload) == p {
			return true
		}
	}
	return false
}

func TestReceiverUnknownQueue(t *testing.T) {
	f := newRxFixture(t)
	_, err := NewReceiver[struct{}](t.Context(), f.sess, ReceiverConfig{Queue: "nope"})
	require.Error(t, err)
	require.Contains(t, err.Error(), `"nope"`)
}

// TestReceiverDestinationPerMessage checks the per-flow destination cache:
// a flow delivering from alternating topics reports each message's own.
func TestReceiverDestinationPerMessage(t *testing.T) {
	f := newRxFixture(t, solacetest.QueueConfig{Name: "qd", Subscriptions: []string{"orders/>"}})
	topics := []string{"orders/eu", "orders/eu", "orders/us", "orders/eu", "orders/a-much-longer-topic-name/that/does/not/fit/the/inline/buffer"}
	for _, topic := range topics {
		f.publish(t, topic, 1, nil)
	}
	r, err := NewReceiver[struct{}](t.Context(), f.sess, ReceiverConfig{Queue: "qd"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close(context.Background()) })
	for i, in := range receiveN(t, r, len(topics)) {
		m := metaMap(in.Meta)
		require.Equal(t, topics[i], m[MetaDestination], "message %d", i)
		require.Equal(t, DestinationTopic, m[MetaDestinationType])
		require.NoError(t, r.Settle(in, Accepted))
	}
}

// TestReceiverBatchesUnderBackPressure drains a small hand-off buffer fed
// by several flows in batches: every flow blocked on a full buffer must be
// woken again, no batch may exceed its bound, and nothing may be lost.
func TestReceiverBatchesUnderBackPressure(t *testing.T) {
	f := newRxFixture(t, solacetest.QueueConfig{Name: "qb", AccessType: solacetest.AccessNonExclusive, Subscriptions: []string{"t"}})
	const n = 120
	f.publish(t, "t", n, nil)
	r, err := NewReceiver[struct{}](t.Context(), f.sess, ReceiverConfig{Queue: "qb", Flows: 3, Buffer: 2})
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close(context.Background()) })
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	seen := map[string]bool{}
	for len(seen) < n {
		ins, err := r.ReceiveBatch(ctx, nil, 3)
		require.NoError(t, err, "received %d of %d", len(seen), n)
		require.NotEmpty(t, ins)
		require.LessOrEqual(t, len(ins), 3)
		for _, in := range ins {
			in.Read(nil)
			seen[string(in.Payload)] = true
			require.NoError(t, r.Settle(in, Accepted))
		}
	}
	require.Len(t, seen, n)
	require.Eventually(t, func() bool { return f.stats(t, "qb").SpooledMsgCount == 0 }, 5*time.Second, 20*time.Millisecond)
}

// Read converts into the storage it is given: a caller reusing one storage
// for message after message (as the solace input does) gets each message's
// own attributes, however many each has, and the dedup key with them.
func TestReceiverReadReusesCallerStorage(t *testing.T) {
	f := newRxFixture(t, solacetest.QueueConfig{Name: "q-conv", Subscriptions: []string{"conv/>"}})
	// Every other message carries a correlation id, so consecutive messages
	// have different numbers of attributes in the same storage.
	f.publish(t, "conv/a", 6, func(i int, b solace.OutboundMessageBuilder) solace.OutboundMessageBuilder {
		b = b.WithApplicationMessageID(fmt.Sprintf("app-%d", i))
		if i%2 == 0 {
			b = b.WithCorrelationID(fmt.Sprintf("corr-%d", i))
		}
		return b
	})
	r, err := NewReceiver[struct{}](t.Context(), f.sess, ReceiverConfig{Queue: "q-conv"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close(context.Background()) })

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	storage := make([]MetaField, 0, 1)
	for i := range 6 {
		in, err := r.Receive(ctx)
		require.NoError(t, err)
		in.Read(storage)
		m := metaMap(in.Meta)
		require.Equal(t, fmt.Sprintf("app-%d", i), m[MetaApplicationMessageID])
		require.Equal(t, "conv/a", m[MetaDestination])
		if i%2 == 0 {
			require.Equal(t, fmt.Sprintf("corr-%d", i), m[MetaCorrelationID])
		} else {
			require.NotContains(t, m, MetaCorrelationID, "message %d", i)
		}
		require.Equal(t, fmt.Sprintf("app:app-%d", i), in.DedupKey())
		storage = in.Meta[:0] // grown once, then reused
		clear(in.Meta)
		in.Meta = nil
		require.NoError(t, r.Settle(in, Accepted))
	}
}

// The native read finds each flow's CCSMP handle, so that Settle takes the
// one-call path (cs_settle) rather than the Go API's; the outcome tests
// above then exercise that path against the broker.
func TestReceiverFindsNativeFlowHandle(t *testing.T) {
	f := newRxFixture(t, solacetest.QueueConfig{Name: "q-handle", Subscriptions: []string{"handle/>"}})
	f.publish(t, "handle/a", 2, nil)
	r, err := NewReceiver[struct{}](t.Context(), f.sess, ReceiverConfig{Queue: "q-handle", Flows: 2})
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close(context.Background()) })
	for _, fl := range r.flows {
		require.NotZero(t, fl.handle.Load(), "flow %d", fl.id)
	}
	for _, in := range receiveN(t, r, 2) {
		require.True(t, in.hasMsgID)
		// The settlement frees the message in the same call, as Dispose.
		require.True(t, ccsmp.FreesOnSettle(in.msg), "disposed flag of %T not found", in.msg)
		require.NoError(t, r.Settle(in, Accepted))
		require.True(t, in.msg.(interface{ IsDisposed() bool }).IsDisposed())
		in.msg.Dispose() // a no-op now, not a second free
	}
	require.Eventually(t, func() bool { return f.stats(t, "q-handle").SpooledMsgCount == 0 }, 5*time.Second, 20*time.Millisecond)
	// A handle that names another queue's flow, or none, is refused.
	_, ok := ccsmp.FlowHandleOf(r.flows[0].pr, "q-other")
	require.False(t, ok)
	old := r.flows[0].handle.Load()
	require.NoError(t, r.Close(context.Background()))
	// A flow bound later gets a handle of its own, never the old one
	// again (CCSMP's handles carry a generation).
	r2, err := NewReceiver[struct{}](t.Context(), f.sess, ReceiverConfig{Queue: "q-handle"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = r2.Close(context.Background()) })
	require.NotZero(t, r2.flows[0].handle.Load())
	require.NotEqual(t, old, r2.flows[0].handle.Load())
}

// The flow's handler only queues a message: it is converted when the caller
// reads it, after Receive, so the handler never falls behind the broker and
// leaves the client's buffer at the watermarks where v1.10.1 drops messages
// (see onMessage).
func TestReceiverConvertsOnRead(t *testing.T) {
	f := newRxFixture(t, solacetest.QueueConfig{Name: "q-lazy", Subscriptions: []string{"lazy/>"}})
	f.publish(t, "lazy/a", 3, nil)
	r, err := NewReceiver[struct{}](t.Context(), f.sess, ReceiverConfig{Queue: "q-lazy"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close(context.Background()) })
	waiting := func() int {
		r.mu.Lock()
		defer r.mu.Unlock()
		return len(r.waiting) - r.head
	}
	require.Eventually(t, func() bool { return waiting() == 3 }, 5*time.Second, 5*time.Millisecond)
	ins, err := r.ReceiveBatch(t.Context(), nil, 2)
	require.NoError(t, err)
	require.Len(t, ins, 2)
	for _, in := range ins {
		require.Nil(t, in.Payload, "converted before Read")
		require.Nil(t, in.Meta, "converted before Read")
		in.Read(nil)
		require.Equal(t, "m", string(in.Payload[:1]))
		require.NotEmpty(t, in.Meta)
		require.False(t, in.ReceiveTimestamp.IsZero())
		require.NoError(t, r.Settle(in, Accepted))
	}
}

// SettleBatch settles a batch larger than one native call takes
// (settleChunk), from several flows, in one call: every message is settled
// with the outcome asked for and freed, and after Close every settlement of
// the batch fails as stale without reaching the broker.
func TestReceiverSettleBatch(t *testing.T) {
	f := newRxFixture(t,
		solacetest.QueueConfig{Name: "dmq-batch"},
		solacetest.QueueConfig{Name: "q-batch", AccessType: solacetest.AccessNonExclusive, Subscriptions: []string{"batch/>"}, DeadMsgQueue: "dmq-batch"})
	const n = 2*settleChunk + 5
	r, err := NewReceiver[struct{}](t.Context(), f.sess, ReceiverConfig{Queue: "q-batch", Flows: 2})
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close(context.Background()) })
	for _, fl := range r.flows {
		require.NotZero(t, fl.handle.Load(), "flow %d settles natively", fl.id)
	}
	// Published once both flows are bound, so that the broker spreads them.
	f.publish(t, "batch/a", n, func(i int, b solace.OutboundMessageBuilder) solace.OutboundMessageBuilder {
		return b.WithProperty(config.MessagePropertyPersistentDMQEligible, true)
	})
	ins := receiveN(t, r, n)
	flows := map[int]bool{}
	for _, in := range ins {
		flows[in.flow.id] = true
	}
	require.Len(t, flows, 2, "the batch spans both flows")

	// The first three are rejected (to the DMQ), the rest accepted.
	require.Nil(t, r.SettleBatch(ins[:3], Rejected))
	require.Nil(t, r.SettleBatch(ins[3:], Accepted))
	for i, in := range ins {
		require.True(t, in.msg.(interface{ IsDisposed() bool }).IsDisposed(), "message %d freed", i)
	}
	require.Eventually(t, func() bool {
		st := f.stats(t, "q-batch")
		return st.SpooledMsgCount == 0 && st.Unacked == 0 && f.stats(t, "dmq-batch").SpooledMsgCount == 3
	}, 5*time.Second, 20*time.Millisecond)

	f.publish(t, "batch/a", 4, nil)
	late := receiveN(t, r, 4)
	require.NoError(t, r.Close(t.Context()))
	errs := r.SettleBatch(late, Accepted)
	require.Len(t, errs, len(late))
	for _, err := range errs {
		require.ErrorIs(t, err, ErrStaleFlow)
	}
	require.Eventually(t, func() bool {
		st := f.stats(t, "q-batch")
		return st.SpooledMsgCount == 4 && st.Unacked == 0 && st.Consumers == 0
	}, 5*time.Second, 20*time.Millisecond, "settlements after Close never reach the broker")
}
