package solacetest

import (
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/message"
	"solace.dev/go/messaging/pkg/solace/resource"
)

// TestFlowStateShowsWhatTheClientHolds checks the one-line state that a
// stalled benchmark prints: what the queue holds and has ready, and per
// bound flow the client's window, the deliveries not transport-acked and
// those delivered but not settled.
func TestFlowStateShowsWhatTheClientHolds(t *testing.T) {
	b := newBroker(t)
	svc := connect(t, b, nil)
	pub := startPublisher(t, svc)
	for _, p := range []string{"a", "b", "c"} {
		publish(t, svc, pub, "orders/eu", p)
	}
	require.Equal(t, "queue q1: spooled=3 ready=3 delivery_paused=false", b.FlowState("default", "q1"))
	require.Contains(t, b.FlowState("default", "nope"), "unknown queue")

	rcv := startReceiver(t, svc, resource.QueueDurableExclusive("q1"), func(bld solace.PersistentMessageReceiverBuilder) {
		bld.WithMessageClientAcknowledgement()
	})
	first := receive(t, rcv)
	receive(t, rcv)
	receive(t, rcv)
	// The client transport-acks what it received on its own schedule.
	held := regexp.MustCompile(`^queue q1: spooled=3 ready=0 delivery_paused=false; flow \d+: active=true window=255 in_flight=0 unsettled=3 last_id=\d+ bound=true$`)
	require.Eventually(t, func() bool { return held.MatchString(b.FlowState("default", "q1")) }, 5*time.Second, time.Millisecond,
		"state: %s", b.FlowState("default", "q1"))

	require.NoError(t, rcv.Ack(first))
	settled := regexp.MustCompile(`^queue q1: spooled=2 ready=0 delivery_paused=false; flow \d+: active=true window=255 in_flight=0 unsettled=2 `)
	require.Eventually(t, func() bool { return settled.MatchString(b.FlowState("default", "q1")) }, 5*time.Second, time.Millisecond,
		"state: %s", b.FlowState("default", "q1"))

	b.Faults().PauseDelivery()
	require.Contains(t, b.FlowState("default", "q1"), "delivery_paused=true")
}

// TestIgnoredWindowStallsTheGoClient checks IgnoreConsumerWindows against
// the real client: with its handler held, the client stops the flow, the
// broker delivers on regardless, and the client drops what overflows its
// buffer without settling it. The flow then stays bound with the dropped
// messages delivered and unsettled and nothing ready (the signature of the
// client's stopFlow/startFlow race, see FlowState), until the receiver goes:
// the broker then redelivers them to the next one.
func TestIgnoredWindowStallsTheGoClient(t *testing.T) {
	const n = 1500
	b := newBroker(t)
	svc := connect(t, b, nil)
	pub, err := svc.CreatePersistentMessagePublisherBuilder().Build()
	require.NoError(t, err)
	require.NoError(t, pub.Start())
	t.Cleanup(func() { _ = pub.Terminate(time.Second) })
	acked := make(chan error, n)
	pub.SetMessagePublishReceiptListener(func(r solace.PublishReceipt) { acked <- r.GetError() })
	for range n {
		msg, err := svc.MessageBuilder().BuildWithByteArrayPayload([]byte("x"))
		require.NoError(t, err)
		require.NoError(t, pub.Publish(msg, resource.TopicOf("orders/eu"), nil, nil))
	}
	for range n {
		require.NoError(t, <-acked)
	}
	// Delivery starts once the client has set its flow up: a burst that
	// arrives with the bind response trips a recovered panic in its
	// stopFlow (the wire notes), a different story.
	b.Faults().PauseDelivery()

	rcv, err := svc.CreatePersistentMessageReceiverBuilder().WithMessageClientAcknowledgement().Build(resource.QueueDurableExclusive("q1"))
	require.NoError(t, err)
	hold := make(chan struct{})
	var got atomic.Int64
	require.NoError(t, rcv.ReceiveAsync(func(m message.InboundMessage) {
		<-hold
		require.NoError(t, rcv.Ack(m))
		got.Add(1)
	}))
	require.NoError(t, rcv.Start())
	require.Eventually(t, func() bool { return strings.Contains(b.FlowState("default", "q1"), "window=255") }, 5*time.Second, time.Millisecond)
	b.Faults().IgnoreConsumerWindows(true)
	b.Faults().ResumeDelivery()
	// Everything went out while the handler was held.
	require.Eventually(t, func() bool { _, st, _ := b.Queue("default", "q1"); return st.Unacked == n }, 10*time.Second, time.Millisecond)
	close(hold)
	// The client settles what it kept; the rest stays delivered, unsettled.
	stalled := regexp.MustCompile(`ready=0 .*window=255 in_flight=0 unsettled=(\d+) `)
	require.Eventually(t, func() bool {
		_, st, _ := b.Queue("default", "q1")
		return st.SpooledMsgCount == n-int(got.Load()) && stalled.MatchString(b.FlowState("default", "q1"))
	}, 10*time.Second, time.Millisecond, "state: %s", b.FlowState("default", "q1"))
	kept := int(got.Load())
	require.Less(t, kept, n, "the client dropped nothing")
	require.Equal(t, strconv.Itoa(n-kept), stalled.FindStringSubmatch(b.FlowState("default", "q1"))[1])

	// Unbinding is the way out: the dropped messages come again.
	b.Faults().IgnoreConsumerWindows(false)
	require.NoError(t, rcv.Terminate(time.Second))
	rest := startReceiver(t, svc, resource.QueueDurableExclusive("q1"), func(bld solace.PersistentMessageReceiverBuilder) {
		bld.WithMessageClientAcknowledgement()
	})
	for range n - kept {
		m := receive(t, rest)
		require.True(t, m.IsRedelivered())
		require.NoError(t, rest.Ack(m))
	}
	require.Eventually(t, func() bool { _, st, _ := b.Queue("default", "q1"); return st.SpooledMsgCount == 0 }, 5*time.Second, time.Millisecond)
}
