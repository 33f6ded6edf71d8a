package output

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connect-solace/connect-solace/internal/interp"
	"github.com/connect-solace/connect-solace/internal/session"
	"github.com/connect-solace/connect-solace/internal/solacecfg"
	"github.com/connect-solace/connect-solace/internal/tally"
	"github.com/connect-solace/connect-solace/internal/tracingcfg"
)

const (
	soFieldTopic            = "topic"
	soFieldQueue            = "queue"
	soFieldDestinationType  = "destination_type"
	soFieldDeliveryMode     = "delivery_mode"
	soFieldWriter           = "writer"
	soFieldBatching         = "batching"
	soFieldSubmissionMode   = "submission_mode"
	soFieldBackPressure     = "back_pressure"
	soFieldBPStrategy       = "strategy"
	soFieldBPBufferCapacity = "buffer_capacity"
	soFieldClients          = "clients"
	soFieldMaxInFlight      = "max_in_flight"
	soFieldLatencyMetrics   = "publish_latency_metrics"
	soFieldSenderTimestamp  = "sender_timestamp"
	soFieldMetadata         = "metadata"
	soFieldReply            = "reply"
)

// Values of the enum fields.
const (
	soDeliveryPersistent = "persistent"
	soDeliveryDirect     = "direct"

	soWriterBatched   = "batched"
	soWriterStreaming = "streaming"

	soSubmitHigherThroughput = "higher_throughput"
	soSubmitLowerLatency     = "lower_latency"
	soSubmitCustom           = "custom"

	soDestTopic = "topic"
	soDestQueue = "queue"
)

// Client buffer sizes behind submission_mode; see the field description.
const (
	soHigherThroughputBuffer = 1000
	// soDefaultMaxInFlight is max_in_flight's default: without a batching
	// policy it bounds the messages in flight (see solace_writer.go).
	soDefaultMaxInFlight = 256
)

