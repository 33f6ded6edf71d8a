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
	"solace.dev/go/messaging/pkg/solace/config"
	"solace.dev/go/messaging/pkg/solace/message"
	"solace.dev/go/messaging/pkg/solace/resource"

	"github.com/connect-solace/connect-solace/solacetest"
)

// benchMessages is how many 1 KiB messages each side consumes per round.
const benchMessages = 4000

// fillQueue publishes n 1 KiB messages to topic without waiting for each
// confirmation, then waits until the queue holds them all.
func fillQueue(b *testing.B, br *solacetest.Broker, p *siPublisher, topic, queue string, n int) {
	b.Helper()
	payload := make([]byte, 1024)
	for i := range n {
		msg, err := p.svc.MessageBuilder().BuildWithByteArrayPayload(payload)
		require.NoError(b, err)
		require.NoError(b, p.pub.Publish(msg, resource.TopicOf(topic), nil, nil))
		if i%500 == 499 {
			// Keep the client's publish buffer from overflowing.
			require.Eventually(b, func() bool { return br.PublishedCount(topic) >= i+1 }, 30*time.Second, time.Millisecond)
		}
	}
	require.Eventually(b, func() bool {
		_, st, err := br.Queue("default", queue)
		return err == nil && st.SpooledMsgCount == n
	}, 30*time.Second, time.Millisecond)
}

// consumeRaw drains n messages with the Solace client alone: a persistent
// receiver with client acknowledgement, acking each message as it arrives.
func consumeRaw(b *testing.B, br *solacetest.Broker, svc solace.MessagingService, queue string, n int) time.Duration {
	b.Helper()
	rcv, err := svc.CreatePersistentMessageReceiverBuilder().
		WithMessageClientAcknowledgement().
		Build(resource.QueueDurableExclusive(queue))
	require.NoError(b, err)
	var got atomic.Int64
	done := make(chan struct{})
	require.NoError(b, rcv.ReceiveAsync(func(m message.InboundMessage) {
		_, _ = m.GetPayloadAsBytes()
		if err := rcv.Ack(m); err != nil {
			b.Error(err)
		}
		if got.Add(1) == int64(n) {
			close(done)
		}
	}))
	// Bind with delivery paused so that only the draining is timed.
	br.PauseDelivery()
	require.NoError(b, rcv.Start())
	start := time.Now()
	br.ResumeDelivery()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		b.Fatalf("raw receiver got %d of %d", got.Load(), n)
	}
	elapsed := time.Since(start)
	require.NoError(b, rcv.Terminate(5*time.Second))
	return elapsed
}

// consumeInput drains n messages through the solace input: ReadBatch, then
// the pipeline's ack, which settles them with the broker.
func consumeInput(b *testing.B, br *solacetest.Broker, queue string, batchSize, n int) time.Duration {
	b.Helper()
	// Connect (session and bind) with delivery paused, as for the raw
	// receiver, so that only the draining is timed.
	br.PauseDelivery()
	r := newSiReader(b, br, fmt.Sprintf("queue: %s\nbatch_size: %d\n", queue, batchSize))
	start := time.Now()
	br.ResumeDelivery()
	got := 0
	for got < n {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		batch, ack, err := r.ReadBatch(ctx)
		cancel()
		require.NoError(b, err)
		for _, m := range batch {
			_, _ = m.AsBytes()
		}
		require.NoError(b, ack(context.Background(), nil))
		got += len(batch)
	}
	elapsed := time.Since(start)
	require.NoError(b, r.Close(context.Background()))
	return elapsed
}

// BenchmarkSolaceInputVsRawReceiver consumes 1 KiB messages from a
// pre-filled queue, in the same run through the raw client (receiver with
// client acks) and through the input (Benthos-style read then ack), and
// reports both rates and their ratio (goal: input/raw >= 0.9).
func BenchmarkSolaceInputVsRawReceiver(b *testing.B) {
	for _, batchSize := range []int{1, 32} {
		b.Run(fmt.Sprintf("batch_size=%d", batchSize), func(b *testing.B) {
			br := solacetest.NewTestBroker(b, solacetest.Config{})
			require.NoError(b, br.CreateQueue("default", solacetest.QueueConfig{Name: "bench", Subscriptions: []string{"bench"}}))
			pub := newSiPublisher(b, br)
			svc, err := messaging.NewMessagingServiceBuilder().FromConfigurationProvider(config.ServicePropertyMap{
				config.TransportLayerPropertyHost:                br.SMFURL(),
				config.ServicePropertyVPNName:                    "default",
				config.AuthenticationPropertySchemeBasicUserName: "default",
				config.AuthenticationPropertySchemeBasicPassword: "default",
			}).Build()
			require.NoError(b, err)
			require.NoError(b, svc.Connect())
			b.Cleanup(func() { _ = svc.Disconnect() })

			var rawTime, inputTime time.Duration
			rounds := 0
			for b.Loop() {
				b.StopTimer()
				fillQueue(b, br, pub, "bench", "bench", benchMessages)
				b.StartTimer()
				rawTime += consumeRaw(b, br, svc, "bench", benchMessages)
				b.StopTimer()
				require.Eventually(b, func() bool { _, st, _ := br.Queue("default", "bench"); return st.SpooledMsgCount == 0 }, 10*time.Second, time.Millisecond)
				fillQueue(b, br, pub, "bench", "bench", benchMessages)
				b.StartTimer()
				inputTime += consumeInput(b, br, "bench", batchSize, benchMessages)
				b.StopTimer()
				require.Eventually(b, func() bool { _, st, _ := br.Queue("default", "bench"); return st.SpooledMsgCount == 0 }, 10*time.Second, time.Millisecond)
				b.StartTimer()
				rounds++
			}
			total := float64(rounds * benchMessages)
			rawRate := total / rawTime.Seconds()
			inputRate := total / inputTime.Seconds()
			b.ReportMetric(rawRate, "raw_msgs/s")
			b.ReportMetric(inputRate, "input_msgs/s")
			b.ReportMetric(inputRate/rawRate, "input/raw")
		})
	}
}
