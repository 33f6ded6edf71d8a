package output

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging"
	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/config"
	"solace.dev/go/messaging/pkg/solace/resource"

	"github.com/connect-solace/connect-solace/internal/testkit/benchbroker"
	"github.com/connect-solace/connect-solace/internal/testkit/benchfloor"
)

// BenchmarkSolaceOutput publishes 1 KiB messages through the output with
// its defaults and, in the same run against the same broker, through a plain
// loop over the Solace publisher API, in interleaved rounds. The broker runs
// in a child process, so getrusage of this process is client CPU alone. It
// reports throughput_ratio (output/raw msgs/s, goal >= 0.95), cpu_ratio
// (output/raw client CPU per message, goal <= 1.1), both medians over
// adjacent round pairs (see benchbroker.Report), and allocations per message
// of each side. Interleaved with those rounds it measures the Benthos floor
// (internal/testkit/benchfloor): a stream of prebuilt 1 KiB messages, one per read as
// from generate, into an output that acks at once, with the case's batching
// and max_in_flight; it reports floor_cpu_ns/msg and best_cpu_ratio, (raw +
// floor) / raw, the lowest CPU ratio a Benthos output could reach in a
// pipeline.
func BenchmarkSolaceOutput(b *testing.B) {
	payload := make([]byte, 1024)
	for i := range payload {
		payload[i] = byte('a' + i%26)
	}
	cases := []struct {
		name       string
		persistent bool
		writer     string
		// batch is the size of the batches Benthos hands the output: 1
		// without a batching policy (the default), else the policy's count.
		batch int
		yaml  string
	}{
		{name: "batched_persistent", persistent: true, writer: soWriterBatched, batch: 1, yaml: "delivery_mode: persistent\nwriter: batched\n"},
		{name: "batched_persistent_1client", persistent: true, writer: soWriterBatched, batch: 1, yaml: "delivery_mode: persistent\nwriter: batched\nclients: 1\n"},
		// Not a default: a count policy, the batched writer's only mode
		// before it gathered concurrent writes itself.
		{name: "batched_persistent_count50", persistent: true, writer: soWriterBatched, batch: 50, yaml: "delivery_mode: persistent\nwriter: batched\nbatching:\n  count: 50\n"},
		{name: "streaming_direct", persistent: false, writer: soWriterStreaming, batch: 1, yaml: "delivery_mode: direct\nwriter: streaming\n"},
		// Not a default: shows what sender timestamps cost the client
		// (see the sender_timestamp field).
		{name: "batched_persistent_sender_timestamp", persistent: true, writer: soWriterBatched, batch: 1, yaml: "delivery_mode: persistent\nwriter: batched\nsender_timestamp: true\n"},
	}
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			broker := benchbroker.Start(b)
			w := newSoWriterURL(b, broker.SMFURL(), fmt.Sprintf("topic: bench/out/%s\n%s", bc.name, bc.yaml))
			svc, raw := benchRawPublisher(b, broker, bc.persistent)
			// Warm both paths up (publisher flows, first allocations).
			benchRaw(b, broker, svc, raw, bc.persistent, "bench/raw/"+bc.name, payload, 100)
			benchOutput(b, broker, w, bc.persistent, "bench/out/"+bc.name, benchBatches(bc.batch, payload, 100), 100, 0)
			sent := 100
			outBatch := 0
			if bc.batch > 1 {
				outBatch = bc.batch
			}
			floor := benchfloor.New(b, benchfloor.Shape{Payload: payload, InputBatch: 1, OutputBatch: outBatch, OutputMaxInFlight: benchWorkers})

			// Alternate raw and output rounds so that load from other
			// processes on the machine hits both alike.
			n := b.N
			const rounds = 20
			var rawM, outM, floorM benchbroker.Meter
			b.ResetTimer()
			for r := 0; r < rounds; r++ {
				k := n/rounds + min(1, max(0, n%rounds-r))
				if k == 0 {
					continue
				}
				rawM.Round(k, func() { benchRaw(b, broker, svc, raw, bc.persistent, "bench/raw/"+bc.name, payload, k) })
				batches := benchBatches(bc.batch, payload, k)
				outM.Round(k, func() { benchOutput(b, broker, w, bc.persistent, "bench/out/"+bc.name, batches, k, sent) })
				sent += k
				// Off the clock: the floor is a metric of its own, and b.N
				// should be chosen by the plugin and raw rounds alone.
				b.StopTimer()
				floor.Round(&floorM, k)
				b.StartTimer()
			}
			b.StopTimer()
			benchbroker.Report(b, "output", &outM, &rawM)
			benchfloor.Report(b, &floorM, &rawM)
		})
	}
}

type rawPublisher struct {
	persistent solace.PersistentMessagePublisher
	direct     solace.DirectMessagePublisher
	confirmed  atomic.Int64
	failed     atomic.Int64
	sent       int // direct messages sent by earlier rounds
}

