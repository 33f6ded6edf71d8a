package input

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/Azure/go-amqp"
	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/jms"
	"github.com/connect-solace/connect-solace/internal/testkit/benchbroker"
	"github.com/connect-solace/connect-solace/internal/testkit/jmskit"
)

// jmsBenchRound is how many messages one round drains.
const jmsBenchRound = 4000

// BenchmarkJMSInputVsRawAMQP drains 1 KiB BytesMessages from RabbitMQ
// queues, in alternating rounds through the jms input and through a bare
// go-amqp receiver with the same credit (256) that accepts every message.
// Each round fills a fresh queue with no consumer attached, attaches (a new
// connection and link, untimed), drains the queue (timed) and detaches, so
// both sides see a queue in the same state. RabbitMQ runs in its own
// process, so getrusage of this process is the client's CPU alone; each
// round is bracketed by garbage collections (benchbroker.Meter), so it pays
// for its own garbage and not the other side's.
//
// go-amqp's automatic credit renewal stalls against RabbitMQ 3.10 (see
// jms.Receiver), so the raw receiver grants credit as the input does, by a
// jms.CreditWindow: 256 at attach, renewed a window at a time as messages
// are read (RabbitMQ 3.x: no flow over deliveries in flight), with at most
// 2×256 unsettled. Both read on one goroutine and
// settle on another, as Benthos reads an input and acks from its output;
// the raw side builds a bare Benthos message of the body.
//
// Reported (benchbroker.Report): msgs/s, client CPU ns and allocations per
// message for both sides, throughput_ratio (input/raw, goal >= 0.9) and
// cpu_ratio (input/raw CPU per message, goal <= 1/0.9 = 1.11), the ratios
// medians over adjacent round pairs so that a burst of load from other
// processes, which hits one round, does not decide them. b.N counts
// messages per side:
//
//	go test -run '^$' -bench JMSInputVsRawAMQP -benchtime 20000x ./input/
func BenchmarkJMSInputVsRawAMQP(b *testing.B) {
	for _, batchSize := range []int{1, 64} {
		b.Run(fmt.Sprintf("batch_size=%d", batchSize), func(b *testing.B) {
			benchJMSInputVsRaw(b, batchSize)
		})
	}
}

func benchJMSInputVsRaw(b *testing.B, batchSize int) {
	broker := jmskit.TestBroker(b)
	const prefetch = 256
	payload := bytes.Repeat([]byte("x"), 1024)
	var queues []string
	b.Cleanup(func() { jmskit.DeleteQueues(queues...) })
	// A fresh queue for every round of either side: RabbitMQ 3.10 spends
	// more CPU per message on a queue each time a consumer has attached to
	// it and gone (its CPU per 4000-message round grew from 0.26 s to 1.8 s
	// over six rounds on one queue, and stayed at 0.3 s on fresh ones),
	// which would favour whichever side ran first.
	newQueue := func() string {
		q := jmskit.RandName("jmsin-bench-")
		queues = append(queues, q)
		return q
	}
	fill := newBenchFiller(b, broker)

	var rawM, inM benchbroker.Meter
	b.ResetTimer()
	for done, round := 0, 0; done < b.N; done, round = done+jmsBenchRound, round+1 {
		n := min(jmsBenchRound, b.N-done)
		runRaw := func() {
			b.StopTimer()
			q := newQueue()
			fill.fill(b, "/queue/"+q, payload, n)
			raw := newBenchRawReceiver(b, broker, "/queue/"+q, prefetch)
			b.StartTimer()
			rawM.Round(n, func() { raw.drain(b, n) })
			b.StopTimer()
			raw.close()
		}
		runIn := func() {
			b.StopTimer()
			q := newQueue()
			fill.fill(b, "/queue/"+q, payload, n)
			r := newTestJMSReader(b, broker.YAML()+fmt.Sprintf("queue: %s\nprefetch: %d\nbatch_size: %d\n", q, prefetch, batchSize), nil)
			connectReader(b, r)
			b.StartTimer()
			inM.Round(n, func() { drainInput(b, r, n) })
			b.StopTimer()
			require.NoError(b, r.Close(context.Background()))
		}
		// Alternate which goes first, so drift in the shared machine's load
		// does not favour one.
		if round%2 == 0 {
			runRaw()
			runIn()
		} else {
			runIn()
			runRaw()
		}
		b.StartTimer()
	}
	b.StopTimer()
	benchbroker.Report(b, "input", &inM, &rawM)
	b.ReportMetric(0, "ns/op") // the per-op time mixes both receivers
}

