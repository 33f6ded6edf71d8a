package solacetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/config"
	"solace.dev/go/messaging/pkg/solace/resource"
)

// reconnecting are client properties that make the client reconnect quickly.
var reconnecting = config.ServicePropertyMap{
	config.TransportLayerPropertyReconnectionAttempts:             20,
	config.TransportLayerPropertyReconnectionAttemptsWaitInterval: 100,
}

// reconnected returns a channel that gets a value each time svc reconnects.
func reconnected(svc solace.MessagingService) <-chan struct{} {
	ch := make(chan struct{}, 10)
	svc.AddReconnectionListener(func(solace.ServiceEvent) { ch <- struct{}{} })
	return ch
}

func waitFor(t testing.TB, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

func TestReconnectRedeliversUnsettled(t *testing.T) {
	b := newBroker(t)
	svc := connect(t, b, reconnecting)
	back := reconnected(svc)
	pub := startPublisher(t, svc)
	rcv := startReceiver(t, svc, resource.QueueDurableExclusive("q1"), nil)
	dsub, err := svc.CreateDirectMessageReceiverBuilder().WithSubscriptions(resource.TopicSubscriptionOf("live/>")).Build()
	require.NoError(t, err)
	require.NoError(t, dsub.Start())
	t.Cleanup(func() { _ = dsub.Terminate(time.Second) })

	publish(t, svc, pub, "orders/1", "m1")
	publish(t, svc, pub, "orders/2", "m2")
	first := receive(t, rcv)
	require.Equal(t, "m1", payloadOf(t, first))
	require.False(t, first.IsRedelivered())

	b.Faults().DropConnections()
	waitFor(t, back, "reconnection")

	// m1 was delivered but not settled: it comes again, flagged. m2 may
	// come twice: the client keeps what it had buffered from the old flow,
	// and the broker redelivers everything that flow left unsettled.
	redelivered := map[string]bool{}
	for !redelivered["m1"] || !redelivered["m2"] {
		m := receive(t, rcv)
		if m.IsRedelivered() {
			redelivered[payloadOf(t, m)] = true
		}
		require.NoError(t, rcv.Ack(m))
	}
	require.Eventually(t, func() bool {
		_, st, _ := b.Queue("default", "q1")
		return st.SpooledMsgCount == 0
	}, 5*time.Second, 10*time.Millisecond)

	// The publisher flow and the direct subscription work after reconnecting.
	publish(t, svc, pub, "orders/3", "m3")
	m := receive(t, rcv)
	require.Equal(t, "m3", payloadOf(t, m))
	require.False(t, m.IsRedelivered())
	require.NoError(t, rcv.Ack(m))
	dpub, err := svc.CreateDirectMessagePublisherBuilder().Build()
	require.NoError(t, err)
	require.NoError(t, dpub.Start())
	t.Cleanup(func() { _ = dpub.Terminate(time.Second) })
	require.NoError(t, dpub.Publish(mustBytesMsg(t, svc, "d"), resource.TopicOf("live/1")))
	dm, err := dsub.ReceiveMessage(5 * time.Second)
	require.NoError(t, err)
	p, _ := dm.GetPayloadAsBytes()
	require.Equal(t, "d", string(p))
	require.Equal(t, 1, b.ClientCount())
}

// TestReconnectDoesNotDuplicatePublishes loses the ack of a spooled message:
// the client resends it after reconnecting, and the broker must recognise it
// by publisher flow and message id instead of spooling it twice.
func TestReconnectDoesNotDuplicatePublishes(t *testing.T) {
	b := NewTestBroker(t, Config{Logger: testLogger(t)})
	require.NoError(t, b.CreateQueue("default", QueueConfig{Name: "q1", Subscriptions: []string{"orders/>"}}))
	svc := connect(t, b, reconnecting)
	back := reconnected(svc)
	pub := startPublisher(t, svc)
	publish(t, svc, pub, "orders/1", "before")

	b.mu.Lock()
	b.faults.dropAfterSpool = true
	b.mu.Unlock()
	publish(t, svc, pub, "orders/2", "lost-ack") // completes after the reconnect
	waitFor(t, back, "reconnection")
	publish(t, svc, pub, "orders/3", "after")

	msgs, err := b.QueueMessages("default", "q1")
	require.NoError(t, err)
	require.Equal(t, [][]byte{[]byte("before"), []byte("lost-ack"), []byte("after")}, msgs)
	require.Equal(t, 1, b.PublishedCount("orders/2"))
}

func TestReconnectKeepsTemporaryQueue(t *testing.T) {
	b := NewTestBroker(t, Config{})
	svc := connect(t, b, reconnecting)
	back := reconnected(svc)
	rcv := startReceiver(t, svc, resource.QueueNonDurableExclusiveAnonymous(), func(bld solace.PersistentMessageReceiverBuilder) {
		bld.WithSubscriptions(resource.TopicSubscriptionOf("tmp/>"))
	})
	pub := startPublisher(t, svc)
	publish(t, svc, pub, "tmp/1", "t1")
	m := receive(t, rcv)
	require.Equal(t, "t1", payloadOf(t, m))

	b.Faults().DropConnections()
	waitFor(t, back, "reconnection")
	m = receive(t, rcv)
	require.Equal(t, "t1", payloadOf(t, m))
	require.True(t, m.IsRedelivered())
	require.NoError(t, rcv.Ack(m))
	publish(t, svc, pub, "tmp/2", "t2")
	require.Equal(t, "t2", payloadOf(t, receive(t, rcv)))
}

// Refused logins during reconnection are retried by the client, so a
// temporary refusal delays the reconnection without ending the session.
func TestReconnectRetriesRefusedLogins(t *testing.T) {
	b := newBroker(t)
	svc := connect(t, b, reconnecting)
	back := reconnected(svc)
	pub := startPublisher(t, svc)
	b.Faults().RefuseLogins(500 * time.Millisecond)
	start := time.Now()
	b.Faults().DropConnections()
	waitFor(t, back, "reconnection after refused logins")
	require.GreaterOrEqual(t, time.Since(start), 400*time.Millisecond)
	publish(t, svc, pub, "orders/1", "after")
}
