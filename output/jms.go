package output

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connect-solace/connect-solace/internal/confread"
	"github.com/connect-solace/connect-solace/internal/interp"
	"github.com/connect-solace/connect-solace/internal/jms"
	"github.com/connect-solace/connect-solace/internal/jmscfg"
	"github.com/connect-solace/connect-solace/internal/tally"
	"github.com/connect-solace/connect-solace/internal/tracingcfg"
	"github.com/connect-solace/connect-solace/internal/ttl"
)

const (
	jmsFieldQueue         = "queue"
	jmsFieldTopic         = "topic"
	jmsFieldMessageType   = "message_type"
	jmsFieldDeliveryMode  = "delivery_mode"
	jmsFieldPriority      = "priority"
	jmsFieldTTL           = "ttl"
	jmsFieldMessageID     = "message_id"
	jmsFieldCorrelationID = "correlation_id"
	jmsFieldJMSType       = "jms_type"
	jmsFieldReplyTo       = "reply_to"
	jmsFieldReplyToType   = "reply_to_type"
	jmsFieldGroupID       = "group_id"
	jmsFieldGroupSequence = "group_sequence"
	jmsFieldMetadata      = "metadata"
	jmsFieldRetry         = "retry"
	jmsFieldOrdered       = "ordered"
	jmsFieldSendTimeout   = "send_timeout"
	jmsFieldBatching      = "batching"

	jmsDeliveryPersistent    = "persistent"
	jmsDeliveryNonPersistent = "non_persistent"
)

// The output's lint rule (see jmscfg.Spec) calls this method.
var _ = jmscfg.RegisterLint("jms_output_lint", jmsOutputSpec, func(pc *service.ParsedConfig) (queue, topic bool, err error) {
	return pc.Contains(jmsFieldQueue), pc.Contains(jmsFieldTopic), nil
})

