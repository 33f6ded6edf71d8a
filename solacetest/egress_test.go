package solacetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/resource"
)

func TestEgressDisablePassivatesFlows(t *testing.T) {
	b := newBroker(t)
	svc := connect(t, b, nil)
	states := make(chan solace.ReceiverState, 4)
	rcv := startReceiver(t, svc, resource.QueueDurableExclusive("q1"), func(bld solace.PersistentMessageReceiverBuilder) {
		bld.WithActivationPassivationSupport(func(_, newState solace.ReceiverState, _ time.Time) { states <- newState })
	})
	waitState := func(want solace.ReceiverState) {
		t.Helper()
		select {
		case got := <-states:
			require.Equal(t, want, got)
		case <-time.After(5 * time.Second):
			t.Fatalf("no %v event", want)
		}
	}
	waitState(solace.ReceiverActive)

	require.NoError(t, b.UpdateQueue("default", "q1", func(c *QueueConfig) { c.EgressEnabled = false }))
	waitState(solace.ReceiverPassive)
	pub := startPublisher(t, svc)
	publish(t, svc, pub, "orders/1", "held")
	_, err := rcv.ReceiveMessage(100 * time.Millisecond)
	require.Error(t, err, "nothing is delivered while egress is off")

	require.NoError(t, b.UpdateQueue("default", "q1", func(c *QueueConfig) { c.EgressEnabled = true }))
	waitState(solace.ReceiverActive)
	assert.Equal(t, "held", payloadOf(t, receive(t, rcv)))
}

func TestQueueDeleteUnbindsConsumers(t *testing.T) {
	b := newBroker(t)
	svc := connect(t, b, nil)
	rcv, err := svc.CreatePersistentMessageReceiverBuilder().Build(resource.QueueDurableExclusive("q1"))
	require.NoError(t, err)
	terminated := make(chan solace.TerminationEvent, 1)
	// Set before Start: the client library reads it unsynchronised.
	rcv.SetTerminationNotificationListener(func(te solace.TerminationEvent) { terminated <- te })
	require.NoError(t, rcv.Start())

	require.NoError(t, b.DeleteQueue("default", "q1"))
	select {
	case te := <-terminated:
		require.Error(t, te.GetCause())
	case <-time.After(5 * time.Second):
		t.Fatal("the receiver was not terminated")
	}
	assert.True(t, svc.IsConnected(), "only the flow goes, not the session")
}
