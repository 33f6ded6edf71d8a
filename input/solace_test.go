package input

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/bloblang"
	_ "github.com/redpanda-data/benthos/v4/public/components/pure"
	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/config"

	"github.com/connect-solace/connect-solace/internal/semp"
	"github.com/connect-solace/connect-solace/internal/session"
	"github.com/connect-solace/connect-solace/internal/testkit/componenttest"
	"github.com/connect-solace/connect-solace/internal/testkit/solacekit"
	"github.com/connect-solace/connect-solace/solacetest"
)

func TestSolaceInputLint(t *testing.T) {
	conn := "urls: [ tcp://127.0.0.1:55555 ]\nusername: u\n"
	sempY := "semp: { url: http://127.0.0.1:8080 }\n"
	tests := []struct {
		name string
		yaml string
		want string // "" means no lint error
	}{
		{name: "queue", yaml: conn + "queue: q"},
		{name: "topic with semp", yaml: conn + "topic: a/>\n" + sempY},
		{name: "neither", yaml: conn, want: "set exactly one of them"},
		{name: "both", yaml: conn + "queue: q\ntopic: a\n" + sempY, want: "both are set"},
		{name: "topic without semp", yaml: conn + "topic: a/>", want: "topic needs SEMP"},
		{name: "queue_name with queue", yaml: conn + "queue: q\nqueue_name: x", want: "only used with topic"},
		{name: "unbounded dedup", yaml: conn + "queue: q\ndeduplicate: true\ndedup_window: { size: 0, age: 0s }", want: "field dedup_window"},
		{name: "dedup by age only", yaml: conn + "queue: q\ndeduplicate: true\ndedup_window: { size: 0, age: 5m }"},
		{name: "dedup with cache", yaml: conn + "queue: q\ndeduplicate: true\ndedup_cache: c\ndedup_window: { size: 0, age: 0s }"},
		{name: "zero flows", yaml: conn + "queue: q\nflows: 0", want: "field flows"},
		{name: "zero batch", yaml: conn + "queue: q\nbatch_size: 0", want: "field batch_size"},
		{name: "mapping without mapping", yaml: conn + "queue: q\ntimestamp: mapping", want: "field timestamp_mapping: timestamp: mapping needs"},
		{name: "mapping unused", yaml: conn + "queue: q\ntimestamp_mapping: 'root = now()'", want: "only used with timestamp: mapping"},
		{name: "replay time missing", yaml: conn + "queue: q\nreplay: { from: time }", want: "field replay.time"},
		{name: "replay time bad", yaml: conn + "queue: q\nreplay: { from: time, time: yesterday }", want: "not an RFC 3339 time"},
		{name: "replay time ok", yaml: conn + "queue: q\nreplay: { from: time, time: '2025-01-31T12:00:00Z' }"},
		{name: "replay id missing", yaml: conn + "queue: q\nreplay: { from: message_id }", want: "field replay.message_id"},
		{name: "bad nack outcome", yaml: conn + "queue: q\nnack_outcome: dropped", want: "dropped"},
		{name: "tcps without tls", yaml: "urls: [ tcps://h:1 ]\nusername: u\nqueue: q", want: "set tls.enabled: true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			componenttest.LintWants(t, componenttest.Input, "solace", tt.yaml, tt.want)
		})
	}
}

func TestQueueNameForTopic(t *testing.T) {
	tests := []struct{ topic, want string }{
		{"orders/eu", "connect-solace/orders/eu"},
		{"orders/*/eu/>", "connect-solace/orders/_any_/eu/_all_"},
		{"a/b?c;d", "connect-solace/a/b_c_d"},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, QueueNameForTopic(tc.topic))
	}
	long := QueueNameForTopic(strings.Repeat("é/", 150))
	require.LessOrEqual(t, len(long), 200)
	require.NotEqual(t, long, QueueNameForTopic(strings.Repeat("é/", 151)), "long names stay distinct through the hash")
	require.True(t, strings.HasPrefix(long, "connect-solace/"))
}