func jmsOutputSpec() *service.ConfigSpec {
	return jmscfg.Spec("Sends messages to a JMS queue or topic over AMQP 1.0, encoded per the OASIS AMQP JMS Mapping so JMS consumers receive proper TextMessage, BytesMessage or MapMessage objects.", `
Works with any broker that JMS 2.0 clients reach over AMQP 1.0: ActiveMQ 5, ActiveMQ Artemis, Solace PubSub+, RabbitMQ (amqp1_0 plugin), Qpid, IBM MQ and Azure Service Bus. It does what Beam's `+"`JmsIO.Write`"+` does, with three differences users asked for:

- **Per-message outcomes.** A message counts as delivered only when the broker settles it `+"`accepted`"+`. Messages the broker rejects, releases or modifies fail on their own through a batch error carrying the broker's condition and description, so `+"`fallback`"+` and `+"`reject_errored`"+` route exactly those messages.
- **Reconnects.** After a connection failure the output reports itself disconnected; Benthos reconnects (trying the next URL, for failover) and resends the batch, so nothing unconfirmed is lost. After a link or session failure on a live connection (RabbitMQ ends the session when it refuses an address), the messages whose fate is unknown are resent on a fresh link, paced by `+"`retry`"+`.
- **Pipelining.** Many deliveries are in flight at once (`+"`max_in_flight`"+` batches, each sent without waiting for the previous disposition), instead of one round trip per message.

### Ordering

Within a batch, messages to one destination go over one link in batch order. With `+"`max_in_flight`"+` above 1, batches are sent concurrently, so their messages interleave, and a message resent after a failure lands behind later ones. `+"`ordered: true`"+` keeps JMS per-producer order instead: one batch at a time (`+"`max_in_flight`"+` is 1), still pipelined on its link, and after a link failure everything from the first unsettled message on is resent in order (possibly duplicating messages already accepted, never reordering them). Throughput then comes from batch size rather than concurrency: set `+"`batching.count`"+` to a few hundred.

### Message encoding

| `+"`message_type`"+` | AMQP body | content-type | `+"`x-opt-jms-msg-type`"+` |
|---|---|---|---|
| `+"`text`"+` | amqp-value string | none | 5 (TextMessage) |
| `+"`bytes`"+` | data section | `+"`application/octet-stream`"+` | 3 (BytesMessage) |
| `+"`map`"+` | amqp-value map with string keys | none | 2 (MapMessage) |

`+"`x-opt-jms-dest`"+` (and `+"`x-opt-jms-reply-type`"+` with `+"`reply_to`"+`) say whether the destination is a queue (0) or a topic (1). The header always carries `+"`durable`"+` and the priority (JMS default 4), the properties always carry a message ID, `+"`to`"+` and the creation time (JMSTimestamp), and a `+"`ttl`"+` sets both the header ttl and the absolute expiry time (JMSExpiration).

### Properties

Metadata selected by `+"`metadata`"+` becomes application properties (JMS message properties). A key that is not a legal JMS property name (a Java identifier, not a selector keyword, not starting with `+"`JMS`"+` unless `+"`JMS_`"+`) fails the message. Values are converted to JMS types, because a broker turns a message carrying an AMQP timestamp, UUID or nested value into an opaque BytesMessage: timestamps become epoch milliseconds, UUIDs and other objects strings, unsigned integers the next wider signed type, nested values their JSON text. A string value that is not valid UTF-8 fails the message, naming the key.

### Links

When the broker offers `+"`ANONYMOUS-RELAY`"+`, every message goes over one link without a target address and carries its own `+"`to`"+`, so interpolated destinations cost nothing. Otherwise one link per destination is kept, at most `+"`link_cache_size`"+` of them, least recently used closed first.

### Metrics

`+"`jms_messages_sent`"+` (added up and reported within 100 ms, not per batch, which saves a metric lookup per batch), `+"`jms_send_failures`"+` (label `+"`condition`"+`: the broker's error condition such as `+"`amqp:not-found`"+`, else `+"`rejected`"+`, `+"`released`"+`, `+"`modified`"+`, `+"`connection`"+` for messages cut off by a connection failure, which Benthos resends after reconnecting, `+"`refused`"+` for an address refused with a broker-specific condition, or `+"`encoding`"+` for messages that cannot be encoded, including bad dynamic header values), `+"`jms_send_retries`"+`, `+"`jms_reconnects`"+` and the timer `+"`jms_send_latency_ns`"+` (per batch: from its first transfer to its last settlement; sampled, at most one batch per 10 ms, so every batch below 100 batches a second, which saves a metric lookup and a histogram update per batch above).`,
		"jms_output_lint").
		Fields(
			service.NewInterpolatedStringField(jmsFieldQueue).
				Description("The JMS queue to send to. Exactly one of `queue` or `topic` must be set.").
				Examples("orders", `orders-${! meta("region") }`).
				Optional(),
			service.NewInterpolatedStringField(jmsFieldTopic).
				Description("The JMS topic to send to, interpolated per message (Beam's `withTopicNameMapper`). Exactly one of `queue` or `topic` must be set.").
				Examples("prices", `prices.${! json("symbol") }`).
				Optional(),
			service.NewStringEnumField(jmsFieldMessageType, string(jms.BodyText), string(jms.BodyBytes), string(jms.BodyMap)).
				Description("The JMS message class: `text` (TextMessage; the payload must be UTF-8), `bytes` (BytesMessage) or `map` (MapMessage from a JSON object whose values are strings, numbers, booleans or null; nested objects and arrays fail the message).").
				Default(string(jms.BodyText)),
			service.NewStringEnumField(jmsFieldDeliveryMode, jmsDeliveryPersistent, jmsDeliveryNonPersistent).
				Description("JMSDeliveryMode. `persistent` sets the header's durable flag, so the broker stores the message before accepting it.").
				Default(jmsDeliveryPersistent),
			service.NewInterpolatedStringField(jmsFieldPriority).
				Description("JMSPriority, 0 to 9. Always sent.").
				Example(`${! meta("priority") }`).
				Default("4"),
			service.NewInterpolatedStringField(jmsFieldTTL).
				Description("Time to live, as a duration (`30s`, `5m`) or milliseconds, 0 or more. Sets the header ttl and the absolute expiry time (JMSExpiration). Empty or `0` means never expire. A negative static value fails at start-up; a dynamic one fails its message.").
				Example("1h").
				Default(""),
			service.NewInterpolatedStringField(jmsFieldMessageID).
				Description("JMSMessageID. `ID:` is prepended when missing. When empty a random `ID:<uuid>` is generated, kept across retries.").
				Example(`${! meta("event_id") }`).
				Default("").
				Advanced(),
			service.NewInterpolatedStringField(jmsFieldCorrelationID).
				Description("JMSCorrelationID.").
				Example(`${! json("order_id") }`).
				Default(""),
			service.NewInterpolatedStringField(jmsFieldJMSType).
				Description("JMSType, carried as the AMQP subject.").
				Default(""),
			service.NewInterpolatedStringField(jmsFieldReplyTo).
				Description("JMSReplyTo: a queue or topic name, addressed with the same `address_style`.").
				Default(""),
			service.NewStringEnumField(jmsFieldReplyToType, "queue", "topic").
				Description("Whether `reply_to` names a queue or a topic.").
				Default("queue").
				Advanced(),
			service.NewInterpolatedStringField(jmsFieldGroupID).
				Description("JMSXGroupID, for message groups.").
				Default(""),
			service.NewInterpolatedStringField(jmsFieldGroupSequence).
				Description("JMSXGroupSeq, an unsigned 32-bit integer. Empty means not set.").
				Default("").
				Advanced(),
			service.NewMetadataFilterField(jmsFieldMetadata).
				Description("Which metadata keys become JMS properties (application-properties). Nothing is sent by default, but for the trace context (see `inject_tracing_map`).").
				Optional(),
			tracingcfg.InjectField(tracingcfg.ApplicationProperties),
			service.NewBackOffField(jmsFieldRetry, true, nil).
				Description("Pacing of resends after a link or session failure on a connection that is still up (the messages whose fate is unknown are resent on a fresh link). A `max_elapsed_time` of 0 retries without limit. Connection failures are not retried here: Benthos reconnects and resends the batch. Messages the broker rejects are not retried; they fail on their own.").
				Advanced(),
			service.NewBoolField(jmsFieldOrdered).
				Description("Keep JMS per-producer order: one batch at a time (overriding `max_in_flight`, which becomes 1), pipelined on its link, and resends never reorder. See Ordering above for the trade-off.").
				Default(false).
				Advanced(),
			service.NewDurationField(jmsFieldSendTimeout).
				Description("How long deliveries may wait without the broker settling any of them before the connection is treated as failed (and Benthos reconnects).").
				Default("30s").
				Advanced(),
		).
		Fields(jmscfg.SenderLinkFields()...).
		Fields(
			service.NewOutputMaxInFlightField(),
			service.NewBatchPolicyField(jmsFieldBatching),
		).
		Example(tracingcfg.OutputExample("jms", "    urls: [ amqp://localhost:5672 ]\n    queue: orders\n")).
		Example("Orders to an ActiveMQ queue", "Sends each message as a persistent TextMessage, with a correlation ID and a property from metadata.", `
output:
  jms:
    urls: [ amqp://activemq:5672 ]
    username: benthos
    password: ${JMS_PASSWORD}
    address_style: activemq
    queue: orders
    correlation_id: ${! json("order_id") }
    metadata:
      include_prefixes: [ "order_" ]
`).
		Example("Dynamic topics", "Routes each price to a topic per symbol, non-persistent with a one minute TTL.", `
output:
  jms:
    urls: [ amqps://broker:5671 ]
    username: benthos
    password: ${JMS_PASSWORD}
    topic: prices.${! json("symbol") }
    delivery_mode: non_persistent
    ttl: 1m
`)
}

