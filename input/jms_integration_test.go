package input

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/Azure/go-amqp"
	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/redpanda-data/benthos/v4/public/service/integration"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/jms"
	"github.com/connect-solace/connect-solace/internal/testkit/jmskit"
)

// TestIntegrationJMSInputQueue consumes a RabbitMQ queue: bodies, headers
// and typed properties arrive, and accepted messages are gone (the next
// message read is the sentinel sent after them).
func TestIntegrationJMSInputQueue(t *testing.T) {
	integration.CheckSkip(t)
	b := jmskit.TestBroker(t)
	queue := jmskit.RandName("jmsin-queue-")
	s := jmskit.NewSender(t, b, "/queue/"+queue)
	s.Send(t,
		jmskit.TextMessage(t, "one", map[string]any{"n": int32(1), "s": "x", "f": float32(0.5)}),
		jmskit.TextMessage(t, "two", nil),
	)

	r := newTestJMSReader(t, b.YAML()+"queue: "+queue+"\nprefetch: 4\n", nil)
	connectReader(t, r)
	m, ack := readOne(t, r)
	assert.Equal(t, "one", body(t, m))
	assert.Equal(t, int32(1), meta(t, m, "n"))
	assert.Equal(t, "x", meta(t, m, "s"))
	assert.Equal(t, float32(0.5), meta(t, m, "f"))
	assert.Equal(t, "text", meta(t, m, jms.MetaMessageType))
	assert.Equal(t, queue, meta(t, m, jms.MetaDestination), "the name without RabbitMQ's /queue/ prefix")
	assert.Equal(t, "queue", meta(t, m, jms.MetaDestinationType))
	assert.Equal(t, jms.DeliveryPersistent, meta(t, m, jms.MetaDeliveryMode))
	assert.Equal(t, false, meta(t, m, jms.MetaRedelivered))
	require.NoError(t, ack(t.Context(), nil))
	m, ack = readOne(t, r)
	assert.Equal(t, "two", body(t, m))
	require.NoError(t, ack(t.Context(), nil))
	require.NoError(t, r.Close(t.Context()))

	// A new consumer sees only what was sent after: both were accepted.
	s.Send(t, jmskit.TextMessage(t, "sentinel", nil))
	r2 := newTestJMSReader(t, b.YAML()+"queue: "+queue+"\n", nil)
	connectReader(t, r2)
	m, ack = readOne(t, r2)
	assert.Equal(t, "sentinel", body(t, m))
	require.NoError(t, ack(t.Context(), nil))
}

// TestIntegrationJMSInputTopic subscribes to a RabbitMQ topic (amq.topic)
// and receives what is published after the link is attached.
func TestIntegrationJMSInputTopic(t *testing.T) {
	integration.CheckSkip(t)
	b := jmskit.TestBroker(t)
	key := jmskit.RandName("jmsin.topic.")
	r := newTestJMSReader(t, b.YAML()+"topic: "+key+"\n", nil)
	connectReader(t, r)

	s := jmskit.NewSender(t, b, "/topic/"+key)
	m := jmskit.TextMessage(t, "price", map[string]any{"sym": "ACME"})
	m.Annotations[amqp.Symbol(jms.AnnDest)] = int8(jms.KindTopic)
	s.Send(t, m)
	got, ack := readOne(t, r)
	assert.Equal(t, "price", body(t, got))
	assert.Equal(t, "ACME", meta(t, got, "sym"))
	assert.Equal(t, key, meta(t, got, jms.MetaDestination))
	assert.Equal(t, "topic", meta(t, got, jms.MetaDestinationType))
	require.NoError(t, ack(t.Context(), nil))
}

// TestIntegrationJMSInputSelectorRefused: RabbitMQ 3.x echoes the selector
// filter in its attach but does not apply it (observed: a message that does
// not match is delivered). The input must refuse to connect rather than
// silently deliver every message. (The filter itself is checked against the Proton
// peer in TestIntegrationJMSInputAttachFrames.)
func TestIntegrationJMSInputSelectorRefused(t *testing.T) {
	integration.CheckSkip(t)
	b := jmskit.TestBroker(t)
	queue := jmskit.RandName("jmsin-selector-")
	r := newTestJMSReader(t, b.YAML()+"queue: "+queue+"\nselector: \"region = 'eu'\"\n", nil)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	err := r.Connect(ctx)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ignores it")
	assert.Contains(t, err.Error(), "remove selector")
}

