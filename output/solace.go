package output

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connect-solace/connect-solace/internal/session"
)

const (
	soFieldTopic               = "topic"
	soFieldQueue               = "queue"
	soFieldDestinationType     = "destination_type"
	soFieldDeliveryMode        = "delivery_mode"
	soFieldWriter              = "writer"
	soFieldBatching            = "batching"
	soFieldSubmissionMode      = "submission_mode"
	soFieldBackPressure        = "back_pressure"
	soFieldBPStrategy          = "strategy"
	soFieldBPBufferCapacity    = "buffer_capacity"
	soFieldClients             = "clients"
	soFieldMaxInFlight         = "max_in_flight"
	soFieldLatencyMetrics      = "publish_latency_metrics"
	soFieldAppMessageID        = "application_message_id"
	soFieldAppMessageType      = "application_message_type"
	soFieldCorrelationID       = "correlation_id"
	soFieldPriority            = "priority"
	soFieldTTL                 = "ttl"
	soFieldDMQEligible         = "dmq_eligible"
	soFieldReplyTo             = "reply_to"
	soFieldSenderID            = "sender_id"
	soFieldClassOfService      = "class_of_service"
	soFieldPartitionKey        = "partition_key"
	soFieldHTTPContentType     = "http_content_type"
	soFieldHTTPContentEncoding = "http_content_encoding"
	soFieldSenderTimestamp     = "sender_timestamp"
	soFieldMetadata            = "metadata"
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
	soDefaultBatchCount      = 50
	soDefaultBatchPeriod     = "5s"
)