// newJMSOutput builds the jms output with its batch policy and
// max_in_flight.
func newJMSOutput(conf *service.ParsedConfig, mgr *service.Resources) (out service.BatchOutput, policy service.BatchPolicy, maxInFlight int, err error) {
	if maxInFlight, err = conf.FieldMaxInFlight(); err != nil {
		return
	}
	if policy, err = conf.FieldBatchPolicy(jmsFieldBatching); err != nil {
		return
	}
	var o *jmsOutput
	if o, err = newJMSOutputFromParsed(conf, mgr); err != nil {
		return
	}
	out, maxInFlight = o, jmsMaxInFlight(o, maxInFlight)
	return
}

// jmsMaxInFlight is 1 in ordered mode: batches go one after another, so they
// cannot interleave.
func jmsMaxInFlight(o *jmsOutput, configured int) int {
	if o.sendConf.Ordered {
		return 1
	}
	return configured
}

type jmsOutput struct {
	log *service.Logger

	connConf jms.ConnConfig
	link     jms.LinkSettings
	sendConf jms.SenderConfig

	tmpl   jms.Outgoing               // every message's start: the static fields applied
	fields *interp.Plan[jms.Outgoing] // the interpolated fields (jmsRules)
	props  tracingcfg.Properties      // metadata and trace context as application properties

	mSent       *tally.Tally // jms_messages_sent, handed over in batches
	mFailures   *service.MetricCounter
	mRetries    *service.MetricCounter
	mReconnects *service.MetricCounter
	mLatency    *tally.Sampled // jms_send_latency_ns, at most one batch per 10 ms

	sender    atomic.Pointer[jms.Sender] // nil while not connected
	mu        sync.Mutex                 // guards the rest and replacing sender
	urlIndex  int
	connected bool // a connection was made before, so the next is a reconnect
	closed    bool // Close was called: Connect must not dial again
}

