package input

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging"
	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/config"
	"solace.dev/go/messaging/pkg/solace/message"
	"solace.dev/go/messaging/pkg/solace/resource"

	"github.com/connect-solace/connect-solace/internal/semp"
	"github.com/connect-solace/connect-solace/internal/testkit/benchbroker"
	"github.com/connect-solace/connect-solace/internal/testkit/benchfloor"
	"github.com/connect-solace/connect-solace/internal/testkit/solacekit"
	"github.com/connect-solace/connect-solace/solacetest"
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
// reads each message as it arrives (its read function), acks it and then
// frees it (Dispose, as the client recommends), so that the native free is
// counted in the round, as it is for the input, rather than left to a
// finalizer that runs after the round.
type rawConsumer struct {
	svc  solace.MessagingService
	r    solace.PersistentMessageReceiver
	got  atomic.Int64
	want int64
	done chan struct{}
}

// readPayload is the raw loop's read, the baseline: the payload
// only.
func readPayload(m message.InboundMessage) { _, _ = m.GetPayloadAsBytes() }

// rawAttrsOut is where readAttrs hands each message on: the last one's
// payload and metadata, written by the receiver's callback goroutine only
// and read after the round (the round's end, close of rawConsumer.done,
// orders it). Storing them makes them escape to the heap as they would
// in a program that passes them on.
type rawAttrsOut struct {
	payload []byte
	meta    map[string]any
}

// readAttrs is the second raw loop's read: the code a user of the Solace Go
// client writes to get, for each message, what the input gives as metadata
// (input/solace_meta.go, the input's Metadata docs), through the client's
// public API only, under the input's keys and presence rules (a key only
// when the attribute is set) and with solace_timestamp chosen as the
// input's default, timestamp: sender, does.
//
// The attributes go into a map[string]any, not a struct: the input hands on
// a key/value map, whose keys depend on which attributes the publisher set
// and which also holds every user property under its own name; a struct
// with one typed field per attribute would carry neither and would skip the
// boxing of each value, so it would measure less than the same information.
//
// The public API (v1.10.1 InboundMessage) has no getter for
// solace_destination_type (the input reads the destination's type
// natively; GetDestinationName gives the name only),
// solace_delivery_count, solace_time_to_live and solace_reply_to, and its
// GetExpiration reports none for a message with a TTL (the expiration is
// not on the wire; the input computes it as receive time plus TTL). The
// user properties stay in their SDT types, which the input converts to
// Benthos types. So this loop does slightly less than the input: for the
// benchmark's messages two keys fewer, the destination type and the
// delivery count (raw_attrs_keys/msg against meta_keys/msg).
// TestRawAttrsReadsTheInputsMetadata checks the keys against the input's.
func (o *rawAttrsOut) readAttrs(m message.InboundMessage) {
	payload, _ := m.GetPayloadAsBytes()
	meta := make(map[string]any, 16)
	// User properties first, so that an attribute of the same name wins, as
	// in the input.
	for k, v := range m.GetProperties() {
		meta[k] = v
	}
	if d := m.GetDestinationName(); d != "" {
		meta["solace_destination"] = d
	}
	if v, ok := m.GetApplicationMessageID(); ok {
		meta["solace_application_message_id"] = v
	}
	if v, ok := m.GetApplicationMessageType(); ok {
		meta["solace_application_message_type"] = v
	}
	if v, ok := m.GetCorrelationID(); ok {
		meta["solace_correlation_id"] = v
	}
	if v, ok := m.GetPriority(); ok {
		meta["solace_priority"] = int64(v)
	}
	meta["solace_redelivered"] = m.IsRedelivered()
	// The API reports "no expiration" as the Unix epoch.
	if e := m.GetExpiration(); !e.IsZero() && e.UnixNano() > 0 {
		meta["solace_expiration"] = e
	}
	sent, hasSent := m.GetSenderTimestamp()
	if hasSent {
		meta["solace_sender_timestamp"] = sent
	}
	received, ok := m.GetTimeStamp()
	if !ok {
		received = time.Now()
	}
	meta["solace_receive_timestamp"] = received
	if v, ok := m.GetSequenceNumber(); ok {
		meta["solace_sequence_number"] = v
	}
	if id, ok := m.GetReplicationGroupMessageID(); ok {
		meta["solace_replication_group_message_id"] = id.String()
	}
	if v, ok := m.GetSenderID(); ok {
		meta["solace_sender_id"] = v
	}
	meta["solace_class_of_service"] = int64(m.GetClassOfService())
	if v, ok := m.GetHTTPContentType(); ok {
		meta["solace_http_content_type"] = v
	}
	if v, ok := m.GetHTTPContentEncoding(); ok {
		meta["solace_http_content_encoding"] = v
	}
	if hasSent {
		meta["solace_timestamp"] = sent
	} else {
		meta["solace_timestamp"] = received
	}
	o.payload, o.meta = payload, meta
}