func solaceOutputSpec() *service.ConfigSpec {
	return service.NewConfigSpec().
		Beta().
		Categories("Services").
		Summary("Publishes messages to Solace PubSub+ topics or queues, with per-message broker confirmations.").
		Description(`
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
`+"`max_in_flight`"+` batches (of up to the batch policy's count each). Each of the `+"`clients`"+` sessions holds, in the
Solace C library, its client buffer (`+"`submission_mode`"+`: `+strconv.Itoa(soHigherThroughputBuffer)+` messages for
`+"`higher_throughput`"+`, none for `+"`lower_latency`"+`, `+"`back_pressure.buffer_capacity`"+` for `+"`custom`"+`) plus up to
255 messages the broker has not confirmed yet; each message's copy is freed as soon as the broker confirms it. The
library takes message data from pools of blocks (the smallest is 10 KB) and keeps freed blocks for reuse, so its memory
follows the peak number of messages it holds, with the defaults 4 × (1000 + 255), not the number published. Lower
`+"`clients`"+`, the buffer or `+"`max_in_flight`"+` to use less.

### Metrics

- `+"`solace_output_published`"+`: messages confirmed by the broker (persistent) or accepted by the client (direct).
- `+"`solace_output_publish_failures`"+` with label `+"`reason`"+`: failed messages, by the broker's reason or `+"`connection_lost`"+`, `+"`invalid_message`"+`, `+"`unknown_queue`"+`, `+"`timeout`"+`.
- `+"`solace_output_publish_latency_ns`"+`: time from publish to broker confirmation (persistent, when `+"`publish_latency_metrics`"+` is on).
- `+"`solace_output_reconnects`"+` / `+"`solace_output_connection_interrupted`"+`: client reconnections and lost sessions.`).
		Fields(session.ConnectionFields()...).
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
				Default("").Advanced(),
			service.NewStringEnumField(soFieldDeliveryMode, soDeliveryPersistent, soDeliveryDirect).
				Description("`persistent`: guaranteed messages; a batch completes only after the broker confirmed every message (at least once). `direct`: no broker confirmation; messages can be lost when the connection drops (at most once).").
				Default(soDeliveryPersistent),
			service.NewStringEnumField(soFieldWriter, soWriterBatched, soWriterStreaming).
				Description("`batched` collects messages by the `batching` policy (count 50 / period 5s unless set) and publishes each batch in one go, waiting once for all its confirmations: the highest throughput. `streaming` publishes every message as it arrives, without batching, for the lowest latency; `max_in_flight` messages are then in flight at once, and persistent messages ask the broker to acknowledge them immediately rather than in its usual windowed batches.").
				Default(soWriterBatched),
			service.NewBatchPolicyField(soFieldBatching).
				Description("The batching policy of `writer: batched`. When no condition is set, count 50 and period 5s apply."),
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
				Description("How many Solace sessions publish in parallel. Each batch goes to one session, so its messages keep their order.").
				Default(4),
			service.NewOutputMaxInFlightField().Default(64),
			service.NewBoolField(soFieldLatencyMetrics).
				Description("Record the time from publish to broker confirmation in the `solace_output_publish_latency_ns` timer. Persistent delivery only.").
				Default(true).Advanced(),
			service.NewInterpolatedStringField(soFieldAppMessageID).
				Description("The application message id (JMSMessageID for JMS consumers). Empty leaves it unset.").
				Example(`${! meta("id") }`).Default(""),
			service.NewInterpolatedStringField(soFieldAppMessageType).
				Description("The application message type (JMSType). Empty leaves it unset.").
				Default("").Advanced(),
			service.NewInterpolatedStringField(soFieldCorrelationID).
				Description("The correlation id (JMSCorrelationID). Empty leaves it unset.").
				Example(`${! json("order_id") }`).Default(""),
			service.NewInterpolatedStringField(soFieldPriority).
				Description("The message priority, 0 (lowest) to 255. Empty leaves it unset.").
				Example("4").Default(""),
			service.NewInterpolatedStringField(soFieldTTL).
				Description("The time to live of persistent messages, as a duration (`30s`) or milliseconds (`30000`). Empty or `0` means no expiry. Queues discard expired messages only when they respect TTLs.").
				Example("1h").Default(""),
			service.NewInterpolatedStringField(soFieldDMQEligible).
				Description("`true` or `false`: whether the message may go to a dead message queue when it expires or exceeds its redelivery count. Empty means the client default (`true`).").
				Example("false").Default(""),
			service.NewInterpolatedStringField(soFieldReplyTo).
				Description("A reply destination, carried as the user property `solace_reply_to`: the Solace Go client's publishers cannot set the SMF reply-to header. Empty leaves it unset.").
				Default("").Advanced(),
			service.NewInterpolatedStringField(soFieldSenderID).
				Description("The sender id. Empty leaves it unset.").
				Default("").Advanced(),
			service.NewInterpolatedStringField(soFieldClassOfService).
				Description("The class of service of direct messages, 0 to 2. Empty leaves it unset.").
				Default("").Advanced(),
			service.NewInterpolatedStringField(soFieldPartitionKey).
				Description("The partition key of partitioned queues, sent as the user property `JMSXGroupID`. Empty leaves it unset.").
				Example(`${! json("customer_id") }`).Default(""),
			service.NewInterpolatedStringField(soFieldHTTPContentType).
				Description("The HTTP content type attribute, e.g. for REST consumers. Empty leaves it unset.").
				Example("application/json").Default("").Advanced(),
			service.NewInterpolatedStringField(soFieldHTTPContentEncoding).
				Description("The HTTP content encoding attribute. Empty leaves it unset.").
				Default("").Advanced(),
			service.NewBoolField(soFieldSenderTimestamp).
				Description("Whether the client stamps every message with its send time.").
				Default(true).Advanced(),
			service.NewMetadataFilterField(soFieldMetadata).
				Description("Which metadata keys become Solace user properties. Values keep their types: integers become int64, floats float64, booleans bool, byte slices bytes, everything else a string. Keys starting with `solace.messaging.` are never sent. Without a filter no metadata is sent.").
				Optional(),
		).
		LintRule(session.ConnectionLintRuleWith(
			`if this.topic.or("") == "" && this.queue.or("") == "" { "fields topic and queue: set exactly one of them, e.g. topic: orders/created or queue: orders" } else { null }`,
			`if this.topic.or("") != "" && this.queue.or("") != "" { "fields topic and queue: both are set; keep one (to choose topic or queue per message, use destination_type)" } else { null }`,
			`if this.submission_mode.or("") == "custom" && this.back_pressure.strategy.or("wait") == "wait" && this.back_pressure.buffer_capacity.or(1) < 1 { "field back_pressure.buffer_capacity: strategy wait needs at least 1" } else { null }`,
			`if this.back_pressure.buffer_capacity.or(0) < 0 { "field back_pressure.buffer_capacity: must be 0 or more" } else { null }`,
			`if this.writer.or("batched") == "streaming" && (this.batching.count.or(0) > 0 || this.batching.byte_size.or(0) > 0 || this.batching.period.or("") != "" || this.batching.check.or("") != "") { "field batching: writer: streaming publishes without batching; remove batching or use writer: batched" } else { null }`,
			`if this.clients.or(4) < 1 { "field clients: must be at least 1" } else { null }`,
			`if this.max_in_flight.or(64) < 1 { "field max_in_flight: must be at least 1" } else { null }`,
		))
}

