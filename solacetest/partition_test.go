package solacetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/config"
	"solace.dev/go/messaging/pkg/solace/message"
	"solace.dev/go/messaging/pkg/solace/resource"
)

func TestPartitionedQueue(t *testing.T) {
	b := NewTestBroker(t, Config{})
	require.NoError(t, b.CreateQueue("default", QueueConfig{Name: "pq", AccessType: AccessNonExclusive,
		PartitionCount: 2, Subscriptions: []string{"pq/>"}}))
	type got struct{ consumer, key string }
	recv := make(chan got, 100)
	states := make(chan solace.ReceiverState, 10)
	for i := range 3 {
		svc := connect(t, b, nil)
		rcv, err := svc.CreatePersistentMessageReceiverBuilder().
			WithActivationPassivationSupport(func(_, s solace.ReceiverState, _ time.Time) {
				if i == 2 {
					states <- s
				}
			}).Build(resource.QueueDurableNonExclusive("pq"))
		require.NoError(t, err)
		name := fmt.Sprint(i)
		require.NoError(t, rcv.ReceiveAsync(func(m message.InboundMessage) {
			k, _ := m.GetProperty(config.QueuePartitionKey)
			recv <- got{name, fmt.Sprint(k)}
			_ = rcv.Ack(m)
		}))
		require.NoError(t, rcv.Start())
		t.Cleanup(func() { _ = rcv.Terminate(time.Second) })
	}
	pubSvc := connect(t, b, nil)
	pub := startPublisher(t, pubSvc)
	keys := []string{"k0", "k1", "k2", "k3", "k4", "k5"}
	for range 2 {
		for _, k := range keys {
			msg, err := pubSvc.MessageBuilder().WithProperty(config.QueuePartitionKey, k).BuildWithStringPayload("x")
			require.NoError(t, err)
			require.NoError(t, pub.PublishAwaitAcknowledgement(msg, resource.TopicOf("pq/1"), 5*time.Second, nil))
		}
	}
	owner := map[string]string{}
	consumers := map[string]bool{}
	for range 2 * len(keys) {
		select {
		case g := <-recv:
			if prev, ok := owner[g.key]; ok {
				assert.Equal(t, prev, g.consumer, "key %s stays with one consumer", g.key)
			}
			owner[g.key] = g.consumer
			consumers[g.consumer] = true
		case <-time.After(5 * time.Second):
			t.Fatalf("messages missing; owners so far %v", owner)
		}
	}
	assert.False(t, consumers["2"], "the third consumer has no partition")
	assert.Len(t, consumers, 2, "both partitions have a consumer")

	// A third partition gives the third consumer one.
	require.NoError(t, b.UpdateQueue("default", "pq", func(c *QueueConfig) { c.PartitionCount = 3 }))
	select {
	case s := <-states:
		assert.Equal(t, solace.ReceiverActive, s, "a third partition activates the third consumer")
	case <-time.After(5 * time.Second):
		t.Fatal("no activation")
	}
}

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

// TestPartitionRebalanceDelay: the first consumer gets every partition
// after the rebalance delay; when a second consumer leaves, its partitions wait for the rebalance
// delay and then move to the survivor, while the survivor's stay where they
// were.
func TestPartitionRebalanceDelay(t *testing.T) {
	b := NewTestBroker(t, Config{})
	require.NoError(t, b.CreateQueue("default", QueueConfig{Name: "pq", AccessType: AccessNonExclusive,
		PartitionCount: 4, PartitionRebalanceDelay: 1}))
	bind := func(name string) (solace.MessagingService, solace.PersistentMessageReceiver) {
		svc := connect(t, b, config.ServicePropertyMap{config.ClientPropertyName: name})
		rcv, err := svc.CreatePersistentMessageReceiverBuilder().Build(resource.QueueDurableNonExclusive("pq"))
		require.NoError(t, err)
		require.NoError(t, rcv.Start())
		return svc, rcv
	}
	bind("one")
	owners, err := b.PartitionOwners("default", "pq")
	require.NoError(t, err)
	require.Equal(t, []string{"", "", "", ""}, owners, "the first consumer waits for the rebalance delay too")
	require.Eventually(t, func() bool {
		owners, _ = b.PartitionOwners("default", "pq")
		return slices.Equal(owners, []string{"one", "one", "one", "one"})
	}, 5*time.Second, 10*time.Millisecond, "and then gets every partition: %v", owners)

	svc2, _ := bind("two")
	owners, _ = b.PartitionOwners("default", "pq")
	require.Equal(t, []string{"one", "one", "one", "one"}, owners, "a new consumer waits for the rebalance delay")
	require.Eventually(t, func() bool {
		owners, _ = b.PartitionOwners("default", "pq")
		return slices.Equal(owners, []string{"one", "one", "two", "two"})
	}, 5*time.Second, 10*time.Millisecond, "rebalanced after the delay: %v", owners)

	start := time.Now()
	require.NoError(t, svc2.Disconnect())
	require.Eventually(t, func() bool {
		owners, _ = b.PartitionOwners("default", "pq")
		return slices.Equal(owners, []string{"one", "one", "", ""})
	}, 5*time.Second, time.Millisecond, "the leaver's partitions wait: %v", owners)
	require.Eventually(t, func() bool {
		owners, _ = b.PartitionOwners("default", "pq")
		return slices.Equal(owners, []string{"one", "one", "one", "one"})
	}, 5*time.Second, 10*time.Millisecond, "and move to the survivor: %v", owners)
	require.GreaterOrEqual(t, time.Since(start), 900*time.Millisecond, "not before the delay")
}