func solaceOutputSpec() *service.ConfigSpec {
	return solacecfg.Spec("Publishes messages to Solace PubSub+ topics or queues, with per-message broker confirmations.", `
Publishes each message to a topic or a queue of a Solace PubSub+ event broker through the Solace Go client.

### Delivery guarantees

With `+"`delivery_mode: persistent`"+` (the default) a batch is acknowledged to Benthos only after the broker confirmed
every message of it. A message the broker rejects (for example a full queue, "Spool Over Quota") fails on its own
through a batch error that names the destination and the broker's reason, so `+"`fallback`"+`, `+"`reject_errored`"+` or
`+"`retry`"+` act on exactly those messages; messages the broker confirmed are never reported as failed.
If the connection drops, the client reconnects (`+"`reconnect_attempts`"+`) and re-sends what the broker had not yet
confirmed. If the session is lost for good, messages without a confirmation are failed (or, when none of the batch was
confirmed, the whole batch is retried after Benthos reconnects), so nothing is dropped silently. Retries can duplicate
messages: delivery is at least once.

With `+"`delivery_mode: direct`"+` the broker confirms nothing: a message counts as sent once the client accepted it, and
it is lost if the connection drops before the broker forwarded it. Direct delivery is at most once.

### Destinations

Exactly one of `+"`topic`"+` and `+"`queue`"+` is set; both are interpolated, so every message can go to its own topic
or queue. A queue is reached through its network topic `+"`#P2P/QUE/<name>`"+`; publishing to a queue that does not exist
fails with an error naming the queue. To choose topic or queue per message, set `+"`destination_type`"+`:

`+"```yaml"+`
output:
  solace:
    urls: [ tcp://localhost:55555 ]
    username: app
    password: ${SOLACE_PASSWORD}
    topic: ${! meta("destination") }
    destination_type: ${! meta("destination_kind") } # "topic" or "queue"
`+"```"+`

### Memory

Memory is bounded by configuration, not by how many messages a run publishes. The output holds at most
`+"`max_in_flight`"+` batches: single messages without a batching policy (the default), of up to the policy's count each with one. Each of the `+"`clients`"+` sessions holds, in the
Solace C library, its client buffer (`+"`submission_mode`"+`: `+strconv.Itoa(soHigherThroughputBuffer)+` messages for
`+"`higher_throughput`"+`, none for `+"`lower_latency`"+`, `+"`back_pressure.buffer_capacity`"+` for `+"`custom`"+`) plus up to
255 messages the broker has not confirmed yet; each message's copy is freed as soon as the broker confirms it. The
library takes message data from pools of blocks (the smallest is 10 KB) and keeps freed blocks for reuse, so its memory
follows the peak number of messages it holds, with the defaults 4 × (1000 + 255), not the number published. Lower
`+"`clients`"+`, the buffer or `+"`max_in_flight`"+` to use less.

### Metrics

- `+"`solace_output_published`"+`: messages confirmed by the broker (persistent) or accepted by the client (direct); added up and reported within 100 ms, not per batch, which saves a metric lookup per batch.
- `+"`solace_output_publish_failures`"+` with label `+"`reason`"+`: failed messages, by the client's subcode name of a broker rejection, or `+"`connection_lost`"+`, `+"`invalid_message`"+`, `+"`unknown_queue`"+`, `+"`timeout`"+`. The error logged for a failed batch names the destination and the broker's reason.
- `+"`solace_output_publish_latency_ns`"+`: time from publish to broker confirmation (persistent, when `+"`publish_latency_metrics`"+` is on); sampled, at most one message per 10 ms, so every message below 100 messages a second, which saves a metric lookup and a histogram update per message above.
- `+"`solace_output_reconnects`"+` / `+"`solace_output_connection_interrupted`"+`: client reconnections and lost sessions.

### Invalid values

Static values of `+"`topic`"+` (1 to 250 bytes of UTF-8, no NUL, at most 128 levels), `+"`queue`"+` (1 to 200 bytes, none of `+"`'*<>&;`"+`, no control characters or empty levels), `+"`priority`"+` (0 to 255), `+"`class_of_service`"+` (0 to 2), `+"`ttl`"+` (0 or more), `+"`dmq_eligible`"+` and `+"`destination_type`"+` are checked by lint and at start-up. Interpolated values are checked per message: a message with a bad value fails on its own with the reason (`+"`reason: invalid_message`"+`).`,
		`this.solace_output_lint_config()`).
		Field(soPayloadTypeField()).
		Fields(
			service.NewInterpolatedStringField(soFieldTopic).
				Description("The topic to publish to. Exactly one of `topic` and `queue` must be set.").
				Example("orders/created").Example(`orders/${! json("region") }/created`).
				Default(""),
			service.NewInterpolatedStringField(soFieldQueue).
				Description("The queue to publish to, through its network topic `#P2P/QUE/<name>`. Exactly one of `topic` and `queue` must be set.").
				Example("orders").Example(`${! meta("target_queue") }`).
				Default(""),
			service.NewInterpolatedStringField(soFieldDestinationType).
				Description("Chooses per message whether the name from `topic` (or `queue`) is a `topic` or a `queue`. Empty means the kind of the field that is set. Any other value fails the message.").
				Example(`${! meta("destination_kind") }`).
				Default("").Advanced().
				LintRule(soLint(soFieldDestinationType)),
			service.NewStringEnumField(soFieldDeliveryMode, soDeliveryPersistent, soDeliveryDirect).
				Description("`persistent`: guaranteed messages; a batch completes only after the broker confirmed every message (at least once). `direct`: no broker confirmation; messages can be lost when the connection drops (at most once).").
				Default(soDeliveryPersistent),
			service.NewStringEnumField(soFieldWriter, soWriterBatched, soWriterStreaming).
				Description(soWriterDescription).
				Default(soWriterBatched),
			service.NewBatchPolicyField(soFieldBatching).
				Description("An optional batching policy of `writer: batched`: Benthos then holds messages until a batch is complete (by count, size or period) and the output publishes each batch on one session, in order. Without one (the default) nothing waits for a batch: see `writer`."),
			service.NewStringEnumField(soFieldSubmissionMode, soSubmitHigherThroughput, soSubmitLowerLatency, soSubmitCustom).
				Description(`How the client hands messages to the network. The broker's publish window is 255 unconfirmed messages per session (fixed by the client), so throughput also scales with `+"`clients`"+`.
- `+"`higher_throughput`"+`: back-pressure strategy wait (`+"`BUFFER_WAIT_WHEN_FULL`"+`) with a `+strconv.Itoa(soHigherThroughputBuffer)+`-message client buffer (`+"`solace.messaging.publisher.back-pressure.buffer-capacity`"+`); a publish call returns once the message is buffered and a client goroutine writes it out.
- `+"`lower_latency`"+`: back-pressure strategy reject (`+"`BUFFER_REJECT_WHEN_FULL`"+`) with buffer capacity 0: each message is written to the socket in the publish call itself, with no buffer hand-over; when the socket is full the output waits for the client's readiness signal and retries.
- `+"`custom`"+`: the `+"`back_pressure`"+` fields.`).
				Default(soSubmitHigherThroughput),
			service.NewObjectField(soFieldBackPressure,
				service.NewStringEnumField(soFieldBPStrategy, "wait", "reject").
					Description("`wait` blocks in the client when its buffer is full; `reject` makes the output wait for the client's readiness signal and retry.").
					Default("wait"),
				service.NewIntField(soFieldBPBufferCapacity).
					Description("The client's publish buffer in messages. `wait` needs at least 1; with `reject`, 0 writes straight to the socket.").
					Default(soHigherThroughputBuffer),
			).Description("Client back-pressure settings, used only with `submission_mode: custom`.").Optional().Advanced(),
			service.NewIntField(soFieldClients).
				Description("How many Solace sessions publish in parallel. Each batch goes to one session, so its messages keep their order. Sessions are filled in order: a batch goes to the first session whose publish window (255 unconfirmed messages) has room for it, so a load that one session carries uses one session (every session in use costs wake-ups and socket writes of its own), and the others take over as the messages in flight need their windows.").
				Default(4),
			service.NewOutputMaxInFlightField().Default(soDefaultMaxInFlight),
			service.NewBoolField(soFieldLatencyMetrics).
				Description("Record the time from publish to broker confirmation in the `solace_output_publish_latency_ns` timer. Persistent delivery only.").
				Default(true).Advanced(),
		).
		Fields(soAttrFields()...).
		Fields(
			service.NewBoolField(soFieldSenderTimestamp).
				Description("Whether the client stamps every message with its send time (the SMF sender timestamp, `solace_sender_timestamp` on the `solace` input). Off by default because the stamp is expensive in the Solace C library: measured against the raw client (`make bench`, case `batched_persistent_sender_timestamp`), it costs the client about 20% more CPU per persistent message and about 10% per direct message through the session property, and no less when set on each message through the C API. Without it, consumers that want an event time use the receive time; the `solace` input's `timestamp: sender` falls back to it.").
				Default(false).Advanced(),
			service.NewBoolField(soFieldReply).
				Description("Send every message as a reply to a Solace request: with the SMF reply flag set, which a Solace requester (the Go client's `RequestReplyMessagePublisher`, JCSMP's `Requestor`, the `solace_request_reply` processor) needs to take it as the answer. Set `topic` to the request's reply-to and `correlation_id` to its correlation id, as the `solace` input gives them: `${! meta(\"solace_reply_to\") }` and `${! meta(\"solace_correlation_id\") }`. Replies are usually sent with `delivery_mode: direct`, as requests are. The `solace` input's `requests` mode answers requests itself; this serves pipelines that receive requests another way. The flag is set through the client's C library (the input's native read path), so a client version that path was not verified with fails at connect.").
				Example(true).Default(false).Advanced(),
			service.NewMetadataFilterField(soFieldMetadata).
				Description("Which metadata keys become Solace user properties. Values keep their types: integers become int64, floats float64, booleans bool, byte slices bytes, everything else a string. Keys starting with `solace.messaging.` are never sent. Without a filter no metadata is sent, but for the trace context (see `inject_tracing_map`).").
				Optional(),
			tracingcfg.InjectField(tracingcfg.UserProperties),
		).
		Example(tracingcfg.OutputExample("solace", "    urls: [ tcp://localhost:55555 ]\n    username: app\n    password: ${SOLACE_PASSWORD}\n    topic: orders/created\n"))
}