func init() {
	if err := registerSolaceOutput(service.GlobalEnvironment()); err != nil {
		panic(err)
	}
}

// registerSolaceOutput adds the solace output to env; see Register.
func registerSolaceOutput(env *service.Environment) error {
	return env.RegisterBatchOutput("solace", solaceOutputSpec(),
		func(conf *service.ParsedConfig, mgr *service.Resources) (out service.BatchOutput, pol service.BatchPolicy, maxInFlight int, err error) {
			var w *solaceWriter
			if w, err = newSolaceWriterFromParsed(conf, mgr); err != nil {
				return
			}
			if maxInFlight, err = conf.FieldMaxInFlight(); err != nil {
				return
			}
			return w, w.batchPolicy, maxInFlight, nil
		})
}

// optional interpolated attribute: nil when the field is empty, so unset
// attributes cost nothing per message.
type soAttr = *service.InterpolatedString

type solaceWriter struct {
	log *service.Logger

	conn        session.Config
	clients     int
	pubOpts     session.PublisherOptions
	batchPolicy service.BatchPolicy
	// ackNow marks messages of the streaming persistent writer "ack
	// immediately", so the broker does not hold back their confirmation.
	ackNow  bool
	latency bool

	topic, queue, destType soAttr
	appMsgID, appMsgType   soAttr
	correlationID          soAttr
	priority, ttl, dmq     soAttr
	replyTo, senderID, cos soAttr
	partitionKey           soAttr
	httpType, httpEncoding soAttr
	metaFilter             *service.MetadataFilter

	mPublished   *service.MetricCounter
	mFailures    *service.MetricCounter
	mLatency     *service.MetricTimer
	mReconnects  *service.MetricCounter
	mInterrupted *service.MetricCounter

	poolMu sync.RWMutex
	pool   *session.Pool
}

func newSolaceWriterFromParsed(conf *service.ParsedConfig, mgr *service.Resources) (*solaceWriter, error) {
	w := &solaceWriter{log: mgr.Logger()}
	var err error
	if w.conn, err = session.ConfigFromParsed(conf); err != nil {
		return nil, err
	}
	if w.conn.SendTimestamps, err = conf.FieldBool(soFieldSenderTimestamp); err != nil {
		return nil, err
	}
	if w.clients, err = conf.FieldInt(soFieldClients); err != nil {
		return nil, err
	}
	if w.clients < 1 {
		return nil, fmt.Errorf("field %s: must be at least 1, got %d", soFieldClients, w.clients)
	}

	interp := func(name string) (soAttr, error) {
		raw, err := conf.FieldString(name)
		if err != nil || raw == "" {
			return nil, err
		}
		return conf.FieldInterpolatedString(name)
	}
	fields := []struct {
		name string
		dst  *soAttr
	}{
		{soFieldTopic, &w.topic}, {soFieldQueue, &w.queue}, {soFieldDestinationType, &w.destType},
		{soFieldAppMessageID, &w.appMsgID}, {soFieldAppMessageType, &w.appMsgType},
		{soFieldCorrelationID, &w.correlationID}, {soFieldPriority, &w.priority}, {soFieldTTL, &w.ttl},
		{soFieldDMQEligible, &w.dmq}, {soFieldReplyTo, &w.replyTo}, {soFieldSenderID, &w.senderID},
		{soFieldClassOfService, &w.cos}, {soFieldPartitionKey, &w.partitionKey},
		{soFieldHTTPContentType, &w.httpType}, {soFieldHTTPContentEncoding, &w.httpEncoding},
	}
	for _, f := range fields {
		if *f.dst, err = interp(f.name); err != nil {
			return nil, err
		}
	}
	if (w.topic == nil) == (w.queue == nil) {
		return nil, errors.New("set exactly one of the fields topic and queue")
	}
	if conf.Contains(soFieldMetadata) {
		if w.metaFilter, err = conf.FieldMetadataFilter(soFieldMetadata); err != nil {
			return nil, err
		}
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
		if w.batchPolicy.IsNoop() {
			w.batchPolicy.Count = soDefaultBatchCount
			w.batchPolicy.Period = soDefaultBatchPeriod
		}
	}

	m := mgr.Metrics()
	w.mPublished = m.NewCounter("solace_output_published")
	w.mFailures = m.NewCounter("solace_output_publish_failures", "reason")
	w.mLatency = m.NewTimer("solace_output_publish_latency_ns")
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
		if !conf.Contains(soFieldBackPressure) {
			return bp, nil
		}
		ns := conf.Namespace(soFieldBackPressure)
		strategy, err := ns.FieldString(soFieldBPStrategy)
		if err != nil {
			return bp, err
		}
		size, err := ns.FieldInt(soFieldBPBufferCapacity)
		if err != nil {
			return bp, err
		}
		bp.Reject = strategy == "reject"
		if size < 0 || (!bp.Reject && size < 1) {
			return bp, fmt.Errorf("field %s.%s: %d is too small for strategy %s", soFieldBackPressure, soFieldBPBufferCapacity, size, strategy)
		}
		bp.BufferSize = uint(size)
		return bp, nil
	default:
		return session.BackPressure{BufferSize: soHigherThroughputBuffer}, nil
	}
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
	w.poolMu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = p.Close(ctx)
	}()
}

