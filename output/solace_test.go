package output

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/redpanda-data/benthos/v4/public/components/pure"
	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/config"
	"solace.dev/go/messaging/pkg/solace/message"
	"solace.dev/go/messaging/pkg/solace/message/sdt"
	"solace.dev/go/messaging/pkg/solace/resource"

	"github.com/connect-solace/connect-solace/internal/testkit/componenttest"
	"github.com/connect-solace/connect-solace/internal/testkit/solacekit"
	"github.com/connect-solace/connect-solace/solacetest"
)

// newSoWriter parses yaml (after the connection block), builds and connects
// the writer.
func newSoWriter(t testing.TB, b *solacetest.Broker, yaml string) *solaceWriter {
	t.Helper()
	return newSoWriterURL(t, b.SMFURL(), yaml)
}

// newSoWriterURL is newSoWriter for a broker at url.
func newSoWriterURL(t testing.TB, url, yaml string) *solaceWriter {
	t.Helper()
	pc, err := solaceOutputSpec().ParseYAML(solacekit.ConnectionYAML(url)+yaml, nil)
	require.NoError(t, err)
	w, err := newSolaceWriterFromParsed(pc, service.MockResources())
	require.NoError(t, err)
	componenttest.Connect(t, w)
	return w
}

func soBatch(payloads []string, meta map[string]string) service.MessageBatch {
	b := make(service.MessageBatch, len(payloads))
	for i, p := range payloads {
		b[i] = service.NewMessage([]byte(p))
		for k, v := range meta {
			b[i].MetaSetMut(k, v)
		}
	}
	return b
}

func soPayloads(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	return out
}

// soWrite writes payloads as one batch (batched) or one message at a time
// (streaming), as Benthos hands them to the output.
func soWrite(t testing.TB, w *solaceWriter, writer string, payloads []string, meta map[string]string) {
	t.Helper()
	if writer == soWriterBatched {
		require.NoError(t, w.WriteBatch(t.Context(), soBatch(payloads, meta)))
		return
	}
	for _, p := range payloads {
		require.NoError(t, w.WriteBatch(t.Context(), soBatch([]string{p}, meta)))
	}
}