func newJMSOutputFromParsed(conf *service.ParsedConfig, mgr *service.Resources) (*jmsOutput, error) {
	o := &jmsOutput{
		log:         mgr.Logger(),
		mSent:       tally.New(mgr.Metrics().NewCounter("jms_messages_sent")),
		mFailures:   mgr.Metrics().NewCounter("jms_send_failures", "condition"),
		mRetries:    mgr.Metrics().NewCounter("jms_send_retries"),
		mReconnects: mgr.Metrics().NewCounter("jms_reconnects"),
		mLatency:    tally.NewSampled(mgr.Metrics().NewTimer("jms_send_latency_ns")),
	}
	var err error
	if o.connConf, err = jmscfg.ConnConfigFromParsed(conf); err != nil {
		return nil, err
	}
	if o.link, err = jmscfg.LinkSettingsFromParsed(conf); err != nil {
		return nil, err
	}

	t := conf.Contains(jmsFieldTopic)
	if err = jmscfg.DestinationError(conf.Contains(jmsFieldQueue), t); err != nil {
		return nil, err
	}
	if t { // else o.tmpl.DestKind is jms.KindQueue
		o.tmpl.DestKind = jms.KindTopic
	}

	var mt, dm string
	rd := confread.New(conf)
	rd.String(&mt, jmsFieldMessageType)
	rd.String(&dm, jmsFieldDeliveryMode)
	if err := rd.Err(); err != nil {
		return nil, err
	}
	o.tmpl.Message = jms.Message{Type: jms.BodyType(mt), Persistent: dm == jmsDeliveryPersistent, Priority: jms.DefaultPriority}

	if o.fields, err = interp.NewPlan(conf, &o.tmpl, jmsRules); err != nil {
		return nil, err
	}
	rt, err := conf.FieldString(jmsFieldReplyToType)
	if err != nil {
		return nil, err
	}
	if rt == "topic" {
		o.tmpl.ReplyToKind = jms.KindTopic
	}
	if o.props, err = tracingcfg.PropertiesFromParsed(conf, jmsFieldMetadata); err != nil {
		return nil, err
	}
	if o.sendConf.Retry, err = conf.FieldBackOff(jmsFieldRetry); err != nil {
		return nil, err
	}
	o.sendConf.OnRetry = func(n int, wait time.Duration, cause error) {
		o.mRetries.Incr(1)
		o.log.Warnf("jms: a link failed with %d messages unsettled; resending them on a new link in %v: %v", n, wait, cause)
	}
	if o.sendConf.Ordered, err = conf.FieldBool(jmsFieldOrdered); err != nil {
		return nil, err
	}
	if o.sendConf.SendTimeout, err = conf.FieldDuration(jmsFieldSendTimeout); err != nil {
		return nil, err
	}
	return o, nil
}

// jmsRules are the interpolated fields and where their values go, for
// interp.Plan: a static value is applied once to the template, a dynamic one
// per message.
var jmsRules = []interp.Rule[jms.Outgoing]{
	{Name: jmsFieldQueue, Required: true, Apply: func(p *jms.Outgoing, s string) error { p.DestName = s; return nil }},
	{Name: jmsFieldTopic, Required: true, Apply: func(p *jms.Outgoing, s string) error { p.DestName = s; return nil }},
	{Name: jmsFieldPriority, Apply: func(p *jms.Outgoing, s string) (err error) { p.Priority, err = jms.ParsePriority(s); return }},
	{Name: jmsFieldTTL, Apply: func(p *jms.Outgoing, s string) (err error) { p.TTL, err = ttl.Parse(s); return }},
	{Name: jmsFieldMessageID, Apply: func(p *jms.Outgoing, s string) error { p.MessageID = s; return nil }},
	{Name: jmsFieldCorrelationID, Apply: func(p *jms.Outgoing, s string) error { p.CorrelationID = s; return nil }},
	{Name: jmsFieldJMSType, Apply: func(p *jms.Outgoing, s string) error { p.JMSType = s; return nil }},
	{Name: jmsFieldReplyTo, Apply: func(p *jms.Outgoing, s string) error { p.ReplyToName = s; return nil }},
	{Name: jmsFieldGroupID, Apply: func(p *jms.Outgoing, s string) error { p.GroupID = s; return nil }},
	{Name: jmsFieldGroupSequence, Apply: func(p *jms.Outgoing, s string) (err error) { p.GroupSequence, err = jms.ParseGroupSequence(s); return }},
}