// newSolaceOutput builds the solace output with its batch policy and
// max_in_flight.
func newSolaceOutput(conf *service.ParsedConfig, mgr *service.Resources) (out service.BatchOutput, pol service.BatchPolicy, maxInFlight int, err error) {
	var w *solaceWriter
	if w, err = newSolaceWriterFromParsed(conf, mgr); err != nil {
		return
	}
	if maxInFlight, err = conf.FieldMaxInFlight(); err != nil {
		return
	}
	return w, w.batchPolicy, maxInFlight, nil
}

type solaceWriter struct {
	log *service.Logger

	conn        session.Config
	clients     int
	pubOpts     session.PublisherOptions
	batchPolicy service.BatchPolicy
	// ackNow marks messages of the streaming persistent writer "ack
	// immediately", so the broker does not hold back their confirmation.
	ackNow bool
	// payloadType is payload_type (solace_payload.go).
	payloadType session.PayloadType
	latency     bool

	// tmpl holds every static attribute, resolved and checked once by the
	// constructor; each message starts as a copy of it.
	tmpl session.Outbound
	// fields plans the interpolated fields (soRules): the static ones are
	// applied to tmpl, the dynamic ones evaluated per batch.
	fields *interp.Plan[session.Outbound]
	// destChecked: the destination is static and was validated once.
	destChecked bool
	props       tracingcfg.Properties // metadata and trace context as user properties

	mPublished   *tally.Tally // added up: a MetricCounter resolves its path per Incr
	mFailures    *service.MetricCounter
	mLatency     *tally.Sampled // at most one message per 10 ms
	mReconnects  *service.MetricCounter
	mInterrupted *service.MetricCounter

	gather soGather // the group commit of WriteBatch (solace_writer.go)

	poolMu sync.RWMutex
	pool   *session.Pool
	// dropping counts the pools dropPool is closing; Close waits for them.
	dropping sync.WaitGroup
}