func TestSolaceOutputDestinations(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	var n atomic.Int64
	for _, writer := range []string{soWriterBatched, soWriterStreaming} {
		for _, mode := range []string{soDeliveryPersistent, soDeliveryDirect} {
			cases := []struct {
				name string
				// yaml is the destination config; %[1]s is a unique name.
				yaml string
				meta func(u string) map[string]string
				// queue and topic say where the messages must arrive.
				queue bool
				dest  func(u string) string
			}{
				{name: "static topic", yaml: "topic: t/%[1]s/static", dest: func(u string) string { return "t/" + u + "/static" }},
				{
					name: "interpolated topic", yaml: `topic: t/%[1]s/${! meta("region") }`,
					meta: func(string) map[string]string { return map[string]string{"region": "eu"} },
					dest: func(u string) string { return "t/" + u + "/eu" },
				},
				{name: "static queue", yaml: "queue: q-%[1]s", queue: true, dest: func(u string) string { return "q-" + u }},
				{
					name: "interpolated queue", yaml: `queue: ${! meta("q") }`, queue: true,
					meta: func(u string) map[string]string { return map[string]string{"q": "q-" + u + "-dyn"} },
					dest: func(u string) string { return "q-" + u + "-dyn" },
				},
				{
					name: "destination_type queue", yaml: "topic: q-%[1]s-dt\ndestination_type: ${! meta(\"kind\") }", queue: true,
					meta: func(string) map[string]string { return map[string]string{"kind": "queue"} },
					dest: func(u string) string { return "q-" + u + "-dt" },
				},
				{
					name: "destination_type topic", yaml: "queue: t/%[1]s/dt\ndestination_type: ${! meta(\"kind\") }",
					meta: func(string) map[string]string { return map[string]string{"kind": "topic"} },
					dest: func(u string) string { return "t/" + u + "/dt" },
				},
			}
			for _, tc := range cases {
				t.Run(writer+"/"+mode+"/"+tc.name, func(t *testing.T) {
					u := fmt.Sprintf("u%d", n.Add(1))
					dest := tc.dest(u)
					// A topic is observed through a queue subscribed to it.
					obsQueue := dest
					if !tc.queue {
						obsQueue = "obs-" + u
						require.NoError(t, b.CreateQueue("default", solacetest.QueueConfig{Name: obsQueue, Subscriptions: []string{dest}}))
					} else {
						require.NoError(t, b.CreateQueue("default", solacetest.QueueConfig{Name: dest}))
					}
					w := newSoWriter(t, b, strings.ReplaceAll(tc.yaml, "%[1]s", u)+fmt.Sprintf("\ndelivery_mode: %s\nwriter: %s\nclients: 2\n", mode, writer))
					var meta map[string]string
					if tc.meta != nil {
						meta = tc.meta(u)
					}
					payloads := soPayloads(u, 5)
					soWrite(t, w, writer, payloads, meta)

					if mode == soDeliveryDirect && tc.queue {
						// solacetest does not spool direct messages sent to a
						// queue's network topic; count what reached the broker.
						require.Eventually(t, func() bool { return b.PublishedCount("#P2P/QUE/"+dest) == len(payloads) },
							5*time.Second, 10*time.Millisecond)
						return
					}
					if mode == soDeliveryDirect {
						require.Eventually(t, func() bool { return len(solacetest.QueuePayloads(t, b, "default", obsQueue)) == len(payloads) },
							5*time.Second, 10*time.Millisecond)
					}
					// Persistent: WriteBatch returned, so every message is spooled.
					got := solacetest.QueuePayloads(t, b, "default", obsQueue)
					if writer == soWriterStreaming {
						slices.Sort(got)
					}
					assert.Equal(t, payloads, got)
				})
			}
		}
	}
}

// soReceiver binds a raw client receiver to queue q of b.
func soReceiver(t *testing.T, b *solacetest.Broker, q string) solace.PersistentMessageReceiver {
	t.Helper()
	svc := solacekit.Service(t, b.SMFURL(), config.ServicePropertyMap{
		config.TransportLayerPropertyReconnectionAttempts: 0,
	})
	rcv, err := svc.CreatePersistentMessageReceiverBuilder().Build(resource.QueueDurableExclusive(q))
	require.NoError(t, err)
	require.NoError(t, rcv.Start())
	t.Cleanup(func() { _ = rcv.Terminate(time.Second) })
	return rcv
}

func TestSolaceOutputAttributes(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	for _, writer := range []string{soWriterBatched, soWriterStreaming} {
		for _, mode := range []string{soDeliveryPersistent, soDeliveryDirect} {
			t.Run(writer+"/"+mode, func(t *testing.T) {
				u := writer + "-" + mode
				require.NoError(t, b.CreateQueue("default", solacetest.QueueConfig{Name: "attr-" + u, Subscriptions: []string{"attr/" + u}}))
				rcv := soReceiver(t, b, "attr-"+u)
				w := newSoWriter(t, b, fmt.Sprintf(`
topic: attr/%s
delivery_mode: %s
writer: %s
application_message_id: ${! meta("id") }
application_message_type: order
correlation_id: corr-${! meta("id") }
priority: ${! meta("prio") }
ttl: 1h
dmq_eligible: "false"
reply_to: replies/${! meta("id") }
sender_id: sender-1
class_of_service: "1"
partition_key: ${! meta("pk") }
http_content_type: application/json
http_content_encoding: gzip
sender_timestamp: true
metadata:
  include_prefixes: [ "up_" ]
`, u, mode, writer))
				msg := service.NewMessage([]byte(`{"a":1}`))
				msg.MetaSetMut("id", "m-1")
				msg.MetaSetMut("prio", "9")
				msg.MetaSetMut("pk", "customer-7")
				msg.MetaSetMut("up_int", int64(42))
				msg.MetaSetMut("up_float", 2.5)
				msg.MetaSetMut("up_bool", true)
				msg.MetaSetMut("up_str", "hello")
				msg.MetaSetMut("up_bytes", []byte{0, 1, 2})
				msg.MetaSetMut("other", "not sent")
				require.NoError(t, w.WriteBatch(t.Context(), service.MessageBatch{msg}))

				in, err := rcv.ReceiveMessage(5 * time.Second)
				require.NoError(t, err)
				require.NoError(t, rcv.Ack(in))
				assertAttributes(t, in)
			})
		}
	}
}

