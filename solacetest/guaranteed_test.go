package solacetest

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/config"
	"solace.dev/go/messaging/pkg/solace/message"
	"solace.dev/go/messaging/pkg/solace/resource"
	"solace.dev/go/messaging/pkg/solace/subcode"
)

func TestPersistentPublishBindReceiveAck(t *testing.T) {
	b := newBroker(t)
	require.NoError(t, b.CreateQueue("default", QueueConfig{Name: "q2", Subscriptions: []string{"orders/eu/*", "orders/us/*"}}))
	svc := connect(t, b, nil)
	pub := startPublisher(t, svc)
	publish(t, svc, pub, "orders/eu/1", "m1")               // both queues
	publish(t, svc, pub, "#P2P/QUE/q1", "m2")               // q1 only
	publish(t, svc, pub, "#P2P/QUE/v:solacetest/q2", "m2b") // q2 only
	publish(t, svc, pub, "other/topic", "m3")               // matches no queue: acked, not spooled

	msgs, err := b.QueueMessages("default", "q1")
	require.NoError(t, err)
	require.Equal(t, [][]byte{[]byte("m1"), []byte("m2")}, msgs)
	msgs, err = b.QueueMessages("default", "q2")
	require.NoError(t, err)
	require.Equal(t, [][]byte{[]byte("m1"), []byte("m2b")}, msgs)
	require.Equal(t, 1, b.PublishedCount("orders/eu/1"))

	rcv := startReceiver(t, svc, resource.QueueDurableExclusive("q1"), nil)
	for _, want := range []string{"m1", "m2"} {
		msg := receive(t, rcv)
		require.Equal(t, want, payloadOf(t, msg))
		require.False(t, msg.IsRedelivered())
		require.NoError(t, rcv.Ack(msg))
	}
	require.Eventually(t, func() bool {
		_, st, err := b.Queue("default", "q1")
		return err == nil && st.SpooledMsgCount == 0 && st.Unacked == 0
	}, 5e9, 1e7)
}

// deliveryCount reads the delivery count the client reports. The Go API
// (v1.10.1) has no getter, but the message's String() prints it.
func deliveryCount(t testing.TB, msg message.InboundMessage) int {
	t.Helper()
	m := regexp.MustCompile(`DeliveryCount:\s+(\d+)`).FindStringSubmatch(msg.String())
	require.NotNil(t, m, "message reports a delivery count:\n%s", msg.String())
	n, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	return n
}

func TestPublishErrorsSurfaceInClient(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(b *Broker)
		topic   string
		subcode subcode.Code
		text    string
	}{
		{name: "injected nack", setup: func(b *Broker) { b.Faults().NackNextPublishes(1, "Spool Over Quota") },
			topic: "orders/1", subcode: subcode.SpoolOverQuota, text: "Spool Over Quota"},
		{name: "unknown queue", topic: "#P2P/QUE/missing", subcode: subcode.QueueNotFound, text: "Queue Not Found"},
		{name: "ingress disabled", setup: func(b *Broker) {
			require.NoError(t, b.UpdateQueue("default", "q1", func(c *QueueConfig) { c.IngressEnabled = false }))
		}, topic: "#P2P/QUE/q1", subcode: subcode.QueueShutdown, text: "Queue Shutdown"},
		{name: "quota", setup: func(b *Broker) {
			require.NoError(t, b.UpdateQueue("default", "q1", func(c *QueueConfig) { c.MaxMsgSpoolUsage = 1 }))
		}, topic: "orders/big", subcode: subcode.SpoolOverQuota, text: "Spool Over Quota"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := newBroker(t)
			if tc.setup != nil {
				tc.setup(b)
			}
			svc := connect(t, b, nil)
			pub := startPublisher(t, svc)
			payload := []byte("x")
			if tc.name == "quota" {
				payload = make([]byte, 2<<20)
			}
			msg, err := svc.MessageBuilder().BuildWithByteArrayPayload(payload)
			require.NoError(t, err)
			err = pub.PublishAwaitAcknowledgement(msg, resource.TopicOf(tc.topic), 5*time.Second, nil)
			var nerr *solace.NativeError
			require.ErrorAs(t, err, &nerr)
			require.Equal(t, tc.subcode, nerr.SubCode(), err.Error())
			require.Contains(t, err.Error(), tc.text)
			// The flow goes on: the next publish is acked.
			publish(t, svc, pub, "orders/next", "ok")
			msgs, err := b.QueueMessages("default", "q1")
			require.NoError(t, err)
			if tc.name != "ingress disabled" {
				require.Equal(t, [][]byte{[]byte("ok")}, msgs)
			}
		})
	}
}