// TestIntegrationJMSInputNackOutcomes nacks a message with each outcome and
// checks what RabbitMQ does with it: released and modified come back
// (redelivered) on the same link (RabbitMQ 3.x ends the link on a modified
// disposition, so the input sends released there), rejected is dead-lettered to the queue's dead-letter queue
// and not redelivered.
func TestIntegrationJMSInputNackOutcomes(t *testing.T) {
	integration.CheckSkip(t)
	b := jmskit.TestBroker(t)
	for _, outcome := range []string{jiNackReleased, jiNackModified} {
		t.Run(outcome, func(t *testing.T) {
			queue := jmskit.RandName("jmsin-nack-")
			s := jmskit.NewSender(t, b, "/queue/"+queue)
			s.Send(t, jmskit.TextMessage(t, "again", nil))
			r := newTestJMSReader(t, b.YAML()+"queue: "+queue+"\nnack_outcome: "+outcome+"\n", nil)
			connectReader(t, r)
			before, _ := r.current()
			m, ack := readOne(t, r)
			assert.Equal(t, false, meta(t, m, jms.MetaRedelivered))
			assert.Equal(t, int64(1), meta(t, m, jms.MetaDeliveryCount))
			require.NoError(t, ack(t.Context(), errors.New("pipeline failed")))
			m, ack = readOne(t, r)
			assert.Equal(t, "again", body(t, m))
			assert.Equal(t, true, meta(t, m, jms.MetaRedelivered), "RabbitMQ flags the redelivery")
			assert.Equal(t, int64(2), meta(t, m, jms.MetaDeliveryCount))
			require.NoError(t, ack(t.Context(), nil))
			after, _ := r.current()
			assert.Same(t, before, after, "the nack did not cost the link")
		})
	}
	t.Run(jiNackRejected, func(t *testing.T) {
		queue := jmskit.RandName("jmsin-reject-")
		dlq := queue + "-dlq"
		policy := queue + "-policy"
		jmskit.RunShell(t, fmt.Sprintf(`rabbitmqctl -q -n rabbit@localhost set_policy --apply-to queues %s '^%s$' '{"dead-letter-exchange":"","dead-letter-routing-key":"%s"}'`, policy, queue, dlq))
		t.Cleanup(func() {
			_ = exec.Command("rabbitmqctl", "-q", "-n", "rabbit@localhost", "clear_policy", policy).Run()
		})
		// Declare the dead-letter queue by attaching to it.
		dead := newTestJMSReader(t, b.YAML()+"queue: "+dlq+"\n", nil)
		connectReader(t, dead)

		s := jmskit.NewSender(t, b, "/queue/"+queue)
		s.Send(t, jmskit.TextMessage(t, "poison", nil), jmskit.TextMessage(t, "sentinel", nil))
		r := newTestJMSReader(t, b.YAML()+"queue: "+queue+"\nnack_outcome: rejected\nprefetch: 1\n", nil)
		connectReader(t, r)
		m, ack := readOne(t, r)
		assert.Equal(t, "poison", body(t, m))
		require.NoError(t, ack(t.Context(), errors.New("cannot parse")))
		m, ack = readOne(t, r)
		assert.Equal(t, "sentinel", body(t, m), "a rejected message is not redelivered")
		require.NoError(t, ack(t.Context(), nil))

		m, ack = readOne(t, dead)
		assert.Equal(t, "poison", body(t, m), "the rejected message is dead-lettered")
		require.NoError(t, ack(t.Context(), nil))
	})
}

// TestIntegrationJMSInputLateAckAfterReconnect acks a message after its
// connection was lost: the ack is dropped without an error, and the broker
// redelivers the message on the new link.
func TestIntegrationJMSInputLateAckAfterReconnect(t *testing.T) {
	integration.CheckSkip(t)
	b := jmskit.TestBroker(t)
	queue := jmskit.RandName("jmsin-late-")
	s := jmskit.NewSender(t, b, "/queue/"+queue)
	s.Send(t, jmskit.TextMessage(t, "m1", nil))
	r := newTestJMSReader(t, b.YAML()+"queue: "+queue+"\n", nil)
	connectReader(t, r)
	m, lateAck := readOne(t, r)
	assert.Equal(t, "m1", body(t, m))

	// The connection drops (as a broker failover would do it).
	rcv, _ := r.current()
	require.NoError(t, rcv.Conn().Close())
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	_, _, err := r.ReadBatch(ctx)
	require.ErrorIs(t, err, service.ErrNotConnected)
	require.NoError(t, r.Connect(ctx))

	require.NoError(t, lateAck(ctx, nil), "a late ack of an old delivery does not fail the pipeline")
	m, ack := readOne(t, r)
	assert.Equal(t, "m1", body(t, m))
	assert.Equal(t, true, meta(t, m, jms.MetaRedelivered))
	require.NoError(t, ack(ctx, nil))
}