func assertAttributes(t *testing.T, in message.InboundMessage) {
	t.Helper()
	payload, _ := in.GetPayloadAsBytes()
	assert.JSONEq(t, `{"a":1}`, string(payload))
	get := func(v string, ok bool) string {
		assert.True(t, ok)
		return v
	}
	assert.Equal(t, "m-1", get(in.GetApplicationMessageID()))
	assert.Equal(t, "order", get(in.GetApplicationMessageType()))
	assert.Equal(t, "corr-m-1", get(in.GetCorrelationID()))
	assert.Equal(t, "sender-1", get(in.GetSenderID()))
	assert.Equal(t, "application/json", get(in.GetHTTPContentType()))
	assert.Equal(t, "gzip", get(in.GetHTTPContentEncoding()))
	prio, ok := in.GetPriority()
	assert.True(t, ok)
	assert.Equal(t, 9, prio)
	assert.Equal(t, 1, in.GetClassOfService())
	ts, ok := in.GetSenderTimestamp()
	assert.True(t, ok, "sender_timestamp: true stamps the send time")
	assert.WithinDuration(t, time.Now(), ts, time.Minute)

	props := in.GetProperties()
	assert.Equal(t, int64(42), mustProp(t, props, "up_int"))
	assert.Equal(t, 2.5, mustProp(t, props, "up_float"))
	assert.Equal(t, true, mustProp(t, props, "up_bool"))
	assert.Equal(t, "hello", mustProp(t, props, "up_str"))
	assert.Equal(t, []byte{0, 1, 2}, mustProp(t, props, "up_bytes"))
	assert.Equal(t, "customer-7", mustProp(t, props, config.QueuePartitionKey))
	assert.Equal(t, "replies/m-1", mustProp(t, props, "solace_reply_to"))
	assert.NotContains(t, props, "other")
	assert.NotContains(t, props, "id")
}

func mustProp(t *testing.T, props sdt.Map, key string) any {
	t.Helper()
	v, ok := props[key]
	if !assert.True(t, ok, "user property %q missing in %v", key, props) {
		return nil
	}
	return any(v)
}

// writeFailures writes batch and returns index -> error text of the
// resulting batch error. The indexer is made before the write, as Benthos
// components do.
func writeFailures(t *testing.T, w *solaceWriter, batch service.MessageBatch) map[int]string {
	t.Helper()
	idx := batch.Index()
	err := w.WriteBatch(t.Context(), batch)
	var be *service.BatchError
	require.ErrorAs(t, err, &be)
	out := map[int]string{}
	be.WalkMessagesIndexedBy(idx, func(i int, _ *service.Message, err error) bool {
		if err != nil {
			out[i] = err.Error()
		}
		return true
	})
	return out
}