func TestAsyncPublishReceipts(t *testing.T) {
	b := newBroker(t)
	svc := connect(t, b, nil)
	pub := startPublisher(t, svc)
	const n = 500
	receipts := make(chan solace.PublishReceipt, n)
	pub.SetMessagePublishReceiptListener(func(r solace.PublishReceipt) { receipts <- r })
	b.Faults().NackNextPublishes(0, "")
	for i := range n {
		msg := mustBytesMsg(t, svc, strconv.Itoa(i))
		require.NoError(t, pub.Publish(msg, resource.TopicOf("orders/async"), nil, i))
	}
	seen := map[int]bool{}
	for range n {
		select {
		case r := <-receipts:
			require.NoError(t, r.GetError())
			require.True(t, r.IsPersisted())
			seen[r.GetUserContext().(int)] = true
		case <-time.After(10 * time.Second):
			t.Fatalf("only %d receipts", len(seen))
		}
	}
	require.Len(t, seen, n)
	require.Equal(t, n, b.PublishedCount("orders/async"))
	_, st, err := b.Queue("default", "q1")
	require.NoError(t, err)
	require.Equal(t, n, st.SpooledMsgCount)
}

func TestSettlementOutcomes(t *testing.T) {
	outcomes := func(bld solace.PersistentMessageReceiverBuilder) {
		bld.WithRequiredMessageOutcomeSupport(config.PersistentReceiverFailedOutcome, config.PersistentReceiverRejectedOutcome)
	}
	t.Run("failed redelivers with flag and count", func(t *testing.T) {
		b := newBroker(t)
		svc := connect(t, b, nil)
		publish(t, svc, startPublisher(t, svc), "orders/1", "m")
		rcv := startReceiver(t, svc, resource.QueueDurableExclusive("q1"), outcomes)
		first := receive(t, rcv)
		require.False(t, first.IsRedelivered())
		require.Equal(t, 1, deliveryCount(t, first))
		rgmid1, ok := first.GetReplicationGroupMessageID()
		require.True(t, ok)
		require.NoError(t, rcv.Settle(first, config.PersistentReceiverFailedOutcome))
		second := receive(t, rcv)
		require.Equal(t, "m", payloadOf(t, second))
		require.True(t, second.IsRedelivered())
		require.Equal(t, 2, deliveryCount(t, second))
		rgmid2, ok := second.GetReplicationGroupMessageID()
		require.True(t, ok)
		require.Equal(t, rgmid1.String(), rgmid2.String(), "a redelivery keeps its replication group message id")
		require.NoError(t, rcv.Settle(second, config.PersistentReceiverAcceptedOutcome))
		require.Eventually(t, func() bool {
			_, st, _ := b.Queue("default", "q1")
			return st.SpooledMsgCount == 0 && st.Redelivered == 1
		}, 5*time.Second, 10*time.Millisecond)
	})
	for _, withDMQ := range []bool{true, false} {
		t.Run(fmt.Sprintf("rejected dmq=%v", withDMQ), func(t *testing.T) {
			b := newBroker(t)
			if withDMQ {
				require.NoError(t, b.CreateQueue("default", QueueConfig{Name: "dmq"}))
				require.NoError(t, b.UpdateQueue("default", "q1", func(c *QueueConfig) { c.DeadMsgQueue = "dmq" }))
			}
			svc := connect(t, b, nil)
			publish(t, svc, startPublisher(t, svc), "orders/1", "bad")
			rcv := startReceiver(t, svc, resource.QueueDurableExclusive("q1"), outcomes)
			require.NoError(t, rcv.Settle(receive(t, rcv), config.PersistentReceiverRejectedOutcome))
			require.Eventually(t, func() bool {
				_, st, _ := b.Queue("default", "q1")
				return st.SpooledMsgCount == 0
			}, 5*time.Second, 10*time.Millisecond)
			if withDMQ {
				msgs, err := b.QueueMessages("default", "dmq")
				require.NoError(t, err)
				require.Equal(t, [][]byte{[]byte("bad")}, msgs)
			}
		})
	}
	t.Run("max redelivery moves to dmq", func(t *testing.T) {
		b := newBroker(t)
		require.NoError(t, b.CreateQueue("default", QueueConfig{Name: "dmq"}))
		require.NoError(t, b.UpdateQueue("default", "q1", func(c *QueueConfig) {
			c.DeadMsgQueue, c.MaxRedeliveryCount = "dmq", 2
		}))
		svc := connect(t, b, nil)
		publish(t, svc, startPublisher(t, svc), "orders/1", "poison")
		rcv := startReceiver(t, svc, resource.QueueDurableExclusive("q1"), outcomes)
		for i := 1; i <= 3; i++ { // first delivery plus two redeliveries
			msg := receive(t, rcv)
			require.Equal(t, i, deliveryCount(t, msg))
			require.NoError(t, rcv.Settle(msg, config.PersistentReceiverFailedOutcome))
		}
		require.Eventually(t, func() bool {
			msgs, _ := b.QueueMessages("default", "dmq")
			return len(msgs) == 1
		}, 5*time.Second, 10*time.Millisecond)
		_, err := rcv.ReceiveMessage(200 * time.Millisecond)
		require.Error(t, err, "no fourth delivery")
	})
}

