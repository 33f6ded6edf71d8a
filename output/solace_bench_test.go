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

	"github.com/connect-solace/connect-solace/solacetest"
)

// BenchmarkSolaceOutput publishes 1 KiB messages through the output and, in
// the same run against the same broker, through a plain loop over the Solace
// publisher API, and reports both rates and output/raw as "ratio". The goal
// for batched/persistent is a ratio of at least 0.9.
func BenchmarkSolaceOutput(b *testing.B) {
	payload := make([]byte, 1024)
	for i := range payload {
		payload[i] = byte('a' + i%26)
	}
	cases := []struct {
		name       string
		persistent bool
		writer     string
		yaml       string
	}{
		{name: "batched_persistent", persistent: true, writer: soWriterBatched, yaml: "delivery_mode: persistent\nwriter: batched\n"},
		{name: "batched_persistent_1client", persistent: true, writer: soWriterBatched, yaml: "delivery_mode: persistent\nwriter: batched\nclients: 1\n"},
		{name: "streaming_direct", persistent: false, writer: soWriterStreaming, yaml: "delivery_mode: direct\nwriter: streaming\n"},
		// The raw loop does not stamp sender timestamps, which the output does
		// by default and which costs the client ~10 µs per message in
		// solClient_session_sendMsg. These cases give the output the raw
		// loop's settings, so their ratio measures the output's own overhead.
		{name: "batched_persistent_same_settings", persistent: true, writer: soWriterBatched, yaml: "delivery_mode: persistent\nwriter: batched\nsender_timestamp: false\n"},
		{name: "streaming_direct_same_settings", persistent: false, writer: soWriterStreaming, yaml: "delivery_mode: direct\nwriter: streaming\nsender_timestamp: false\n"},
	}
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			broker := solacetest.NewTestBroker(b, solacetest.Config{})
			w := newSoWriter(b, broker, fmt.Sprintf("topic: bench/out/%s\n%s", bc.name, bc.yaml))
			svc, raw := benchRawPublisher(b, broker, bc.persistent)
			// Warm both paths up (publisher flows, first allocations).
			benchRaw(b, broker, svc, raw, bc.persistent, "bench/raw/"+bc.name, payload, 100)
			benchOutput(b, broker, w, bc.persistent, bc.writer, "bench/out/"+bc.name, payload, 100, 0)
			sent := 100

			// Alternate raw and output rounds so that load from other
			// processes on the machine hits both alike.
			n := b.N
			const rounds = 20
			var rawDur, outDur time.Duration
			b.ResetTimer()
			for r := 0; r < rounds; r++ {
				k := n/rounds + min(1, max(0, n%rounds-r))
				if k == 0 {
					continue
				}
				start := time.Now()
				benchRaw(b, broker, svc, raw, bc.persistent, "bench/raw/"+bc.name, payload, k)
				rawDur += time.Since(start)
				start = time.Now()
				benchOutput(b, broker, w, bc.persistent, bc.writer, "bench/out/"+bc.name, payload, k, sent)
				outDur += time.Since(start)
				sent += k
			}
			b.StopTimer()

			rawRate := float64(n) / rawDur.Seconds()
			outRate := float64(n) / outDur.Seconds()
			b.ReportMetric(rawRate, "raw_msgs/s")
			b.ReportMetric(outRate, "output_msgs/s")
			b.ReportMetric(outRate/rawRate, "ratio")
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
func benchRawPublisher(b *testing.B, broker *solacetest.Broker, persistent bool) (solace.MessagingService, *rawPublisher) {
	svc, err := messaging.NewMessagingServiceBuilder().FromConfigurationProvider(config.ServicePropertyMap{
		config.TransportLayerPropertyHost:                broker.SMFURL(),
		config.ServicePropertyVPNName:                    "default",
		config.AuthenticationPropertySchemeBasicUserName: "default",
		config.AuthenticationPropertySchemeBasicPassword: "default",
	}).Build()
	require.NoError(b, err)
	require.NoError(b, svc.Connect())
	b.Cleanup(func() { _ = svc.Disconnect() })
	rp := &rawPublisher{}
	if persistent {
		rp.persistent, err = svc.CreatePersistentMessagePublisherBuilder().OnBackPressureWait(soHigherThroughputBuffer).Build()
		require.NoError(b, err)
		rp.persistent.SetMessagePublishReceiptListener(func(r solace.PublishReceipt) {
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
func benchRaw(b *testing.B, broker *solacetest.Broker, svc solace.MessagingService, rp *rawPublisher, persistent bool, topic string, payload []byte, n int) {
	dest := resource.TopicOf(topic)
	builder := svc.MessageBuilder()
	base := rp.confirmed.Load()
	for i := 0; i < n; i++ {
		m, err := builder.BuildWithByteArrayPayload(payload)
		require.NoError(b, err)
		if persistent {
			require.NoError(b, rp.persistent.Publish(m, dest, nil, nil))
		} else {
			require.NoError(b, rp.direct.Publish(m, dest))
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

// benchOutput feeds n messages to the output as Benthos would: batches of
// 50 (batched) or single messages (streaming) from max_in_flight workers.
func benchOutput(b *testing.B, broker *solacetest.Broker, w *solaceWriter, persistent bool, writer, topic string, payload []byte, n, before int) {
	size := 1
	if writer == soWriterBatched {
		size = soDefaultBatchCount
	}
	batches := make(chan service.MessageBatch, 64)
	go func() {
		defer close(batches)
		for sent := 0; sent < n; sent += size {
			k := min(size, n-sent)
			batch := make(service.MessageBatch, k)
			for i := range batch {
				batch[i] = service.NewMessage(payload)
			}
			batches <- batch
		}
	}()
	var wg sync.WaitGroup
	var failed atomic.Int64
	for i := 0; i < benchWorkers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for batch := range batches {
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
	return 64
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