func newSolaceWriterFromParsed(conf *service.ParsedConfig, mgr *service.Resources) (*solaceWriter, error) {
	w := &solaceWriter{log: mgr.Logger()}
	var err error
	if w.conn, err = solacecfg.ConfigFromParsed(conf); err != nil {
		return nil, err
	}
	if w.conn.SendTimestamps, err = conf.FieldBool(soFieldSenderTimestamp); err != nil {
		return nil, err
	}
	problems, err := soProblems(conf)
	if err != nil {
		return nil, err
	}
	if err := errors.Join(problems...); err != nil {
		return nil, err
	}
	if w.clients, err = conf.FieldInt(soFieldClients); err != nil {
		return nil, err
	}

	pt, err := conf.FieldString(soFieldPayloadType)
	if err != nil {
		return nil, err
	}
	w.payloadType = soPayloadType(pt)
	if err = w.planFields(conf); err != nil {
		return nil, err
	}
	if w.tmpl.Reply, err = conf.FieldBool(soFieldReply); err != nil {
		return nil, err
	}
	if w.props, err = tracingcfg.PropertiesFromParsed(conf, soFieldMetadata); err != nil {
		return nil, err
	}

	mode, err := conf.FieldString(soFieldDeliveryMode)
	if err != nil {
		return nil, err
	}
	w.pubOpts.Persistent = mode == soDeliveryPersistent
	if w.latency, err = conf.FieldBool(soFieldLatencyMetrics); err != nil {
		return nil, err
	}
	w.latency = w.latency && w.pubOpts.Persistent

	if w.pubOpts.BackPressure, err = backPressureFromParsed(conf); err != nil {
		return nil, err
	}

	writer, err := conf.FieldString(soFieldWriter)
	if err != nil {
		return nil, err
	}
	w.ackNow = writer == soWriterStreaming && w.pubOpts.Persistent
	if writer == soWriterBatched {
		if w.batchPolicy, err = conf.FieldBatchPolicy(soFieldBatching); err != nil {
			return nil, err
		}
	}
	if w.gather.max, err = soMaxGroups(conf, writer, w.clients); err != nil {
		return nil, err
	}

	m := mgr.Metrics()
	w.mPublished = tally.New(m.NewCounter("solace_output_published"))
	w.mFailures = m.NewCounter("solace_output_publish_failures", "reason")
	w.mLatency = tally.NewSampled(m.NewTimer("solace_output_publish_latency_ns"))
	w.mReconnects = m.NewCounter("solace_output_reconnects")
	w.mInterrupted = m.NewCounter("solace_output_connection_interrupted")
	return w, nil
}