func TestExclusiveQueueFailover(t *testing.T) {
	b := newBroker(t)
	svc := connect(t, b, nil)
	pub := startPublisher(t, svc)
	var active sync.Map
	listener := func(name string) func(solace.PersistentMessageReceiverBuilder) {
		return func(bld solace.PersistentMessageReceiverBuilder) {
			bld.WithActivationPassivationSupport(func(_, s solace.ReceiverState, _ time.Time) { active.Store(name, s) })
		}
	}
	r1 := startReceiver(t, svc, resource.QueueDurableExclusive("q1"), listener("r1"))
	svc2 := connect(t, b, nil)
	r2 := startReceiver(t, svc2, resource.QueueDurableExclusive("q1"), listener("r2"))
	publish(t, svc, pub, "orders/1", "a")
	publish(t, svc, pub, "orders/2", "b")
	m := receive(t, r1)
	require.Equal(t, "a", payloadOf(t, m))
	require.NoError(t, r1.Ack(m))
	_, err := r2.ReceiveMessage(200 * time.Millisecond)
	require.Error(t, err, "the standby consumer gets nothing")

	// r1 takes "b" but leaves without settling it: r2 takes over and gets
	// it again, flagged as redelivered.
	m = receive(t, r1)
	require.Equal(t, "b", payloadOf(t, m))
	require.NoError(t, r1.Terminate(0))
	m = receive(t, r2)
	require.Equal(t, "b", payloadOf(t, m))
	require.True(t, m.IsRedelivered())
	require.NoError(t, r2.Ack(m))
	require.Eventually(t, func() bool {
		s, ok := active.Load("r2")
		return ok && s == solace.ReceiverActive
	}, 5*time.Second, 10*time.Millisecond)
}