// bindRaw binds a raw receiver that reads each message with read, with
// delivery paused, so that only the draining is measured.
func bindRaw(b *testing.B, br *benchbroker.Broker, queue string, read func(message.InboundMessage)) *rawConsumer {
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
		read(m)
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
		b.Fatalf("raw receiver got %d of %d; broker: %s", c.got.Load(), n, br.State("bench"))
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
			b.Fatalf("input got %d of %d: %v; broker: %s", got, n, err, br.State("bench"))
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
// paused, before the round starts.
//
// That raw loop, the measure, reads the payload only, so it does
// less than the input, which gives every message its attributes as
// metadata. A second raw loop, raw_attrs, is the program a user writes to
// get the same information from the Go client: it also reads every
// attribute the public API offers into a map under the input's keys
// (readAttrs, which names what the API cannot give). It runs in the same
// iterations, on a queue filled for it, and the benchmark reports its
// raw_attrs_msgs/s, raw_attrs_cpu_ns/msg, raw_attrs_allocs/msg and
// raw_attrs_keys/msg (against the input's meta_keys/msg), and the input's
// throughput_ratio_vs_raw_attrs and cpu_ratio_vs_raw_attrs, medians over
// adjacent round pairs like the others: what the input costs over
// hand-written code that does the same work.
//
// Interleaved with those rounds it measures the Benthos floor
// (internal/testkit/benchfloor): a stream whose input hands out prebuilt 1 KiB
// messages with the metadata of the input's first message, in batches of
// batch_size, into an output that acks at once; it reports
// floor_cpu_ns/msg and best_cpu_ratio, (raw + floor) / raw, the lowest CPU
// ratio a Benthos input could reach in a pipeline.
//
// The raw_attrs and floor rounds run with the benchmark timer stopped, so
// that b.Loop runs as many iterations, and so as many raw and input rounds,
// as without them.
func BenchmarkSolaceInputVsRawReceiver(b *testing.B) {
	for _, batchSize := range []int{1, 32} {
		b.Run(fmt.Sprintf("batch_size=%d", batchSize), func(b *testing.B) {
			br := benchbroker.Start(b)
			br.CreateQueue("bench", "bench")
			pub := newSiPublisherURL(b, br.SMFURL())

			var rawM, attrsM, inM, floorM benchbroker.Meter
			var sample *service.Message
			var floor *benchfloor.Floor
			var attrs rawAttrsOut
			drained := func() {
				require.Eventually(b, func() bool { return br.Spooled("bench") == 0 }, 10*time.Second, time.Millisecond)
			}
			// rawRound fills the queue and drains it through a raw
			// receiver reading with read, metered by m; it is called and
			// returns with the timer stopped.
			rawRound := func(m *benchbroker.Meter, read func(message.InboundMessage), timed bool) {
				fillQueue(b, br, pub, "bench", "bench", benchMessages)
				rcv := bindRaw(b, br, "bench", read)
				if timed {
					b.StartTimer()
				}
				m.Round(benchMessages, func() { consumeRaw(b, br, rcv, benchMessages) })
				b.StopTimer()
				require.NoError(b, rcv.r.Terminate(5*time.Second))
				require.NoError(b, rcv.svc.Disconnect())
				drained()
			}
			for b.Loop() {
				b.StopTimer()
				rawRound(&rawM, readPayload, true)
				fillQueue(b, br, pub, "bench", "bench", benchMessages)
				r := bindInput(b, br, "bench", batchSize)
				b.StartTimer()
				inM.Round(benchMessages, func() { consumeInput(b, br, r, benchMessages, &sample) })
				b.StopTimer()
				require.NoError(b, r.Close(context.Background()))
				drained()
				rawRound(&attrsM, attrs.readAttrs, false)
				if floor == nil {
					floor = benchfloor.New(b, benchfloor.Shape{Payload: make([]byte, 1024), Meta: metaOf(b, sample), InputBatch: batchSize})
				}
				floor.Round(&floorM, benchMessages)
				b.StartTimer()
			}
			benchbroker.Report(b, "input", &inM, &rawM)
			benchbroker.ReportBaseline(b, "raw_attrs", &inM, &attrsM)
			benchfloor.Report(b, &floorM, &rawM)
			b.ReportMetric(float64(len(metaOf(b, sample))), "meta_keys/msg")
			b.ReportMetric(float64(len(attrs.meta)), "raw_attrs_keys/msg")
		})
	}
}

// TestRawAttrsReadsTheInputsMetadata checks that the benchmark's raw_attrs
// loop gets what the input gives: for the same message with every attribute
// the publisher can set, the same metadata keys but for those the Go API
// cannot give (named in readAttrs), with the same values.
func TestRawAttrsReadsTheInputsMetadata(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	createQueueSEMP(t, b, semp.Queue{QueueName: "attrs", AccessType: semp.AccessTypeExclusive}, "attrs/>")
	pub := newSiPublisher(t, b)
	// One copy for the input, then one for the raw receiver (sent after the
	// input closed, so that it was never delivered to the input, which
	// would make it redelivered).
	send := func(payload string) {
		pub.send(t, "attrs/eu", []string{payload}, siEveryAttribute(config.MessagePropertyMap{"region": "eu"}))
	}

	send("one")
	r := newSiReader(t, b, "queue: attrs\n")
	batch, ack := readBatch(t, r)
	require.Len(t, batch, 1)
	inMeta := metaOf(t, batch[0])
	require.NoError(t, ack(t.Context(), nil))
	require.NoError(t, r.Close(t.Context()))
	waitDepth(t, b, "attrs", 0)
	send("two")

	svc := solacekit.Service(t, b.SMFURL(), nil)
	rcv, err := svc.CreatePersistentMessageReceiverBuilder().
		WithMessageClientAcknowledgement().
		Build(resource.QueueDurableExclusive("attrs"))
	require.NoError(t, err)
	require.NoError(t, rcv.Start())
	t.Cleanup(func() { _ = rcv.Terminate(time.Second) })
	m, err := rcv.ReceiveMessage(10 * time.Second)
	require.NoError(t, err)
	var out rawAttrsOut
	out.readAttrs(m)
	require.NoError(t, rcv.Ack(m))
	assert.Equal(t, []byte("two"), out.payload)

	apiGaps := []string{"solace_destination_type", "solace_delivery_count", "solace_time_to_live", "solace_expiration"}
	var want []string
	for k := range inMeta {
		if !slices.Contains(apiGaps, k) {
			want = append(want, k)
		}
	}
	for _, k := range apiGaps {
		assert.Contains(t, inMeta, k, "the input gives %s", k)
	}
	assert.ElementsMatch(t, want, slices.Collect(maps.Keys(out.meta)))
	for k, v := range inMeta {
		switch k {
		case "solace_sender_timestamp", "solace_receive_timestamp", "solace_timestamp",
			"solace_replication_group_message_id", "region":
			// Per message, or an SDT value the input converts.
			assert.IsType(t, v, out.meta[k], k)
		default:
			if !slices.Contains(apiGaps, k) {
				assert.Equal(t, v, out.meta[k], k)
			}
		}
	}
}
