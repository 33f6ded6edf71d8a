package input

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging"
	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/message"
	"solace.dev/go/messaging/pkg/solace/resource"

	"github.com/connect-solace/connect-solace/internal/benchbroker"
	"github.com/connect-solace/connect-solace/internal/benchfloor"
)

// benchMessages is how many 1 KiB messages each side consumes per round.
const benchMessages = 4000

// fillQueue publishes n 1 KiB messages to topic without waiting for each
// confirmation, then waits until the queue holds them all.
func fillQueue(b *testing.B, br *benchbroker.Broker, p *siPublisher, topic, queue string, n int) {
	b.Helper()
	payload := make([]byte, 1024)
	for i := range n {
		msg, err := p.svc.MessageBuilder().BuildWithByteArrayPayload(payload)
		require.NoError(b, err)
		require.NoError(b, p.pub.Publish(msg, resource.TopicOf(topic), nil, nil))
		// Publish sends a copy, so the message can be freed now rather than
		// by a finalizer in the middle of a later measured round.
		msg.Dispose()
		if i%500 == 499 {
			// Keep the client's publish buffer from overflowing.
			require.Eventually(b, func() bool { return br.PublishedCount(topic) >= i+1 }, 30*time.Second, time.Millisecond)
		}
	}
	require.Eventually(b, func() bool { return br.Spooled(queue) == n }, 30*time.Second, time.Millisecond)
}

// rawConsumer is a persistent receiver with client acknowledgement that
// acks each message as it arrives and then frees it (Dispose, as the client
// recommends), so that the native free is counted in the round, as it is for
// the input, rather than left to a finalizer that runs after the round.
type rawConsumer struct {
	svc  solace.MessagingService
	r    solace.PersistentMessageReceiver
	got  atomic.Int64
	want int64
	done chan struct{}
}

// bindRaw binds a raw receiver with delivery paused, so that only the
// draining is measured.
func bindRaw(b *testing.B, br *benchbroker.Broker, queue string) *rawConsumer {
	b.Helper()
	// A session of its own per round, as the input connects one per round.
	svc, err := messaging.NewMessagingServiceBuilder().FromConfigurationProvider(br.ClientProps()).Build()
	require.NoError(b, err)
	require.NoError(b, svc.Connect())
	rcv, err := svc.CreatePersistentMessageReceiverBuilder().
		WithMessageClientAcknowledgement().
		Build(resource.QueueDurableExclusive(queue))
	require.NoError(b, err)
	c := &rawConsumer{svc: svc, r: rcv, want: benchMessages, done: make(chan struct{})}
	require.NoError(b, rcv.ReceiveAsync(func(m message.InboundMessage) {
		_, _ = m.GetPayloadAsBytes()
		if err := rcv.Ack(m); err != nil {
			b.Error(err)
		}
		m.Dispose()
		if c.got.Add(1) == c.want {
			close(c.done)
		}
	}))
	br.PauseDelivery()
	require.NoError(b, rcv.Start())
	return c
}

// consumeRaw resumes delivery and waits until c got n messages.
func consumeRaw(b *testing.B, br *benchbroker.Broker, c *rawConsumer, n int) {
	br.ResumeDelivery()
	select {
	case <-c.done:
	case <-time.After(60 * time.Second):
		b.Fatalf("raw receiver got %d of %d", c.got.Load(), n)
	}
}

// bindInput connects the input (session and bind) with delivery paused, as
// for the raw receiver.
func bindInput(b *testing.B, br *benchbroker.Broker, queue string, batchSize int) *solaceReader {
	b.Helper()
	br.PauseDelivery()
	return newSiReaderURL(b, br.SMFURL(), fmt.Sprintf("queue: %s\nbatch_size: %d\n", queue, batchSize))
}