func TestSolaceOutputNacks(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})

	t.Run("batched fails exactly the nacked messages", func(t *testing.T) {
		require.NoError(t, b.CreateQueue("default", solacetest.QueueConfig{Name: "nack-b"}))
		w := newSoWriter(t, b, "queue: nack-b\nclients: 1\n")
		// Warm up the publisher flow so the nacks hit the batch below.
		require.NoError(t, w.WriteBatch(t.Context(), soBatch([]string{"warm"}, nil)))

		b.Faults().NackNextPublishes(2, "Spool Over Quota")
		payloads := soPayloads("nb", 6)
		batch := soBatch(payloads, nil)
		fails := writeFailures(t, w, batch)
		require.Len(t, fails, 2)
		for _, i := range []int{0, 1} {
			assert.Contains(t, fails[i], `queue "nack-b"`)
			assert.Contains(t, fails[i], "Spool Over Quota")
		}
		assert.Equal(t, append([]string{"warm"}, payloads[2:]...), solacetest.QueuePayloads(t, b, "default", "nack-b"))
	})

	t.Run("streaming fails only the nacked message", func(t *testing.T) {
		require.NoError(t, b.CreateQueue("default", solacetest.QueueConfig{Name: "nack-s"}))
		w := newSoWriter(t, b, "queue: nack-s\nwriter: streaming\nclients: 1\n")
		require.NoError(t, w.WriteBatch(t.Context(), soBatch([]string{"s0"}, nil)))
		b.Faults().NackNextPublishes(1, "Queue Shutdown")
		batch := soBatch([]string{"s1"}, nil)
		fails := writeFailures(t, w, batch)
		assert.Equal(t, []int{0}, mapsKeys(fails))
		assert.Contains(t, fails[0], "Queue Shutdown")
		require.NoError(t, w.WriteBatch(t.Context(), soBatch([]string{"s2"}, nil)))
		assert.Equal(t, []string{"s0", "s2"}, solacetest.QueuePayloads(t, b, "default", "nack-s"))
	})

	t.Run("missing queue names the queue", func(t *testing.T) {
		require.NoError(t, b.CreateQueue("default", solacetest.QueueConfig{Name: "exists"}))
		w := newSoWriter(t, b, "queue: ${! meta(\"q\") }\nclients: 1\n")
		batch := service.MessageBatch{service.NewMessage([]byte("a")), service.NewMessage([]byte("b"))}
		batch[0].MetaSetMut("q", "exists")
		batch[1].MetaSetMut("q", "nope")
		fails := writeFailures(t, w, batch)
		require.Equal(t, []int{1}, mapsKeys(fails))
		assert.Contains(t, fails[1], `queue "nope"`)
		assert.Contains(t, fails[1], "does not exist")
		assert.Equal(t, []string{"a"}, solacetest.QueuePayloads(t, b, "default", "exists"))
	})

	t.Run("invalid attributes fail only their message", func(t *testing.T) {
		require.NoError(t, b.CreateQueue("default", solacetest.QueueConfig{Name: "inv"}))
		w := newSoWriter(t, b, "queue: inv\npriority: ${! meta(\"p\") }\n")
		batch := soBatch([]string{"ok", "bad"}, nil)
		batch[0].MetaSetMut("p", "3")
		batch[1].MetaSetMut("p", "300")
		fails := writeFailures(t, w, batch)
		require.Equal(t, []int{1}, mapsKeys(fails))
		assert.Contains(t, fails[1], "priority")
		assert.Equal(t, []string{"ok"}, solacetest.QueuePayloads(t, b, "default", "inv"))
	})
}