// benchRawPublisher connects a plain client with the same back-pressure
// settings as the output's default submission mode.
func benchRawPublisher(b *testing.B, broker *benchbroker.Broker, persistent bool, extra ...config.ServicePropertyMap) (solace.MessagingService, *rawPublisher) {
	props := broker.ClientProps()
	for _, e := range extra {
		for k, v := range e {
			props[k] = v
		}
	}
	svc, err := messaging.NewMessagingServiceBuilder().FromConfigurationProvider(props).Build()
	require.NoError(b, err)
	require.NoError(b, svc.Connect())
	b.Cleanup(func() { _ = svc.Disconnect() })
	rp := &rawPublisher{}
	if persistent {
		rp.persistent, err = svc.CreatePersistentMessagePublisherBuilder().OnBackPressureWait(soHigherThroughputBuffer).Build()
		require.NoError(b, err)
		rp.persistent.SetMessagePublishReceiptListener(func(r solace.PublishReceipt) {
			// Free the copy the client sent, as the output does (and as a
			// client must, or its C memory waits for a finalizer): left to
			// the finalizer, the free ran after the round's CPU was read,
			// charging the output alone for it.
			if m := r.GetMessage(); m != nil {
				m.Dispose()
			}
			if r.GetError() != nil {
				rp.failed.Add(1)
			}
			rp.confirmed.Add(1)
		})
		require.NoError(b, rp.persistent.Start())
		b.Cleanup(func() { _ = rp.persistent.Terminate(time.Second) })
	} else {
		rp.direct, err = svc.CreateDirectMessagePublisherBuilder().OnBackPressureWait(soHigherThroughputBuffer).Build()
		require.NoError(b, err)
		require.NoError(b, rp.direct.Start())
		b.Cleanup(func() { _ = rp.direct.Terminate(time.Second) })
	}
	return svc, rp
}

// benchRaw publishes n messages in a loop and waits until the broker
// confirmed them (persistent) or received them (direct).
func benchRaw(b *testing.B, broker *benchbroker.Broker, svc solace.MessagingService, rp *rawPublisher, persistent bool, topic string, payload []byte, n int) {
	dest := resource.TopicOf(topic)
	builder := svc.MessageBuilder()
	base := rp.confirmed.Load()
	for i := 0; i < n; i++ {
		// Plain checks, not require: require.NoError calls b.Helper, which
		// walks the stack (about 1 µs a call), a cost of the harness that
		// the plugin side does not pay.
		m, err := builder.BuildWithByteArrayPayload(payload)
		if err != nil {
			b.Fatal(err)
		}
		if persistent {
			err = rp.persistent.Publish(m, dest, nil, nil)
		} else {
			err = rp.direct.Publish(m, dest)
		}
		if err != nil {
			b.Fatal(err)
		}
		m.Dispose()
	}
	if persistent {
		waitFor(b, func() bool { return rp.confirmed.Load()-base >= int64(n) })
		require.Zero(b, rp.failed.Load())
		return
	}
	waitFor(b, func() bool { return broker.PublishedCount(topic) >= rp.sent+n })
	rp.sent += n
}

// benchBatches builds n messages as Benthos would hand them to the output:
// in batches of size (1 without a batching policy). They are built before a
// round, so that the round measures the output, not the making of Benthos
// messages.
func benchBatches(size int, payload []byte, n int) []service.MessageBatch {
	var out []service.MessageBatch
	for sent := 0; sent < n; sent += size {
		batch := make(service.MessageBatch, min(size, n-sent))
		for i := range batch {
			batch[i] = service.NewMessage(payload)
		}
		out = append(out, batch)
	}
	return out
}

// benchOutput writes the batches from max_in_flight workers, as Benthos
// does, and waits until the broker has them all.
func benchOutput(b *testing.B, broker *benchbroker.Broker, w *solaceWriter, persistent bool, topic string, batches []service.MessageBatch, n, before int) {
	next := make(chan service.MessageBatch, len(batches))
	for _, batch := range batches {
		next <- batch
	}
	close(next)
	var wg sync.WaitGroup
	var failed atomic.Int64
	for i := 0; i < benchWorkers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for batch := range next {
				if err := w.WriteBatch(context.Background(), batch); err != nil {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	require.Zero(b, failed.Load())
	if !persistent {
		waitFor(b, func() bool { return broker.PublishedCount(topic) >= before+n })
	}
}

var benchWorkers = func() int {
	if v, err := strconv.Atoi(os.Getenv("BENCH_WORKERS")); err == nil {
		return v
	}
	return soDefaultMaxInFlight
}()

// waitFor waits for cond, polling because the broker offers no signal for
// "received n messages".
func waitFor(b *testing.B, cond func() bool) {
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			b.Fatal("timed out")
		}
		time.Sleep(time.Millisecond)
	}
}