func (w *solaceWriter) WriteBatch(ctx context.Context, batch service.MessageBatch) error {
	w.poolMu.RLock()
	pool := w.pool
	w.poolMu.RUnlock()
	if pool == nil {
		return service.ErrNotConnected
	}
	if !pool.Alive() {
		w.dropPool(pool)
		return service.ErrNotConnected
	}

	var batchErr *service.BatchError
	fail := func(i int, reason string, err error) {
		w.mFailures.Incr(1, reason)
		if batchErr == nil {
			batchErr = service.NewBatchError(batch, errors.New("solace: some messages were not published"))
		}
		batchErr.Failed(i, err)
	}

	outs := make([]*session.Outbound, 0, len(batch))
	idx := make([]int, 0, len(batch))
	for i := range batch {
		o, err := w.toOutbound(batch, i)
		if err != nil {
			fail(i, "invalid_message", err)
			continue
		}
		outs = append(outs, o)
		idx = append(idx, i)
	}

	results := pool.Publisher().PublishBatch(ctx, outs)

	confirmed, lost := 0, 0
	for _, r := range results {
		if r.Err == nil {
			confirmed++
			if w.latency {
				w.mLatency.Timing(r.Latency.Nanoseconds())
			}
			continue
		}
		if errors.Is(r.Err, session.ErrConnectionLost) {
			lost++
		}
	}
	if lost > 0 && confirmed == 0 && batchErr == nil {
		// Nothing of this batch is confirmed: let Benthos reconnect and
		// re-send it whole rather than failing every message.
		w.mFailures.Incr(int64(lost), "connection_lost")
		w.dropPool(pool)
		return service.ErrNotConnected
	}
	w.mPublished.Incr(int64(confirmed))
	for j, r := range results {
		if r.Err == nil {
			continue
		}
		dest := outs[j].Destination
		reason, err := soClassify(dest, r.Err)
		fail(idx[j], reason, err)
	}
	if lost > 0 {
		w.dropPool(pool)
	}
	if batchErr != nil {
		return batchErr
	}
	return nil
}

// soClassify names the metric reason of a failed publish and wraps the error
// with its destination.
func soClassify(dest session.Destination, err error) (string, error) {
	var rej *session.RejectError
	switch {
	case errors.As(err, &rej):
		if dest.Queue && (rej.UnknownQueue() || strings.EqualFold(rej.Reason, "Unknown Queue")) {
			return "unknown_queue", fmt.Errorf("publishing to %s: the queue does not exist (broker: %s)", dest, rej.Reason)
		}
		return rej.Reason, fmt.Errorf("publishing to %s: %w (subcode %d)", dest, err, rej.SubCode)
	case errors.Is(err, session.ErrConnectionLost):
		return "connection_lost", fmt.Errorf("publishing to %s: %w", dest, err)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return "timeout", fmt.Errorf("publishing to %s: %w", dest, err)
	default:
		return "error", fmt.Errorf("publishing to %s: %w", dest, err)
	}
}