// TestIntegrationJMSInputBatch reads messages that already arrived into
// batches and fails one message of its batch: only that one is settled with
// the nack outcome and comes back.
func TestIntegrationJMSInputBatch(t *testing.T) {
	integration.CheckSkip(t)
	b := jmskit.TestBroker(t)
	queue := jmskit.RandName("jmsin-batch-")
	s := jmskit.NewSender(t, b, "/queue/"+queue)
	for i := range 3 {
		s.Send(t, jmskit.TextMessage(t, fmt.Sprint("b", i), nil))
	}
	r := newTestJMSReader(t, b.YAML()+"queue: "+queue+"\nbatch_size: 3\nprefetch: 3\nnack_outcome: released\n", nil)
	connectReader(t, r)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for read := 0; read < 3; {
		batch, ack, err := r.ReadBatch(ctx)
		require.NoError(t, err)
		read += len(batch)
		var ackErr error
		for i, m := range batch {
			if body(t, m) == "b1" {
				ackErr = service.NewBatchError(batch, errors.New("one failed")).Failed(i, errors.New("bad"))
			}
		}
		require.NoError(t, ack(ctx, ackErr))
	}
	s.Send(t, jmskit.TextMessage(t, "sentinel", nil))
	// The released message and the sentinel, in either order (the sentinel
	// may be on its way when b1 is requeued); b0 and b2 were accepted.
	got := map[string]any{}
	for len(got) < 2 {
		batch, ack, err := r.ReadBatch(ctx)
		require.NoError(t, err)
		for _, m := range batch {
			got[body(t, m)] = meta(t, m, jms.MetaRedelivered)
		}
		require.NoError(t, ack(ctx, nil))
	}
	assert.Equal(t, map[string]any{"b1": true, "sentinel": false}, got, "only the failed message comes back")
}

// rawReceive is what a plain go-amqp receiver does with the same credit,
// for comparison in tests and the benchmark.
func rawReceive(ctx context.Context, rcv *amqp.Receiver) (*amqp.Message, error) {
	m, err := rcv.Receive(ctx, nil)
	if err != nil {
		return nil, err
	}
	return m, rcv.AcceptMessage(ctx, m)
}

// TestIntegrationJMSInputSmallPrefetch drains RabbitMQ queues at small
// prefetch, where a flow frame that overlaps deliveries in flight made
// RabbitMQ 3.10 send past the window and the link starve (it stalled after
// a few dozen messages at prefetch 2, 4 and 8). The pipeline here holds
// back its acks until 2×prefetch messages are unsettled, the most the
// input lets the broker send, so credit must also come back with the
// settlements.
func TestIntegrationJMSInputSmallPrefetch(t *testing.T) {
	integration.CheckSkip(t)
	b := jmskit.TestBroker(t)
	const n = 300
	fill := newBenchFiller(t, b)
	var queues []string
	parent := t
	for _, prefetch := range []int{1, 2, 3, 8} {
		for _, hold := range []bool{false, true} {
			t.Run(fmt.Sprintf("prefetch=%d/hold_acks=%v", prefetch, hold), func(t *testing.T) {
				queue := jmskit.RandName("jmsin-small-")
				fill.fill(t, "/queue/"+queue, []byte("x"), n)
				r := newTestJMSReader(t, b.YAML()+fmt.Sprintf("queue: %s\nprefetch: %d\n", queue, prefetch), nil)
				ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
				defer cancel()
				require.NoError(t, r.Connect(ctx))
				// The reader stays attached until the test's end: RabbitMQ
				// 3.10 takes settlements in behind its deliveries and
				// requeues those it had not processed when the connection
				// closes.
				parent.Cleanup(func() { _ = r.Close(context.Background()) })
				var held []service.AckFunc
				for got := 0; got < n; got++ {
					_, ack, err := r.ReadBatch(ctx)
					require.NoError(t, err, "after %d of %d messages", got, n)
					held = append(held, ack)
					if !hold || len(held) == 2*prefetch || got == n-1 {
						for _, a := range held {
							require.NoError(t, a(ctx, nil))
						}
						held = held[:0]
					}
				}
				queues = append(queues, queue)
			})
		}
	}
	// Every message was accepted: the broker's queues empty.
	t.Cleanup(func() { jmskit.DeleteQueues(queues...) })
	require.Eventually(t, func() bool {
		depths, err := queueDepths()
		if err != nil {
			return false
		}
		for _, q := range queues {
			if d, ok := depths[q]; !ok || d != 0 {
				return false
			}
		}
		return true
	}, 30*time.Second, 100*time.Millisecond, "queues %v still hold messages", queues)
}

// queueDepths lists RabbitMQ's queues and their message counts (ready and
// unacknowledged) with rabbitmqctl.
func queueDepths() (map[string]int, error) {
	out, err := exec.Command("rabbitmqctl", "-q", "-n", "rabbit@localhost", "list_queues", "name", "messages").Output()
	if err != nil {
		return nil, fmt.Errorf("rabbitmqctl list_queues: %w", err)
	}
	depths := map[string]int{}
	for _, line := range strings.Split(string(out), "\n") {
		var name string
		var n int
		if _, err := fmt.Sscan(line, &name, &n); err == nil {
			depths[name] = n
		}
	}
	return depths, nil
}
