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

	"github.com/connect-solace/connect-solace/internal/lintmethod"
	"github.com/connect-solace/connect-solace/internal/session"
	"github.com/connect-solace/connect-solace/internal/solacecfg"
	"github.com/connect-solace/connect-solace/internal/tally"
	"github.com/connect-solace/connect-solace/internal/ttl"
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
	// soDefaultMaxInFlight is max_in_flight's default: without a batching
	// policy it bounds the messages in flight (see solace_writer.go).
	soDefaultMaxInFlight = 256
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

Static values of `+"`topic`"+` (1 to 250 bytes of UTF-8, no NUL, at most 128 levels), `+"`queue`"+` (1 to 200 bytes, none of `+"`'*<>&;`"+`, no control characters or empty levels), `+"`priority`"+` (0 to 255), `+"`class_of_service`"+` (0 to 2), `+"`ttl`"+` (0 or more), `+"`dmq_eligible`"+` and `+"`destination_type`"+` are checked by lint and at start-up. Interpolated values are checked per message: a message with a bad value fails on its own with the reason (`+"`reason: invalid_message`"+`).`).
		Fields(solacecfg.ConnectionFields()...).
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
				Description("How many Solace sessions publish in parallel. Each batch goes to one session, so its messages keep their order.").
				Default(4),
			service.NewOutputMaxInFlightField().Default(soDefaultMaxInFlight),
			service.NewBoolField(soFieldLatencyMetrics).
				Description("Record the time from publish to broker confirmation in the `solace_output_publish_latency_ns` timer. Persistent delivery only.").
				Default(true).Advanced(),
			service.NewInterpolatedStringField(soFieldAppMessageID).
				Description("The application message id (JMSMessageID for JMS consumers). Empty leaves it unset.").
				Example(`${! meta("id") }`).Default("").
				LintRule(soLint(soFieldAppMessageID)),
			service.NewInterpolatedStringField(soFieldAppMessageType).
				Description("The application message type (JMSType). Empty leaves it unset.").
				Default("").Advanced().
				LintRule(soLint(soFieldAppMessageType)),
			service.NewInterpolatedStringField(soFieldCorrelationID).
				Description("The correlation id (JMSCorrelationID). Empty leaves it unset.").
				Example(`${! json("order_id") }`).Default("").
				LintRule(soLint(soFieldCorrelationID)),
			service.NewInterpolatedStringField(soFieldPriority).
				Description("The message priority, 0 (lowest) to 255. Empty leaves it unset.").
				Example("4").Default("").
				LintRule(soLint(soFieldPriority)),
			service.NewInterpolatedStringField(soFieldTTL).
				Description("The time to live of persistent messages, as a duration (`30s`) or milliseconds (`30000`). Empty or `0` means no expiry. Queues discard expired messages only when they respect TTLs.").
				Example("1h").Default("").
				LintRule(soLint(soFieldTTL)),
			service.NewInterpolatedStringField(soFieldDMQEligible).
				Description("`true` or `false`: whether the message may go to a dead message queue when it expires or exceeds its redelivery count. Empty means the client default (`true`).").
				Example("false").Default("").
				LintRule(soLint(soFieldDMQEligible)),
			service.NewInterpolatedStringField(soFieldReplyTo).
				Description("A reply destination, carried as the user property `solace_reply_to`: the Solace Go client's publishers cannot set the SMF reply-to header. Empty leaves it unset.").
				Default("").Advanced().
				LintRule(soLint(soFieldReplyTo)),
			service.NewInterpolatedStringField(soFieldSenderID).
				Description("The sender id. Empty leaves it unset.").
				Default("").Advanced().
				LintRule(soLint(soFieldSenderID)),
			service.NewInterpolatedStringField(soFieldClassOfService).
				Description("The class of service of direct messages, 0 to 2. Empty leaves it unset.").
				Default("").Advanced().
				LintRule(soLint(soFieldClassOfService)),
			service.NewInterpolatedStringField(soFieldPartitionKey).
				Description("The partition key of partitioned queues, sent as the user property `JMSXGroupID`. Empty leaves it unset.").
				Example(`${! json("customer_id") }`).Default("").
				LintRule(soLint(soFieldPartitionKey)),
			service.NewInterpolatedStringField(soFieldHTTPContentType).
				Description("The HTTP content type attribute, e.g. for REST consumers. Empty leaves it unset.").
				Example("application/json").Default("").Advanced().
				LintRule(soLint(soFieldHTTPContentType)),
			service.NewInterpolatedStringField(soFieldHTTPContentEncoding).
				Description("The HTTP content encoding attribute. Empty leaves it unset.").
				Default("").Advanced().
				LintRule(soLint(soFieldHTTPContentEncoding)),
			service.NewBoolField(soFieldSenderTimestamp).
				Description("Whether the client stamps every message with its send time (the SMF sender timestamp, `solace_sender_timestamp` on the `solace` input). Off by default because the stamp is expensive in the Solace C library: measured against the raw client (`make bench`, case `batched_persistent_sender_timestamp`), it costs the client about 20% more CPU per persistent message and about 10% per direct message through the session property, and no less when set on each message through the C API. Without it, consumers that want an event time use the receive time; the `solace` input's `timestamp: sender` falls back to it.").
				Default(false).Advanced(),
			service.NewMetadataFilterField(soFieldMetadata).
				Description("Which metadata keys become Solace user properties. Values keep their types: integers become int64, floats float64, booleans bool, byte slices bytes, everything else a string. Keys starting with `solace.messaging.` are never sent. Without a filter no metadata is sent.").
				Optional(),
		).
		LintRule(solacecfg.ConnectionLintRuleWith(
			`this.solace_output_lint_destination()`,
			`this.solace_output_lint_config()`,
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

	// tmpl holds every static attribute, resolved and checked once by the
	// constructor; each message starts as a copy of it.
	tmpl session.Outbound
	// dyn are the interpolated fields, evaluated per batch with one
	// executor each; static and empty fields never appear here.
	dyn []soDynField
	// destChecked: the destination is static and was validated once.
	destChecked bool
	metaFilter  *service.MetadataFilter

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

	if err = w.planFields(conf); err != nil {
		return nil, err
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

// soFieldRules is the one place where the output's interpolated fields are
// checked and mapped onto a message: the constructor applies a static value
// once to the message template (a bad one fails start-up, and lint through
// the solace_output_lint method), and a dynamic value is applied per message
// (a bad one fails that message). An empty value leaves the attribute unset.
var soFieldRules = map[string]func(o *session.Outbound, v string) error{
	soFieldTopic: func(o *session.Outbound, v string) error { o.Destination.Name = v; return nil },
	soFieldQueue: func(o *session.Outbound, v string) error { o.Destination.Name = v; return nil },
	soFieldDestinationType: func(o *session.Outbound, v string) error {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "":
		case soDestTopic:
			o.Destination.Queue = false
		case soDestQueue:
			o.Destination.Queue = true
		default:
			return fmt.Errorf("%q is neither topic nor queue", v)
		}
		return nil
	},
	soFieldAppMessageID:        func(o *session.Outbound, v string) error { o.ApplicationMessageID = v; return nil },
	soFieldAppMessageType:      func(o *session.Outbound, v string) error { o.ApplicationMessageType = v; return nil },
	soFieldCorrelationID:       func(o *session.Outbound, v string) error { o.CorrelationID = v; return nil },
	soFieldReplyTo:             func(o *session.Outbound, v string) error { o.ReplyTo = v; return nil },
	soFieldSenderID:            func(o *session.Outbound, v string) error { o.SenderID = v; return nil },
	soFieldPartitionKey:        func(o *session.Outbound, v string) error { o.PartitionKey = v; return nil },
	soFieldHTTPContentType:     func(o *session.Outbound, v string) error { o.HTTPContentType = v; return nil },
	soFieldHTTPContentEncoding: func(o *session.Outbound, v string) error { o.HTTPContentEncoding = v; return nil },
	soFieldPriority: func(o *session.Outbound, v string) (err error) {
		o.Priority, err = soParseInt(v, session.PriorityRange)
		return err
	},
	soFieldClassOfService: func(o *session.Outbound, v string) (err error) {
		o.ClassOfService, err = soParseInt(v, session.ClassOfServiceRange)
		return err
	},
	soFieldTTL: func(o *session.Outbound, v string) (err error) {
		o.TTL, err = ttl.Parse(v)
		return err
	},
	soFieldDMQEligible: func(o *session.Outbound, v string) error {
		if v = strings.TrimSpace(v); v == "" {
			o.DMQEligible = nil
			return nil
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("%q is not true or false", v)
		}
		o.DMQEligible = &b
		return nil
	},
}

// soFieldOrder is the order fields are applied in: the name before the
// destination type, so that the type decides how the name is validated.
var soFieldOrder = []string{
	soFieldTopic, soFieldQueue, soFieldDestinationType,
	soFieldAppMessageID, soFieldAppMessageType, soFieldCorrelationID, soFieldPriority, soFieldTTL,
	soFieldDMQEligible, soFieldReplyTo, soFieldSenderID, soFieldClassOfService, soFieldPartitionKey,
	soFieldHTTPContentType, soFieldHTTPContentEncoding,
}

// soApply applies the value of field to o, with an error naming the field.
func soApply(o *session.Outbound, field, v string) error {
	if err := soFieldRules[field](o, v); err != nil {
		return fmt.Errorf("field %s: %w", field, err)
	}
	return nil
}

// soCheckDestination validates the resolved destination of o.
func soCheckDestination(o *session.Outbound) error {
	if err := o.Destination.Validate(); err != nil {
		field := soFieldTopic
		if o.Destination.Queue {
			field = soFieldQueue
		}
		return fmt.Errorf("field %s: %w", field, err)
	}
	return nil
}

// soLintStatic checks one field's raw config value as the constructor would,
// when it is static; dynamic values are checked per message. It backs the
// spec's lint rules, so that lint and start-up reject the same values.
func soLintStatic(field, raw string) error {
	if raw == "" {
		return nil
	}
	is, err := service.NewInterpolatedString(raw)
	if err != nil {
		return nil // the interpolation linter reports it
	}
	v, ok := is.Static()
	if !ok {
		return nil
	}
	var o session.Outbound
	return soApply(&o, field, v)
}

// soLintDestination checks a static destination as the constructor would:
// the name of topic or queue, as the kind destination_type makes it.
func soLintDestination(topic, queue, destType string) error {
	var o session.Outbound
	for _, f := range []struct{ name, raw string }{{soFieldTopic, topic}, {soFieldQueue, queue}, {soFieldDestinationType, destType}} {
		if f.raw == "" {
			continue
		}
		is, err := service.NewInterpolatedString(f.raw)
		if err != nil {
			return nil
		}
		v, ok := is.Static()
		if !ok {
			return nil
		}
		if f.name == soFieldQueue {
			o.Destination.Queue = true
		}
		if err := soApply(&o, f.name, v); err != nil {
			return err
		}
	}
	if topic == "" && queue == "" {
		return nil // the topic-or-queue rule reports it
	}
	return soCheckDestination(&o)
}

// The lint rules of the interpolated fields call back into soLintStatic
// through this method.
var _ = lintmethod.RegisterValue("solace_output_lint",
	"Internal to the solace output's lint rules: the error of a static value of the named field, or null (also for a value that is not a string).",
	func(field string) bool { _, ok := soFieldRules[field]; return ok },
	soLintStatic)

// The output's lint rule checks a static destination through this method.
var _ = lintmethod.Register("solace_output_lint_destination",
	"Internal to the solace output's lint rule: the error of a static destination of the linted config, as a list of at most one message.",
	soLintSpec, func(pc *service.ParsedConfig) ([]error, error) {
		str := func(k string) string {
			s, _ := pc.FieldString(k) // not set: ""
			return s
		}
		if err := soLintDestination(str(soFieldTopic), str(soFieldQueue), str(soFieldDestinationType)); err != nil {
			return []error{err}, nil
		}
		return nil, nil
	})

// soLint is the lint rule of field: a bare method call, the cheapest mapping
// to parse (each rule is parsed when the spec is built, at start-up; an
// if-expression took five times as long), returning null for a value that is
// not a string.
func soLint(field string) string { return lintmethod.ValueRule("solace_output_lint", field) }

// soDynField is one interpolated field that varies per message.
type soDynField struct {
	name string
	is   *service.InterpolatedString
}

// planFields resolves the static fields into the template and lists the
// dynamic ones.
func (w *solaceWriter) planFields(conf *service.ParsedConfig) error {
	staticDest := true
	for _, name := range soFieldOrder {
		raw, err := conf.FieldString(name)
		if err != nil {
			return err
		}
		if raw == "" {
			continue
		}
		if name == soFieldQueue {
			w.tmpl.Destination.Queue = true
		}
		is, err := conf.FieldInterpolatedString(name)
		if err != nil {
			return err
		}
		v, static := is.Static()
		if !static {
			w.dyn = append(w.dyn, soDynField{name: name, is: is})
			if name == soFieldTopic || name == soFieldQueue || name == soFieldDestinationType {
				staticDest = false
			}
			continue
		}
		if err := soApply(&w.tmpl, name, v); err != nil {
			return err
		}
	}
	if staticDest {
		if err := soCheckDestination(&w.tmpl); err != nil {
			return err
		}
		w.destChecked = true
	}
	return nil
}

// soEval evaluates the dynamic fields over one batch: one executor per field
// and batch, rather than TryInterpolatedString's copy of the batch per call.
type soEval struct {
	batch service.MessageBatch
	execs []*service.MessageBatchInterpolationExecutor
}

func (w *solaceWriter) newEval(batch service.MessageBatch) soEval {
	e := soEval{batch: batch}
	if len(w.dyn) > 0 {
		e.execs = make([]*service.MessageBatchInterpolationExecutor, len(w.dyn))
		for j, f := range w.dyn {
			e.execs[j] = batch.InterpolationExecutor(f.is)
		}
	}
	return e
}

// toOutbound fills o with message i of the batch.
func (w *solaceWriter) toOutbound(ev *soEval, i int, o *session.Outbound) error {
	payload, err := ev.batch[i].AsBytes()
	if err != nil {
		return err
	}
	*o = w.tmpl
	o.Payload = payload
	o.AckImmediately = w.ackNow
	for j, f := range w.dyn {
		v, err := ev.execs[j].TryString(i)
		if err != nil {
			return fmt.Errorf("field %s: %w", f.name, err)
		}
		if err := soApply(o, f.name, v); err != nil {
			return err
		}
	}
	if !w.destChecked {
		if err := soCheckDestination(o); err != nil {
			return err
		}
	}
	if w.metaFilter != nil {
		var props map[string]any
		_ = w.metaFilter.WalkMut(ev.batch[i], func(k string, v any) error {
			if props == nil {
				props = map[string]any{}
			}
			props[k] = v // session.Outbound converts the value
			return nil
		})
		o.UserProperties = props
	}
	return nil
}

// soParseInt reads an optional integer in r.
func soParseInt(s string, r session.Range) (*int, error) {
	if s = strings.TrimSpace(s); s == "" {
		return nil, nil
	}
	n, err := strconv.Atoi(s)
	if err == nil {
		err = r.Check(n)
	}
	if err != nil {
		return nil, fmt.Errorf("%q is not an integer from %d to %d", s, r.Min, r.Max)
	}
	return &n, nil
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