func mapsKeys(m map[int]string) []int {
	var out []int
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestSolaceOutputReconnect drops every connection while a stream publishes
// and checks that every message Benthos saw acknowledged is in the queue.
func TestSolaceOutputReconnect(t *testing.T) {
	for _, writer := range []string{soWriterBatched, soWriterStreaming} {
		for _, mode := range []string{soDeliveryPersistent, soDeliveryDirect} {
			t.Run(writer+"/"+mode, func(t *testing.T) {
				b := solacetest.NewTestBroker(t, solacetest.Config{})
				require.NoError(t, b.CreateQueue("default", solacetest.QueueConfig{Name: "rq", Subscriptions: []string{"r/>"}}))

				extra := ""
				if writer == soWriterBatched {
					extra = "batching: { count: 10, period: 50ms }\n"
				}
				sb := service.NewStreamBuilder()
				require.NoError(t, sb.SetLoggerYAML("level: none"))
				send, err := sb.AddBatchProducerFunc()
				require.NoError(t, err)
				require.NoError(t, sb.AddOutputYAML("solace:\n"+componenttest.IndentYAML(solacekit.ConnectionYAML(b.SMFURL())+fmt.Sprintf(
					"topic: r/x\ndelivery_mode: %s\nwriter: %s\nclients: 2\nmax_in_flight: 8\n%s", mode, writer, extra))))
				componenttest.RunStream(t, context.Background(), sb, 10*time.Second)

				const total = 400
				var (
					mu    sync.Mutex
					acked []string
				)
				var wg sync.WaitGroup
				sent := make(chan struct{}, total)
				for p := 0; p < 8; p++ {
					wg.Add(1)
					go func(p int) {
						defer wg.Done()
						for i := p; i < total; i += 8 {
							payload := fmt.Sprintf("r-%04d", i)
							ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
							err := send(ctx, soBatch([]string{payload}, nil))
							cancel()
							if err == nil {
								mu.Lock()
								acked = append(acked, payload)
								mu.Unlock()
							}
							sent <- struct{}{}
						}
					}(p)
				}
				// Drop the connections once a quarter of the messages went.
				for i := 0; i < total/4; i++ {
					<-sent
				}
				b.Faults().DropConnections()
				wg.Wait()

				mu.Lock()
				defer mu.Unlock()
				if mode == soDeliveryDirect {
					// At most once: messages sent while the client reconnected
					// may be lost; require that publishing recovered: a probe
					// sent after the drop reaches the queue. Any probe will
					// do, not only the one just sent: a direct write is done
					// once the client has the message, before the broker does,
					// so the newest probe is often not there yet (checking it
					// alone failed whenever every probe lost that race).
					require.Greater(t, len(acked), total/2)
					probe := 0
					require.Eventually(t, func() bool {
						probe++
						if send(t.Context(), soBatch([]string{fmt.Sprintf("probe-%d", probe)}, nil)) != nil {
							return false
						}
						return slices.ContainsFunc(solacetest.QueuePayloads(t, b, "default", "rq"), func(p string) bool {
							return strings.HasPrefix(p, "probe-")
						})
					}, 10*time.Second, 20*time.Millisecond)
					return
				}
				require.Len(t, acked, total, "with client reconnection every message is eventually confirmed")
				inQueue := map[string]bool{}
				for _, m := range solacetest.QueuePayloads(t, b, "default", "rq") {
					inQueue[m] = true
				}
				var missing []string
				for _, a := range acked {
					if !inQueue[a] {
						missing = append(missing, a)
					}
				}
				assert.Empty(t, missing, "messages acked to Benthos but not in the queue")
			})
		}
	}
}

// TestSolaceOutputSessionLost checks that a session gone for good turns into
// ErrNotConnected and that Connect recovers.
func TestSolaceOutputSessionLost(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	require.NoError(t, b.CreateQueue("default", solacetest.QueueConfig{Name: "lost"}))
	pc, err := solaceOutputSpec().ParseYAML(fmt.Sprintf(`
urls: [ %s ]
username: default
password: default
connect_retries: 0
reconnect_attempts: 0
queue: lost
clients: 1
`, b.SMFURL()), nil)
	require.NoError(t, err)
	w, err := newSolaceWriterFromParsed(pc, service.MockResources())
	require.NoError(t, err)
	require.ErrorIs(t, w.WriteBatch(t.Context(), soBatch([]string{"x"}, nil)), service.ErrNotConnected)
	require.NoError(t, w.Connect(t.Context()))
	defer func() { _ = w.Close(context.Background()) }()
	require.NoError(t, w.WriteBatch(t.Context(), soBatch([]string{"a"}, nil)))

	b.Faults().DropConnections()
	// Wait for the session to end before writing: publishing into a
	// publisher the client is tearing down races inside the client.
	w.poolMu.RLock()
	pool := w.pool
	w.poolMu.RUnlock()
	require.Eventually(t, func() bool { return !pool.Alive() }, 5*time.Second, 5*time.Millisecond)
	require.ErrorIs(t, w.WriteBatch(t.Context(), soBatch([]string{"b"}, nil)), service.ErrNotConnected)
	require.NoError(t, w.Connect(t.Context()))
	require.NoError(t, w.WriteBatch(t.Context(), soBatch([]string{"c"}, nil)))
	got := solacetest.QueuePayloads(t, b, "default", "lost")
	assert.Equal(t, "a", got[0])
	assert.Equal(t, "c", got[len(got)-1])
}

func TestSolaceOutputLint(t *testing.T) {
	conn := "urls: [ tcp://127.0.0.1:55555 ]\nusername: u\n"
	tests := []struct {
		name string
		yaml string
		want string // "" means no lint error
	}{
		{name: "topic", yaml: conn + "topic: a/b"},
		{name: "queue", yaml: conn + "queue: q"},
		{name: "neither", yaml: conn, want: "set exactly one of them"},
		{name: "both", yaml: conn + "topic: a\nqueue: q", want: "use destination_type"},
		{name: "custom wait with zero buffer", yaml: conn + "topic: a\nsubmission_mode: custom\nback_pressure: { strategy: wait, buffer_capacity: 0 }", want: "strategy wait needs at least 1"},
		{name: "custom reject zero buffer", yaml: conn + "topic: a\nsubmission_mode: custom\nback_pressure: { strategy: reject, buffer_capacity: 0 }"},
		{name: "batching with streaming", yaml: conn + "topic: a\nwriter: streaming\nbatching: { count: 10 }", want: "remove batching or use writer: batched"},
		{name: "zero clients", yaml: conn + "topic: a\nclients: 0", want: "field clients"},
		{name: "tcps without tls", yaml: "urls: [ tcps://h:1 ]\nusername: u\ntopic: a", want: "set tls.enabled: true"},
		{name: "bad enum", yaml: conn + "topic: a\nwriter: fast", want: "fast"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			componenttest.LintWants(t, componenttest.Output, "solace", tt.yaml, tt.want)
		})
	}
}