// consumeInput resumes delivery and drains n messages through the input:
// ReadBatch, then the pipeline's ack, which settles them with the broker.
// When *sample is nil it is set to the first message read, for the floor
// rounds to copy its metadata.
func consumeInput(b *testing.B, br *benchbroker.Broker, r *solaceReader, n int, sample **service.Message) {
	br.ResumeDelivery()
	// One context for the round, as Benthos reads with one long-lived
	// context rather than a timer per call.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	got := 0
	for got < n {
		// Plain checks, not require: require.NoError calls b.Helper, which
		// walks the stack (about 1 µs) twice per batch, a cost of the
		// harness that the raw side does not pay.
		batch, ack, err := r.ReadBatch(ctx)
		if err != nil {
			// Named like the raw side's failure, so that a stall (the
			// client's "Unable to push message to buffer") says which
			// side it hit.
			b.Fatalf("input got %d of %d: %v", got, n, err)
		}
		if *sample == nil && len(batch) > 0 {
			*sample = batch[0]
		}
		for _, m := range batch {
			_, _ = m.AsBytes()
		}
		if err := ack(context.Background(), nil); err != nil {
			b.Fatal(err)
		}
		got += len(batch)
	}
}

// BenchmarkSolaceInputVsRawReceiver consumes 1 KiB messages from a
// pre-filled queue, in the same run through the raw client (receiver with
// client acks) and through the input with its defaults (Benthos-style read
// then ack), in alternating rounds. The broker runs in a child process, so
// getrusage of this process is client CPU alone. It reports
// throughput_ratio (input/raw, goal >= 0.95), cpu_ratio (input/raw client
// CPU per message, goal <= 1.1), both medians over adjacent round pairs (see
// benchbroker.Report), and allocations per message of each side.
// Only the draining is measured: connecting and binding happen with delivery
// paused, before the round starts. Interleaved with those rounds it measures
// the Benthos floor (internal/benchfloor): a stream whose input hands out
// prebuilt 1 KiB messages with the metadata of the input's first message, in
// batches of batch_size, into an output that acks at once; it reports
// floor_cpu_ns/msg and best_cpu_ratio, (raw + floor) / raw, the lowest CPU
// ratio a Benthos input could reach in a pipeline.
func BenchmarkSolaceInputVsRawReceiver(b *testing.B) {
	for _, batchSize := range []int{1, 32} {
		b.Run(fmt.Sprintf("batch_size=%d", batchSize), func(b *testing.B) {
			br := benchbroker.Start(b)
			br.CreateQueue("bench", "bench")
			pub := newSiPublisherURL(b, br.SMFURL())

			var rawM, inM, floorM benchbroker.Meter
			var sample *service.Message
			var floor *benchfloor.Floor
			drained := func() {
				require.Eventually(b, func() bool { return br.Spooled("bench") == 0 }, 10*time.Second, time.Millisecond)
			}
			for b.Loop() {
				b.StopTimer()
				fillQueue(b, br, pub, "bench", "bench", benchMessages)
				rcv := bindRaw(b, br, "bench")
				b.StartTimer()
				rawM.Round(benchMessages, func() { consumeRaw(b, br, rcv, benchMessages) })
				b.StopTimer()
				require.NoError(b, rcv.r.Terminate(5*time.Second))
				require.NoError(b, rcv.svc.Disconnect())
				drained()
				fillQueue(b, br, pub, "bench", "bench", benchMessages)
				r := bindInput(b, br, "bench", batchSize)
				b.StartTimer()
				inM.Round(benchMessages, func() { consumeInput(b, br, r, benchMessages, &sample) })
				b.StopTimer()
				require.NoError(b, r.Close(context.Background()))
				drained()
				if floor == nil {
					floor = benchfloor.New(b, benchfloor.Shape{Payload: make([]byte, 1024), Meta: metaOf(b, sample), InputBatch: batchSize})
				}
				floor.Round(&floorM, benchMessages)
				b.StartTimer()
			}
			benchbroker.Report(b, "input", &inM, &rawM)
			benchfloor.Report(b, &floorM, &rawM)
			b.ReportMetric(float64(len(metaOf(b, sample))), "meta_keys/msg")
		})
	}
}