// drainInput reads n messages through the input as Benthos does: ReadBatch
// on one goroutine, the acks on another.
func drainInput(b testing.TB, r *jmsReader, n int) {
	ctx, cancel := context.WithTimeout(b.Context(), time.Minute)
	defer cancel()
	acks := make(chan service.AckFunc, 1024)
	ackDone := make(chan error, 1)
	go func() {
		var err error
		for ack := range acks {
			if e := ack(ctx, nil); e != nil && err == nil {
				err = e
			}
		}
		ackDone <- err
	}()
	for got := 0; got < n; {
		batch, ack, err := r.ReadBatch(ctx)
		if err != nil {
			close(acks)
			b.Fatal(err)
		}
		for _, m := range batch {
			_, _ = m.AsBytes()
		}
		got += len(batch)
		acks <- ack
	}
	close(acks)
	require.NoError(b, <-ackDone)
}

type benchRawReceiver struct {
	conn *amqp.Conn
	rcv  *amqp.Receiver

	onMsg func(i int) // experiments: called for each message read

	mu     sync.Mutex
	credit jms.CreditWindow
}

// issue grants n credits (none for 0).
func (r *benchRawReceiver) issue(n uint32) error {
	if n == 0 {
		return nil
	}
	return r.rcv.IssueCredit(n)
}

func newBenchRawReceiver(b testing.TB, broker jmskit.Broker, address string, credit int) *benchRawReceiver {
	ctx := b.Context()
	conn, sess := broker.Dial(b)
	rcv, err := sess.NewReceiver(ctx, address, &amqp.ReceiverOptions{Credit: -1, SourceDurability: amqp.DurabilityConfiguration})
	require.NoError(b, err)
	require.NoError(b, rcv.IssueCredit(uint32(credit)))
	return &benchRawReceiver{conn: conn, rcv: rcv, credit: jms.NewCreditWindow(credit, false)}
}

func (r *benchRawReceiver) close() { _ = r.conn.Close() }

// drain receives n messages on this goroutine and accepts them on another;
// it reads the body like an input would.
func (r *benchRawReceiver) drain(b testing.TB, n int) {
	ctx, cancel := context.WithTimeout(b.Context(), time.Minute)
	defer cancel()
	msgs := make(chan *amqp.Message, 1024)
	done := make(chan error, 1)
	go func() {
		var err error
		for m := range msgs {
			if e := r.rcv.AcceptMessage(ctx, m); e != nil && err == nil {
				err = e
			}
			r.mu.Lock()
			c := r.credit.OnSettle()
			r.mu.Unlock()
			if e := r.issue(c); e != nil && err == nil {
				err = e
			}
		}
		done <- err
	}()
	for i := range n {
		if r.onMsg != nil {
			r.onMsg(i)
		}
		m, err := r.rcv.Receive(ctx, nil)
		if err == nil {
			r.mu.Lock()
			c := r.credit.OnReceive()
			r.mu.Unlock()
			err = r.issue(c)
		}
		if err != nil {
			close(msgs)
			b.Fatal(err)
		}
		_, _ = service.NewMessage(m.GetData()).AsBytes()
		msgs <- m
	}
	close(msgs)
	require.NoError(b, <-done)
}

// benchFiller puts BytesMessages on queues, pipelined, over one connection.
type benchFiller struct {
	sess *amqp.Session
}

func newBenchFiller(b testing.TB, broker jmskit.Broker) *benchFiller {
	_, sess := broker.Dial(b)
	return &benchFiller{sess: sess}
}

// fill sends n messages to address (a RabbitMQ /queue/ address, declared
// durable as the jms output declares it) and waits until the broker has
// accepted them all.
func (f *benchFiller) fill(b testing.TB, address string, payload []byte, n int) {
	ctx := b.Context()
	s, err := f.sess.NewSender(ctx, address, &amqp.SenderOptions{TargetDurability: amqp.DurabilityConfiguration})
	require.NoError(b, err)
	// The link stays until the connection closes: RabbitMQ 3.10 was seen
	// not to answer the detach of a sender link that had just finished.
	dest := jms.Destination{Kind: jms.KindQueue, Address: address}
	receipts := make([]amqp.SendReceipt, 0, n)
	for range n {
		m, err := jmskit.Encode(&jms.Message{Type: jms.BodyBytes, Body: payload, Destination: dest, Priority: jms.DefaultPriority})
		require.NoError(b, err)
		rc, err := s.SendWithReceipt(ctx, m, nil)
		require.NoError(b, err)
		receipts = append(receipts, rc)
	}
	for _, rc := range receipts {
		_, err := rc.Wait(ctx)
		require.NoError(b, err)
	}
}