func TestSolaceInputReplayConfig(t *testing.T) {
	conn := "urls: [ tcp://127.0.0.1:1 ]\nusername: u\nqueue: q\n"
	tests := []struct {
		yaml string
		want session.Replay
	}{
		{"", session.Replay{}},
		{"replay: { from: start }", session.Replay{Mode: session.ReplayAll}},
		{"replay: { from: time, time: '2025-01-31T12:00:00+01:00' }", session.Replay{Mode: session.ReplayFromTime, Time: time.Date(2025, 1, 31, 11, 0, 0, 0, time.UTC)}},
		{"replay: { from: message_id, message_id: 'rmid1:0000b-e79ec5d8dc3-00000000-00000001' }", session.Replay{Mode: session.ReplayAfterMessageID, MessageID: "rmid1:0000b-e79ec5d8dc3-00000000-00000001"}},
	}
	for _, tc := range tests {
		t.Run(tc.yaml, func(t *testing.T) {
			pc, err := solaceInputSpec().ParseYAML(conn+tc.yaml, nil)
			require.NoError(t, err)
			r, err := newSolaceReaderFromParsed(pc, service.MockResources())
			require.NoError(t, err)
			got := r.rcvConf.Replay
			require.Equal(t, tc.want.Mode, got.Mode)
			require.Equal(t, tc.want.MessageID, got.MessageID)
			require.True(t, tc.want.Time.Equal(got.Time), "%v != %v", got.Time, tc.want.Time)
		})
	}
}

