package input

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging"
	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/message"
	"solace.dev/go/messaging/pkg/solace/resource"

	"github.com/connect-solace/connect-solace/internal/testkit/benchbroker"
)

// benchDirectTopic is the topic the direct benchmark publishes to.
const benchDirectTopic = "bench/direct"

// rawDirect is a raw DirectMessageReceiver reading every message with
// readAttrs, as raw_attrs does for queues, then freeing it.
type rawDirect struct {
	svc  solace.MessagingService
	r    solace.DirectMessageReceiver
	got  atomic.Int64
	done chan struct{}
}

// bindRawDirect subscribes a raw direct receiver with a buffer that holds a
// whole round, so that nothing is discarded and a round ends when every
// message arrived.
func bindRawDirect(b *testing.B, br *benchbroker.Broker, out *rawAttrsOut) *rawDirect {
	b.Helper()
	svc, err := messaging.NewMessagingServiceBuilder().FromConfigurationProvider(br.ClientProps()).Build()
	require.NoError(b, err)
	require.NoError(b, svc.Connect())
	rcv, err := svc.CreateDirectMessageReceiverBuilder().
		OnBackPressureDropLatest(benchMessages).
		WithSubscriptions(resource.TopicSubscriptionOf(benchDirectTopic)).
		Build()
	require.NoError(b, err)
	c := &rawDirect{svc: svc, r: rcv, done: make(chan struct{})}
	require.NoError(b, rcv.ReceiveAsync(func(m message.InboundMessage) {
		out.readAttrs(m)
		m.Dispose()
		if c.got.Add(1) == benchMessages {
			close(c.done)
		}
	}))
	require.NoError(b, rcv.Start())
	return c
}

// BenchmarkSolaceInputDirectVsRaw receives 1 KiB direct messages, in
// alternating rounds, through a raw DirectMessageReceiver loop that reads
// every attribute the input gives into a map (readAttrs, as raw_attrs does
// for queues; the Go API gives a direct message all but the destination
// type) and through the input in direct mode (ReadBatch, then the
// pipeline's ack, a no-op). The broker's child process sends each round's
// messages once the consumer is subscribed (benchbroker.PublishDirect), so
// getrusage of this process is the consumer's CPU alone. Both sides buffer a whole
// round, so nothing is discarded. It reports throughput_ratio (input/raw,
// goal >= 1.0) and cpu_ratio (goal <= 1.0), medians over adjacent round
// pairs (benchbroker.Report), and allocations per message of each side.
func BenchmarkSolaceInputDirectVsRaw(b *testing.B) {
	for _, batchSize := range []int{1, 32} {
		b.Run(fmt.Sprintf("batch_size=%d", batchSize), func(b *testing.B) {
			br := benchbroker.Start(b)
			var rawM, inM benchbroker.Meter
			var attrs rawAttrsOut
			for b.Loop() {
				b.StopTimer()
				raw := bindRawDirect(b, br, &attrs)
				b.StartTimer()
				rawM.Round(benchMessages, func() {
					br.PublishDirect(benchDirectTopic, benchMessages)
					select {
					case <-raw.done:
					case <-time.After(60 * time.Second):
						b.Fatalf("raw direct receiver got %d of %d", raw.got.Load(), benchMessages)
					}
				})
				b.StopTimer()
				require.NoError(b, raw.r.Terminate(5*time.Second))
				require.NoError(b, raw.svc.Disconnect())

				r := newSiReaderURL(b, br.SMFURL(), fmt.Sprintf("topic_subscriptions: [ %s ]\nback_pressure: { buffer_capacity: %d }\nbatch_size: %d\n",
					benchDirectTopic, benchMessages, batchSize))
				b.StartTimer()
				inM.Round(benchMessages, func() {
					br.PublishDirect(benchDirectTopic, benchMessages)
					consumeDirect(b, r, benchMessages)
				})
				b.StopTimer()
				require.NoError(b, r.Close(context.Background()))
				b.StartTimer()
			}
			benchbroker.Report(b, "input", &inM, &rawM)
		})
	}
}

// consumeDirect reads n messages through the input, acking each batch, as
// consumeInput does for queues.
func consumeDirect(b *testing.B, r *solaceReader, n int) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	got := 0
	for got < n {
		batch, ack, err := r.ReadBatch(ctx)
		if err != nil {
			b.Fatalf("input got %d of %d: %v", got, n, err)
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