// backPressureFromParsed maps submission_mode to client back-pressure
// settings, as documented on the field.
func backPressureFromParsed(conf *service.ParsedConfig) (session.BackPressure, error) {
	mode, err := conf.FieldString(soFieldSubmissionMode)
	if err != nil {
		return session.BackPressure{}, err
	}
	switch mode {
	case soSubmitLowerLatency:
		return session.BackPressure{Reject: true, BufferSize: 0}, nil
	case soSubmitCustom:
		bp := session.BackPressure{BufferSize: soHigherThroughputBuffer}
		strategy, size, ok, err := soBackPressureFields(conf)
		if err != nil || !ok {
			return bp, err
		}
		bp.Reject = strategy == "reject"
		bp.BufferSize = uint(size) // soProblems checked it
		return bp, nil
	default:
		return session.BackPressure{BufferSize: soHigherThroughputBuffer}, nil
	}
}

// soBackPressureFields reads the back_pressure fields as written; ok is
// false when the object is absent.
func soBackPressureFields(conf *service.ParsedConfig) (strategy string, size int, ok bool, err error) {
	if !conf.Contains(soFieldBackPressure) {
		return "", 0, false, nil
	}
	ns := conf.Namespace(soFieldBackPressure)
	if strategy, err = ns.FieldString(soFieldBPStrategy); err != nil {
		return "", 0, false, err
	}
	if size, err = ns.FieldInt(soFieldBPBufferCapacity); err != nil {
		return "", 0, false, err
	}
	return strategy, size, true, nil
}

func (w *solaceWriter) Connect(ctx context.Context) error {
	w.poolMu.Lock()
	defer w.poolMu.Unlock()
	if w.pool != nil {
		return nil
	}
	opts := w.pubOpts
	opts.OnDirectFailure = func(error) { w.mFailures.Incr(1, "direct_send_failed") }
	events := session.Events{
		OnReconnected: func() { w.mReconnects.Incr(1) },
		OnInterrupted: func(error) { w.mInterrupted.Incr(1) },
	}
	pool, err := session.NewPool(ctx, w.conn, w.clients, opts, w.log, events)
	if err != nil {
		return err
	}
	if w.tmpl.Reply {
		if err := pool.Publisher().NativeErr(); err != nil {
			_ = pool.Close(ctx)
			return fmt.Errorf("field %s: cannot set the reply flag: %w", soFieldReply, err)
		}
	}
	w.pool = pool
	return nil
}

// dropPool forgets a pool whose session ended, so the next write reports
// ErrNotConnected and Benthos calls Connect.
func (w *solaceWriter) dropPool(p *session.Pool) {
	w.poolMu.Lock()
	if w.pool == p {
		w.pool = nil
	}
	w.dropping.Add(1)
	w.poolMu.Unlock()
	go func() {
		defer w.dropping.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = p.Close(ctx)
	}()
}

// Close closes the pool and waits, until ctx ends, for the pools dropPool is
// still closing (each of those gives up after 10 s on its own).
func (w *solaceWriter) Close(ctx context.Context) error {
	defer w.mPublished.Flush()
	w.poolMu.Lock()
	pool := w.pool
	w.pool = nil
	w.poolMu.Unlock()
	var err error
	if pool != nil {
		err = pool.Close(ctx)
	}
	dropped := make(chan struct{})
	go func() {
		w.dropping.Wait()
		close(dropped)
	}()
	select {
	case <-dropped:
	case <-ctx.Done():
		err = errors.Join(err, fmt.Errorf("waiting for dropped sessions to close: %w", ctx.Err()))
	}
	return err
}