// prepare evaluates interpolations and builds in p the JMS view of message
// i. Its message ID is fixed here, so a resend carries the same one.
func (o *jmsOutput) prepare(p *jms.Outgoing, batch service.MessageBatch, ev *interp.Eval[jms.Outgoing], i int) error {
	*p = o.tmpl
	if err := ev.Apply(p, i); err != nil {
		return err
	}
	if p.DestName == "" {
		return fmt.Errorf("the %s name resolved to an empty string", p.DestKind)
	}
	msg := batch[i]
	var err error
	if p.Type == jms.BodyMap {
		v, err := msg.AsStructured()
		if err != nil {
			return fmt.Errorf("message_type map needs a JSON object payload: %w", err)
		}
		if p.Map, err = jms.MapBody(v); err != nil {
			return err
		}
	} else if p.Body, err = msg.AsBytes(); err != nil {
		return err
	}
	if p.MessageID == "" {
		p.MessageID = jms.NewMessageID()
	}
	if p.Properties, err = jms.Properties(o.props.Of(msg)); err != nil {
		return err
	}
	p.CreationTime = time.Now()
	return nil
}

// Connect dials without holding the output's mutex, so a slow dial blocks
// neither writers (they report ErrNotConnected) nor Close.
func (o *jmsOutput) Connect(ctx context.Context) error {
	o.mu.Lock()
	closed, start := o.closed, o.urlIndex
	o.mu.Unlock()
	if closed {
		return errJMSClosed
	}
	if o.sender.Load() != nil {
		return nil
	}
	s, idx, err := o.connConf.DialSender(ctx, o.link, start, o.sendConf)
	if err != nil {
		return err
	}

	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed || o.sender.Load() != nil {
		_ = s.Close()
		if o.closed {
			return errJMSClosed
		}
		return nil
	}
	if o.connected {
		o.mReconnects.Incr(1)
	}
	o.sender.Store(s)
	o.urlIndex, o.connected = idx, true
	o.log.Infof("jms output connected to %s (address style %s, anonymous relay %v)", s.Conn().URL(), s.Addresser().Style(), s.Conn().UsesRelay())
	return nil
}

var errJMSClosed = errors.New("jms output is closed")

// disconnect forgets s after its connection failed, so the next Connect
// dials afresh, starting with the next URL.
func (o *jmsOutput) disconnect(s *jms.Sender) {
	o.mu.Lock()
	if o.sender.CompareAndSwap(s, nil) {
		o.urlIndex = (o.urlIndex + 1) % len(o.connConf.Dial.URLs)
	}
	o.mu.Unlock()
	_ = s.Close()
}

func (o *jmsOutput) WriteBatch(ctx context.Context, batch service.MessageBatch) error {
	s := o.sender.Load()
	if s == nil {
		return service.ErrNotConnected
	}
	w := jms.GetWork(len(batch))
	defer w.Release()
	msgs, res := w.Msgs, w.Res
	ev := o.fields.Batch(batch)
	for i := range batch {
		if err := o.prepare(msgs[i], batch, &ev, i); err != nil {
			msgs[i], res[i].Err = nil, &jms.MessageError{Label: jms.LabelEncoding, Err: err}
		}
	}
	if err := s.Send(ctx, msgs, res); err != nil {
		if !errors.Is(err, jms.ErrConnectionLost) {
			return err
		}
		// Benthos reconnects and resends the whole batch: at least once.
		o.log.Warnf("jms output: %v; reconnecting", err)
		for _, r := range res {
			if errors.Is(r.Err, jms.ErrConnectionLost) {
				o.mFailures.Incr(1, jms.LabelConnection)
			}
		}
		o.disconnect(s)
		return service.ErrNotConnected
	}
	var bErr *service.BatchError
	var sent, latency int64 // latency of the batch: until its last settlement
	for i, r := range res {
		if r.Err == nil {
			sent, latency = sent+1, max(latency, r.Latency.Nanoseconds())
			continue
		}
		o.mFailures.Incr(1, jms.FailureLabel(r.Err))
		if bErr == nil {
			bErr = service.NewBatchError(batch, r.Err)
		}
		bErr.Failed(i, r.Err)
	}
	if sent > 0 {
		o.mSent.Add(sent)
		o.mLatency.Timing(latency)
	}
	if bErr != nil {
		return bErr
	}
	return nil
}

func (o *jmsOutput) Close(ctx context.Context) error {
	defer o.mSent.Flush()
	o.mu.Lock()
	o.closed = true
	s := o.sender.Swap(nil)
	o.mu.Unlock()
	if s == nil {
		return nil
	}
	return s.Close()
}