func TestSolaceOutputConfigMapping(t *testing.T) {
	tests := []struct {
		name   string
		yaml   string
		bp     string
		policy service.BatchPolicy
		groups int // groups published at once
	}{
		// No batching policy: nothing waits for a batch to fill.
		{name: "defaults", yaml: "", bp: "{false 1000}", groups: 8},
		{name: "lower latency streaming", yaml: "submission_mode: lower_latency\nwriter: streaming", bp: "{true 0}", groups: soDefaultMaxInFlight},
		{name: "custom", yaml: "submission_mode: custom\nback_pressure: { strategy: reject, buffer_capacity: 7 }\nbatching: { count: 3 }\nclients: 1", bp: "{true 7}", policy: service.BatchPolicy{Count: 3}, groups: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pc, err := solaceOutputSpec().ParseYAML("urls: [ tcp://127.0.0.1:1 ]\nusername: u\ntopic: a\n"+tt.yaml, nil)
			require.NoError(t, err)
			w, err := newSolaceWriterFromParsed(pc, service.MockResources())
			require.NoError(t, err)
			assert.Equal(t, tt.bp, fmt.Sprint(w.pubOpts.BackPressure))
			assert.Equal(t, tt.policy.Count, w.batchPolicy.Count)
			assert.Equal(t, tt.policy.Period, w.batchPolicy.Period)
			assert.Equal(t, tt.groups, w.gather.max)
			assert.True(t, w.pubOpts.Persistent)
		})
	}
}