func TestSolaceInputConfigErrors(t *testing.T) {
	conn := "urls: [ tcp://127.0.0.1:1 ]\nusername: u\n"
	tests := []struct{ name, yaml, want string }{
		{"neither", conn, "exactly one of the fields queue and topic"},
		{"topic without semp", conn + "topic: a", "needs SEMP"},
		{"unknown cache", conn + "queue: q\ndeduplicate: true\ndedup_cache: nope", `cache resource "nope" not found`},
		{"bad replay time", conn + "queue: q\nreplay: { from: time, time: x }", "not an RFC 3339 time"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pc, err := solaceInputSpec().ParseYAML(tc.yaml, nil)
			require.NoError(t, err)
			_, err = newSolaceReaderFromParsed(pc, service.MockResources())
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// siEveryAttribute builds messages with every attribute a publisher can set
// (and a TTL and class of service), plus the user properties props, for the
// tests that check the metadata they become.
func siEveryAttribute(props config.MessagePropertyMap) func(int, solace.OutboundMessageBuilder) solace.OutboundMessageBuilder {
	return func(_ int, bld solace.OutboundMessageBuilder) solace.OutboundMessageBuilder {
		return bld.WithApplicationMessageID("app-1").
			WithApplicationMessageType("order").
			WithCorrelationID("corr-1").
			WithPriority(9).
			WithSequenceNumber(77).
			WithSenderID("sender-9").
			WithHTTPContentHeader("application/json", "gzip").
			WithProperty(config.MessagePropertyPersistentTimeToLive, 90000).
			WithProperty(config.MessagePropertyClassOfService, 1).
			FromConfigurationProvider(props)
	}
}

// TestSolaceInputQueueModeMetadata consumes a queue made over SEMP and checks
// every metadata key, typed, then that the ack empties the queue.
func TestSolaceInputQueueModeMetadata(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	createQueueSEMP(t, b, semp.Queue{QueueName: "orders", AccessType: semp.AccessTypeExclusive}, "orders/>")
	pub := newSiPublisher(t, b)
	pub.send(t, "orders/eu/new", []string{`{"id":1}`}, siEveryAttribute(config.MessagePropertyMap{"region": "eu", "count": int32(3), "flag": true, "solace_reply_to": "replies/1"}))

	r := newSiReader(t, b, "queue: orders\n"+siSEMPYAML(b))
	batch, ack := readBatch(t, r)
	require.Len(t, batch, 1)
	body, err := batch[0].AsBytes()
	require.NoError(t, err)
	require.JSONEq(t, `{"id":1}`, string(body))

	meta := metaOf(t, batch[0])
	want := map[string]any{
		"solace_destination":              "orders/eu/new",
		"solace_destination_type":         "topic",
		"solace_application_message_id":   "app-1",
		"solace_application_message_type": "order",
		"solace_correlation_id":           "corr-1",
		"solace_priority":                 int64(9),
		"solace_redelivered":              false,
		"solace_time_to_live":             int64(90000),
		"solace_sequence_number":          int64(77),
		"solace_sender_id":                "sender-9",
		"solace_class_of_service":         int64(1),
		"solace_http_content_type":        "application/json",
		"solace_http_content_encoding":    "gzip",
		"solace_reply_to":                 "replies/1",
		"region":                          "eu",
		"count":                           int64(3),
		"flag":                            true,
	}
	for k, v := range want {
		assert.Equal(t, v, meta[k], "metadata %s", k)
	}
	// The expiration is not on the wire (the publisher's WithExpiration
	// stays local): it is the receive time plus the TTL.
	require.IsType(t, time.Time{}, meta["solace_expiration"])
	assert.Equal(t, meta["solace_receive_timestamp"].(time.Time).Add(90*time.Second), meta["solace_expiration"])
	for _, k := range []string{"solace_sender_timestamp", "solace_receive_timestamp", "solace_timestamp"} {
		require.IsType(t, time.Time{}, meta[k], k)
		assert.WithinDuration(t, time.Now(), meta[k].(time.Time), time.Minute, k)
	}
	assert.Equal(t, meta["solace_sender_timestamp"], meta["solace_timestamp"], "the default event time is the sender timestamp")
	assert.Equal(t, int64(1), meta["solace_delivery_count"])
	require.IsType(t, "", meta["solace_replication_group_message_id"])
	assert.True(t, strings.HasPrefix(meta["solace_replication_group_message_id"].(string), "rmid1:"), meta["solace_replication_group_message_id"])

	// Typed metadata is usable in Bloblang as such.
	out, err := batch[0].BloblangQuery(mustBloblang(t, `root = [ @solace_priority + 1, @solace_redelivered, @count * 2 ]`))
	require.NoError(t, err)
	v, err := out.AsStructured()
	require.NoError(t, err)
	require.Equal(t, []any{int64(10), false, int64(6)}, v)

	require.Equal(t, 1, stats(t, b, "orders").Unacked)
	require.NoError(t, ack(t.Context(), nil))
	waitDepth(t, b, "orders", 0)
}

// TestSolaceInputTopicModeProvisions checks that topic mode creates a durable
// non-exclusive queue with the subscription over SEMP, consumes through it,
// and leaves it in place on close.
func TestSolaceInputTopicModeProvisions(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	r := newSiReader(t, b, "topic: sensors/*/temp\n"+siSEMPYAML(b))
	qname := QueueNameForTopic("sensors/*/temp")

	q, err := sempClient(t, b).GetQueue(t.Context(), "default", qname)
	require.NoError(t, err)
	require.Equal(t, semp.AccessTypeNonExclusive, q.AccessType)
	subs, err := sempClient(t, b).ListSubscriptions(t.Context(), "default", qname)
	require.NoError(t, err)
	require.Equal(t, []string{"sensors/*/temp"}, subs)

	pub := newSiPublisher(t, b)
	pub.send(t, "sensors/k1/temp", []string{"21.5"}, nil)
	pub.send(t, "sensors/k1/humidity", []string{"ignored"}, nil)
	batch, ack := readBatch(t, r)
	require.Len(t, batch, 1)
	body, _ := batch[0].AsBytes()
	require.Equal(t, "21.5", string(body))
	require.NoError(t, ack(t.Context(), nil))
	waitDepth(t, b, qname, 0)

	require.NoError(t, r.Close(t.Context()))
	pub.send(t, "sensors/k2/temp", []string{"19.0"}, nil)
	waitDepth(t, b, qname, 1)

	// A second input on the same topic reuses the queue and gets the backlog.
	r2 := newSiReader(t, b, "topic: sensors/*/temp\n"+siSEMPYAML(b))
	batch, ack = readBatch(t, r2)
	body, _ = batch[0].AsBytes()
	require.Equal(t, "19.0", string(body))
	require.NoError(t, ack(t.Context(), nil))
	waitDepth(t, b, qname, 0)
}

func TestSolaceInputQueueModeMissingQueue(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	pc, err := solaceInputSpec().ParseYAML(solacekit.ConnectionYAML(b.SMFURL())+"queue: ghost\n"+siSEMPYAML(b), nil)
	require.NoError(t, err)
	r, err := newSolaceReaderFromParsed(pc, service.MockResources())
	require.NoError(t, err)
	err = r.Connect(t.Context())
	require.ErrorContains(t, err, `queue "ghost" does not exist`)
}

func TestSolaceInputNackOutcomes(t *testing.T) {
	tests := []struct {
		outcome  string
		dmqDepth int
	}{
		{outcome: "failed", dmqDepth: 0},
		{outcome: "rejected", dmqDepth: 1},
	}
	for _, tc := range tests {
		t.Run(tc.outcome, func(t *testing.T) {
			b := solacetest.NewTestBroker(t, solacetest.Config{})
			createQueueSEMP(t, b, semp.Queue{QueueName: "dmq"})
			createQueueSEMP(t, b, semp.Queue{QueueName: "work", DeadMsgQueue: "dmq"}, "jobs")
			pub := newSiPublisher(t, b)
			pub.send(t, "jobs", []string{"job-1"}, func(_ int, bld solace.OutboundMessageBuilder) solace.OutboundMessageBuilder {
				return bld.WithProperty(config.MessagePropertyPersistentDMQEligible, true)
			})
			r := newSiReader(t, b, "queue: work\nnack_outcome: "+tc.outcome+"\n")
			batch, ack := readBatch(t, r)
			require.Equal(t, false, metaOf(t, batch[0])["solace_redelivered"])
			require.NoError(t, ack(t.Context(), errors.New("processing failed")))

			if tc.outcome == "failed" {
				batch, ack = readBatch(t, r)
				body, _ := batch[0].AsBytes()
				require.Equal(t, "job-1", string(body))
				require.Equal(t, true, metaOf(t, batch[0])["solace_redelivered"])
				require.Equal(t, int64(2), metaOf(t, batch[0])["solace_delivery_count"])
				require.Equal(t, 1, stats(t, b, "work").Redelivered)
				require.NoError(t, ack(t.Context(), nil))
			}
			waitDepth(t, b, "work", 0)
			waitDepth(t, b, "dmq", tc.dmqDepth)
		})
	}
}

func TestSolaceInputSelector(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	createQueueSEMP(t, b, semp.Queue{QueueName: "q", AccessType: semp.AccessTypeNonExclusive}, "t")
	pub := newSiPublisher(t, b)
	regions := []string{"us", "eu", "apac", "eu"}
	pub.send(t, "t", []string{"m0", "m1", "m2", "m3"}, func(i int, bld solace.OutboundMessageBuilder) solace.OutboundMessageBuilder {
		return bld.FromConfigurationProvider(config.MessagePropertyMap{"region": regions[i]})
	})
	r := newSiReader(t, b, "queue: q\nbatch_size: 10\nselector: \"region = 'eu'\"\n")
	var got []string
	for len(got) < 2 {
		batch, ack := readBatch(t, r)
		for _, m := range batch {
			body, _ := m.AsBytes()
			got = append(got, string(body))
		}
		require.NoError(t, ack(t.Context(), nil))
	}
	require.Equal(t, []string{"m1", "m3"}, got)
	waitDepth(t, b, "q", 2)
}

func TestSolaceInputFlows(t *testing.T) {
	tests := []struct {
		name      string
		access    string
		consumers int
	}{
		{name: "non-exclusive", access: semp.AccessTypeNonExclusive, consumers: 3},
		{name: "exclusive falls back to one", access: semp.AccessTypeExclusive, consumers: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := solacetest.NewTestBroker(t, solacetest.Config{})
			createQueueSEMP(t, b, semp.Queue{QueueName: "q", AccessType: tc.access}, "t")
			r := newSiReader(t, b, "queue: q\nflows: 3\nbatch_size: 8\n"+siSEMPYAML(b))
			require.Equal(t, tc.consumers, stats(t, b, "q").Consumers)

			const n = 60
			newSiPublisher(t, b).send(t, "t", siPayloads("m", n), nil)
			got := map[string]int{}
			for len(got) < n {
				batch, ack := readBatch(t, r)
				for _, m := range batch {
					body, _ := m.AsBytes()
					got[string(body)]++
				}
				require.NoError(t, ack(t.Context(), nil))
			}
			for _, p := range siPayloads("m", n) {
				require.Equal(t, 1, got[p], p)
			}
			waitDepth(t, b, "q", 0)
		})
	}
}

func TestSolaceInputTimestamp(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	createQueueSEMP(t, b, semp.Queue{QueueName: "q"}, "t")
	pub := newSiPublisher(t, b)
	tests := []struct {
		name  string
		yaml  string
		check func(t *testing.T, meta map[string]any)
	}{
		{"sender", "", func(t *testing.T, meta map[string]any) {
			require.Equal(t, meta["solace_sender_timestamp"], meta["solace_timestamp"])
		}},
		{"receive", "timestamp: receive\n", func(t *testing.T, meta map[string]any) {
			require.Equal(t, meta["solace_receive_timestamp"], meta["solace_timestamp"])
		}},
		{"mapping", "timestamp: mapping\ntimestamp_mapping: 'root = this.at.ts_parse(\"2006-01-02T15:04:05Z07:00\")'\n", func(t *testing.T, meta map[string]any) {
			require.True(t, time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC).Equal(meta["solace_timestamp"].(time.Time)))
		}},
		{"mapping unix seconds", "timestamp: mapping\ntimestamp_mapping: 'root = this.unix'\n", func(t *testing.T, meta map[string]any) {
			require.Equal(t, int64(1700000000), meta["solace_timestamp"].(time.Time).Unix())
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newSiReader(t, b, "queue: q\n"+tc.yaml)
			pub.send(t, "t", []string{`{"at":"2024-05-06T07:08:09Z","unix":1700000000}`}, nil)
			batch, ack := readBatch(t, r)
			tc.check(t, metaOf(t, batch[0]))
			require.NoError(t, ack(t.Context(), nil))
			require.NoError(t, r.Close(t.Context()))
		})
	}
}

func TestSolaceInputBacklogGauge(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	createQueueSEMP(t, b, semp.Queue{QueueName: "q"}, "t")
	newSiPublisher(t, b).send(t, "t", siPayloads("m", 7), nil)
	res, gauges := siResourcesWithMetrics(t)
	r := newSiReaderWith(t, b, res, "queue: q\nbatch_size: 7\nbacklog_poll_interval: 20ms\n"+siSEMPYAML(b))
	msgs := func() int64 { return gauges.get("solace_input_backlog_messages") }
	bytes := func() int64 { return gauges.get("solace_input_backlog_bytes") }
	require.Eventually(t, func() bool { return msgs() == 7 }, 5*time.Second, 10*time.Millisecond)
	require.Positive(t, bytes())
	got := 0
	for got < 7 {
		batch, ack := readBatch(t, r)
		got += len(batch)
		require.NoError(t, ack(t.Context(), nil))
	}
	require.Eventually(t, func() bool { return msgs() == 0 && bytes() == 0 }, 5*time.Second, 10*time.Millisecond)
}

func mustBloblang(t testing.TB, mapping string) *bloblang.Executor {
	t.Helper()
	exec, err := bloblang.Parse(mapping)
	require.NoError(t, err)
	return exec
}

// TestSolaceInputMetadataPerMessageShape reads messages whose metadata key
// sets differ (with and without a correlation id and sequence number):
// each carries exactly its own keys, with no value left unset, however the
// messages are built.
func TestSolaceInputMetadataPerMessageShape(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	createQueueSEMP(t, b, semp.Queue{QueueName: "shapes", AccessType: semp.AccessTypeExclusive}, "shapes/>")
	pub := newSiPublisher(t, b)
	withCorr := func(_ int, bld solace.OutboundMessageBuilder) solace.OutboundMessageBuilder {
		return bld.WithCorrelationID("c").WithSequenceNumber(5)
	}
	pub.send(t, "shapes/a", []string{"1", "2"}, nil)
	pub.send(t, "shapes/a", []string{"3"}, withCorr)
	pub.send(t, "shapes/b", []string{"4"}, nil)

	r := newSiReader(t, b, "queue: shapes\nbatch_size: 1\n"+siSEMPYAML(b))
	for i, hasCorr := range []bool{false, false, true, false} {
		batch, ack := readBatch(t, r)
		require.Len(t, batch, 1)
		meta := metaOf(t, batch[0])
		for k, v := range meta {
			require.NotNil(t, v, "message %d: metadata %s", i, k)
		}
		_, gotCorr := meta["solace_correlation_id"]
		_, gotSeq := meta["solace_sequence_number"]
		require.Equal(t, hasCorr, gotCorr, "message %d: %v", i, meta)
		require.Equal(t, hasCorr, gotSeq, "message %d: %v", i, meta)
		require.Contains(t, meta, "solace_timestamp")
		require.NoError(t, ack(t.Context(), nil))
	}
}