func TestNonExclusiveRoundRobin(t *testing.T) {
	b := NewTestBroker(t, Config{})
	require.NoError(t, b.CreateQueue("default", QueueConfig{Name: "shared", AccessType: AccessNonExclusive, Subscriptions: []string{"jobs/>"}}))
	svc := connect(t, b, nil)
	pub := startPublisher(t, svc)
	const consumers, n = 3, 30
	var mu sync.Mutex
	counts := map[int]int{}
	total := 0
	for i := range consumers {
		s := connect(t, b, nil)
		r := startReceiver(t, s, resource.QueueDurableNonExclusive("shared"), nil)
		require.NoError(t, r.ReceiveAsync(func(m message.InboundMessage) {
			mu.Lock()
			counts[i]++
			total++
			mu.Unlock()
			_ = r.Ack(m)
		}))
	}
	for i := range n {
		publish(t, svc, pub, "jobs/"+strconv.Itoa(i), "j")
	}
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return total == n }, 10*time.Second, 10*time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	for i := range consumers {
		require.Equal(t, n/consumers, counts[i], "consumer %d got its share: %v", i, counts)
	}
}

func TestTemporaryQueueWithSubscriptions(t *testing.T) {
	b := NewTestBroker(t, Config{})
	svc := connect(t, b, nil)
	rcv := startReceiver(t, svc, resource.QueueNonDurableExclusiveAnonymous(), func(bld solace.PersistentMessageReceiverBuilder) {
		bld.WithSubscriptions(resource.TopicSubscriptionOf("tmp/>"))
	})
	qs, err := b.Queues("default")
	require.NoError(t, err)
	require.Len(t, qs, 1)
	require.False(t, qs[0].Durable)
	require.True(t, strings.HasPrefix(qs[0].Name, "#P2P/QTMP/"), qs[0].Name)
	require.Equal(t, []string{"tmp/>"}, qs[0].Subscriptions)

	publish(t, svc, startPublisher(t, svc), "tmp/x", "t1")
	m := receive(t, rcv)
	require.Equal(t, "t1", payloadOf(t, m))
	require.NoError(t, rcv.Ack(m))
	require.NoError(t, rcv.Terminate(time.Second))
	require.Eventually(t, func() bool { qs, _ := b.Queues("default"); return len(qs) == 0 }, 5*time.Second, 10*time.Millisecond,
		"a temporary queue goes away with its consumer")
}

func TestBindErrors(t *testing.T) {
	b := newBroker(t)
	svc := connect(t, b, nil)
	rcv, err := svc.CreatePersistentMessageReceiverBuilder().Build(resource.QueueDurableExclusive("missing"))
	require.NoError(t, err)
	err = rcv.Start()
	var nerr *solace.NativeError
	require.ErrorAs(t, err, &nerr)
	require.Equal(t, subcode.UnknownQueueName, nerr.SubCode())

	require.NoError(t, b.UpdateQueue("default", "q1", func(c *QueueConfig) { c.EgressEnabled = false }))
	rcv, err = svc.CreatePersistentMessageReceiverBuilder().Build(resource.QueueDurableExclusive("q1"))
	require.NoError(t, err)
	require.ErrorAs(t, rcv.Start(), &nerr)
	require.Equal(t, subcode.QueueShutdown, nerr.SubCode())
}

// TestWindowHonoured fills a queue and drains it through one consumer: a
// broker that overran the client's window would lose messages in the client.
func TestWindowHonoured(t *testing.T) {
	b := newBroker(t)
	svc := connect(t, b, nil)
	pub := startPublisher(t, svc)
	const n = 2000
	done := make(chan error, n)
	pub.SetMessagePublishReceiptListener(func(r solace.PublishReceipt) { done <- r.GetError() })
	for i := range n {
		require.NoError(t, pub.Publish(mustBytesMsg(t, svc, strconv.Itoa(i)), resource.TopicOf("orders/w"), nil, nil))
	}
	for range n {
		require.NoError(t, <-done)
	}
	rcv := startReceiver(t, svc, resource.QueueDurableExclusive("q1"), nil)
	for i := range n {
		m := receive(t, rcv)
		require.Equal(t, strconv.Itoa(i), payloadOf(t, m), "in order")
		require.NoError(t, rcv.Ack(m))
	}
	require.Eventually(t, func() bool {
		_, st, _ := b.Queue("default", "q1")
		return st.SpooledMsgCount == 0
	}, 5*time.Second, 10*time.Millisecond)
}
