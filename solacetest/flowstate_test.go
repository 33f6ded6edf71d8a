package solacetest

import (
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace"
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

	b.PauseDelivery()
	require.Contains(t, b.FlowState("default", "q1"), "delivery_paused=true")
}