func (w *solaceWriter) toOutbound(batch service.MessageBatch, i int) (*session.Outbound, error) {
	get := func(field string, a soAttr) (string, error) {
		if a == nil {
			return "", nil
		}
		if s, ok := a.Static(); ok {
			return s, nil
		}
		s, err := batch.TryInterpolatedString(i, a)
		if err != nil {
			return "", fmt.Errorf("field %s: %w", field, err)
		}
		return s, nil
	}
	payload, err := batch[i].AsBytes()
	if err != nil {
		return nil, err
	}
	o := &session.Outbound{Payload: payload, AckImmediately: w.ackNow}

	name, kind := "", soDestTopic
	if w.topic != nil {
		name, err = get(soFieldTopic, w.topic)
	} else {
		kind = soDestQueue
		name, err = get(soFieldQueue, w.queue)
	}
	if err != nil {
		return nil, err
	}
	if w.destType != nil {
		t, err := get(soFieldDestinationType, w.destType)
		if err != nil {
			return nil, err
		}
		switch strings.ToLower(strings.TrimSpace(t)) {
		case "":
		case soDestTopic:
			kind = soDestTopic
		case soDestQueue:
			kind = soDestQueue
		default:
			return nil, fmt.Errorf("field %s: %q is neither topic nor queue", soFieldDestinationType, t)
		}
	}
	if name == "" {
		return nil, fmt.Errorf("the %s name is empty for this message", kind)
	}
	o.Destination = session.Destination{Name: name, Queue: kind == soDestQueue}

	strs := []struct {
		field string
		a     soAttr
		dst   *string
	}{
		{soFieldAppMessageID, w.appMsgID, &o.ApplicationMessageID},
		{soFieldAppMessageType, w.appMsgType, &o.ApplicationMessageType},
		{soFieldCorrelationID, w.correlationID, &o.CorrelationID},
		{soFieldReplyTo, w.replyTo, &o.ReplyTo},
		{soFieldSenderID, w.senderID, &o.SenderID},
		{soFieldPartitionKey, w.partitionKey, &o.PartitionKey},
		{soFieldHTTPContentType, w.httpType, &o.HTTPContentType},
		{soFieldHTTPContentEncoding, w.httpEncoding, &o.HTTPContentEncoding},
	}
	for _, s := range strs {
		if *s.dst, err = get(s.field, s.a); err != nil {
			return nil, err
		}
	}
	if o.Priority, err = soIntAttr(get, soFieldPriority, w.priority, 0, 255); err != nil {
		return nil, err
	}
	if o.ClassOfService, err = soIntAttr(get, soFieldClassOfService, w.cos, 0, 2); err != nil {
		return nil, err
	}
	if w.ttl != nil {
		s, err := get(soFieldTTL, w.ttl)
		if err != nil {
			return nil, err
		}
		if o.TTL, err = soParseTTL(s); err != nil {
			return nil, fmt.Errorf("field %s: %w", soFieldTTL, err)
		}
	}
	if w.dmq != nil {
		s, err := get(soFieldDMQEligible, w.dmq)
		if err != nil {
			return nil, err
		}
		if s = strings.TrimSpace(s); s != "" {
			b, err := strconv.ParseBool(s)
			if err != nil {
				return nil, fmt.Errorf("field %s: %q is not true or false", soFieldDMQEligible, s)
			}
			o.DMQEligible = &b
		}
	}
	if w.metaFilter != nil {
		props := map[string]any{}
		_ = w.metaFilter.WalkMut(batch[i], func(k string, v any) error {
			props[k] = soUserPropertyValue(v)
			return nil
		})
		if len(props) > 0 {
			o.UserProperties = props
		}
	}
	return o, nil
}

func soIntAttr(get func(string, soAttr) (string, error), field string, a soAttr, lo, hi int) (*int, error) {
	if a == nil {
		return nil, nil
	}
	s, err := get(field, a)
	if err != nil {
		return nil, err
	}
	if s = strings.TrimSpace(s); s == "" {
		return nil, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return nil, fmt.Errorf("field %s: %q is not an integer from %d to %d", field, s, lo, hi)
	}
	return &n, nil
}

// soParseTTL reads a duration ("30s") or plain milliseconds ("30000").
func soParseTTL(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		if ms < 0 {
			return 0, fmt.Errorf("%q is negative", s)
		}
		return time.Duration(ms) * time.Millisecond, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is neither a duration nor milliseconds", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("%q is negative", s)
	}
	return d, nil
}

// soUserPropertyValue keeps the structured metadata types the client can carry
// and renders anything else as a string.
func soUserPropertyValue(v any) any {
	switch t := v.(type) {
	case int64, float64, bool, string, []byte:
		return t
	case int:
		return int64(t)
	case int32:
		return int64(t)
	case uint32:
		return int64(t)
	case uint64:
		if t <= 1<<63-1 {
			return int64(t)
		}
		return strconv.FormatUint(t, 10)
	case float32:
		return float64(t)
	case nil:
		return ""
	default:
		return fmt.Sprint(t)
	}
}

func (w *solaceWriter) Close(ctx context.Context) error {
	w.poolMu.Lock()
	pool := w.pool
	w.pool = nil
	w.poolMu.Unlock()
	if pool == nil {
		return nil
	}
	return pool.Close(ctx)
}
