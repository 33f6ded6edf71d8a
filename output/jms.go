package output

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/Azure/go-amqp"
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connect-solace/connect-solace/internal/jms"
)

const (
	jmsFieldQueue          = "queue"
	jmsFieldTopic          = "topic"
	jmsFieldMessageType    = "message_type"
	jmsFieldDeliveryMode   = "delivery_mode"
	jmsFieldPriority       = "priority"
	jmsFieldTTL            = "ttl"
	jmsFieldMessageID      = "message_id"
	jmsFieldCorrelationID  = "correlation_id"
	jmsFieldJMSType        = "jms_type"
	jmsFieldReplyTo        = "reply_to"
	jmsFieldReplyToType    = "reply_to_type"
	jmsFieldGroupID        = "group_id"
	jmsFieldGroupSequence  = "group_sequence"
	jmsFieldMetadata       = "metadata"
	jmsFieldRetry          = "retry"
	jmsFieldMaxRetries     = "max_retries"
	jmsFieldInitInterval   = "initial_interval"
	jmsFieldMaxInterval    = "max_interval"
	jmsFieldMaxElapsed     = "max_elapsed_time"
	jmsFieldSendTimeout    = "send_timeout"
	jmsFieldAnonymousRelay = "anonymous_relay"
	jmsFieldLinkCacheSize  = "link_cache_size"
	jmsFieldContainerID    = "container_id"
	jmsFieldBatching       = "batching"

	jmsDeliveryPersistent    = "persistent"
	jmsDeliveryNonPersistent = "non_persistent"
)

func jmsOutputSpec() *service.ConfigSpec {
	return service.NewConfigSpec().
		Beta().
		Categories("Services").
		Summary("Sends messages to a JMS queue or topic over AMQP 1.0, encoded per the OASIS AMQP JMS Mapping so JMS consumers receive proper TextMessage, BytesMessage or MapMessage objects.").
		Description(`
Works with any broker that JMS 2.0 clients reach over AMQP 1.0: ActiveMQ 5, ActiveMQ Artemis, Solace PubSub+, RabbitMQ (amqp1_0 plugin), Qpid, IBM MQ and Azure Service Bus. It does what Beam's `+"`JmsIO.Write`"+` does, with three differences users asked for:

- **Per-message outcomes.** A message counts as delivered only when the broker settles it `+"`accepted`"+`. Messages the broker rejects, releases or modifies fail on their own through a batch error carrying the broker's condition and description, so `+"`fallback`"+` and `+"`reject_errored`"+` route exactly those messages.
- **Connection recycling.** After a connection or link failure the connection and its links are closed and re-established before the retry, trying the next URL for failover.
- **Pipelining.** Many deliveries are in flight at once (`+"`max_in_flight`"+` batches, each sent without waiting for the previous disposition), instead of one round trip per message.

### Message encoding

| `+"`message_type`"+` | AMQP body | content-type | `+"`x-opt-jms-msg-type`"+` |
|---|---|---|---|
| `+"`text`"+` | amqp-value string | none | 5 (TextMessage) |
| `+"`bytes`"+` | data section | `+"`application/octet-stream`"+` | 3 (BytesMessage) |
| `+"`map`"+` | amqp-value map with string keys | none | 2 (MapMessage) |

`+"`x-opt-jms-dest`"+` (and `+"`x-opt-jms-reply-type`"+` with `+"`reply_to`"+`) say whether the destination is a queue (0) or a topic (1). The header always carries `+"`durable`"+` and the priority (JMS default 4), the properties always carry a message ID, `+"`to`"+` and the creation time (JMSTimestamp), and a `+"`ttl`"+` sets both the header ttl and the absolute expiry time (JMSExpiration).

### Properties

Metadata selected by `+"`metadata`"+` becomes application properties (JMS message properties). A key that is not a legal JMS property name (a Java identifier, not a selector keyword, not starting with `+"`JMS`"+` unless `+"`JMS_`"+`) fails the message. Values are converted to JMS types, because a broker turns a message carrying an AMQP timestamp, UUID or nested value into an opaque BytesMessage: timestamps become epoch milliseconds, UUIDs and other objects strings, unsigned integers the next wider signed type, nested values their JSON text.

### Links

When the broker offers `+"`ANONYMOUS-RELAY`"+`, every message goes over one link without a target address and carries its own `+"`to`"+`, so interpolated destinations cost nothing. Otherwise one link per destination is kept, at most `+"`link_cache_size`"+` of them, least recently used closed first.

### Metrics

`+"`jms_messages_sent`"+`, `+"`jms_send_failures`"+` (label `+"`condition`"+`: the broker's error condition such as `+"`amqp:not-found`"+`, else `+"`rejected`"+`, `+"`released`"+`, `+"`modified`"+`, `+"`connection`"+` after retries, or `+"`encoding`"+` for messages that cannot be encoded), `+"`jms_send_retries`"+`, `+"`jms_reconnects`"+` and the timer `+"`jms_send_latency_ns`"+` (send to settlement).`).
		Fields(jms.ConnectionFields()...).
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
				Description("Time to live, as a duration (`30s`, `5m`) or milliseconds. Sets the header ttl and the absolute expiry time (JMSExpiration). Empty or `0` means never expire.").
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
				Description("Which metadata keys become JMS properties (application-properties). Nothing is sent by default.").
				Optional(),
			service.NewObjectField(jmsFieldRetry,
				service.NewIntField(jmsFieldMaxRetries).
					Description("How many times a send that failed because of the connection or a link is retried, each time after recycling the connection. 0 disables retries.").
					Default(5),
				service.NewDurationField(jmsFieldInitInterval).
					Description("Wait before the first retry; it doubles after each, with jitter.").
					Default("500ms"),
				service.NewDurationField(jmsFieldMaxInterval).
					Description("Longest wait between retries.").
					Default("10s"),
				service.NewDurationField(jmsFieldMaxElapsed).
					Description("Give up retrying once this much time has passed since the first failure. 0 means no limit.").
					Default("1m"),
			).Description("Retries for connection and link failures, with exponential backoff and jitter, like Beam's `RetryConfiguration`. Messages the broker rejects are not retried here; they fail on their own."),
			service.NewDurationField(jmsFieldSendTimeout).
				Description("How long one attempt waits for the broker to settle its deliveries before the connection is treated as failed.").
				Default("30s").
				Advanced(),
			service.NewBoolField(jmsFieldAnonymousRelay).
				Description("Send over one anonymous-relay link when the broker offers `ANONYMOUS-RELAY`. Disable to always use a link per destination.").
				Default(true).
				Advanced(),
			service.NewIntField(jmsFieldLinkCacheSize).
				Description("How many per-destination links to keep open when anonymous relay is not used.").
				Default(64).
				Advanced(),
			service.NewStringField(jmsFieldContainerID).
				Description("AMQP container ID (the JMS client ID seen by the broker). Empty means random.").
				Default("").
				Advanced(),
			service.NewOutputMaxInFlightField(),
			service.NewBatchPolicyField(jmsFieldBatching),
		).
		LintRule(`
let q = this.queue.or("") != ""
let t = this.topic.or("") != ""
root = match {
  !$q && !$t => [ "field queue or topic is required: set queue: <name> for point-to-point or topic: <name> for publish/subscribe" ],
  $q && $t => [ "fields queue and topic are both set: a JMS destination is either a queue or a topic, remove one of them" ],
`+jms.ConnectionLintArms+`  _ => [],
}
`).
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

func init() {
	if err := registerJMSOutput(service.GlobalEnvironment()); err != nil {
		panic(err)
	}
}

// registerJMSOutput adds the jms output to env; see Register.
func registerJMSOutput(env *service.Environment) error {
	return env.RegisterBatchOutput("jms", jmsOutputSpec(),
		func(conf *service.ParsedConfig, mgr *service.Resources) (out service.BatchOutput, policy service.BatchPolicy, maxInFlight int, err error) {
			if maxInFlight, err = conf.FieldMaxInFlight(); err != nil {
				return
			}
			if policy, err = conf.FieldBatchPolicy(jmsFieldBatching); err != nil {
				return
			}
			out, err = newJMSOutputFromParsed(conf, mgr)
			return
		})
}

type jmsRetry struct {
	maxRetries int
	initial    time.Duration
	max        time.Duration
	maxElapsed time.Duration
}

// backoff returns the wait before retry n (0-based): exponential, capped,
// with "equal jitter" so concurrent writers do not retry in lock step.
func (r jmsRetry) backoff(n int) time.Duration {
	d := r.initial
	for i := 0; i < n && d < r.max; i++ {
		d *= 2
	}
	if r.max > 0 && d > r.max {
		d = r.max
	}
	if d <= 0 {
		return 0
	}
	half := d / 2
	return half + rand.N(d-half+1)
}

type jmsOutput struct {
	log *service.Logger

	connConf jms.ConnConfig
	// dial carries the output's own link settings (relay, cache size,
	// container ID) on top of connConf.Dial.
	dial jms.DialConfig

	queue, topic  *service.InterpolatedString
	destKind      jms.DestKind
	msgType       jms.BodyType
	persistent    bool
	priority      *service.InterpolatedString
	ttl           *service.InterpolatedString
	messageID     *service.InterpolatedString
	correlationID *service.InterpolatedString
	jmsType       *service.InterpolatedString
	replyTo       *service.InterpolatedString
	replyToKind   jms.DestKind
	groupID       *service.InterpolatedString
	groupSeq      *service.InterpolatedString
	meta          *service.MetadataFilter
	statics       map[*service.InterpolatedString]string

	retry       jmsRetry
	sendTimeout time.Duration

	mSent       *service.MetricCounter
	mFailures   *service.MetricCounter
	mRetries    *service.MetricCounter
	mReconnects *service.MetricCounter
	mLatency    *service.MetricTimer

	mu        sync.Mutex
	conn      *jms.Conn
	addresser jms.Addresser
	urlIndex  int
	connected bool // a connection was made before, so the next is a reconnect
	closed    bool // Close was called: retries must not dial again
}

func newJMSOutputFromParsed(conf *service.ParsedConfig, mgr *service.Resources) (*jmsOutput, error) {
	o := &jmsOutput{
		log:         mgr.Logger(),
		mSent:       mgr.Metrics().NewCounter("jms_messages_sent"),
		mFailures:   mgr.Metrics().NewCounter("jms_send_failures", "condition"),
		mRetries:    mgr.Metrics().NewCounter("jms_send_retries"),
		mReconnects: mgr.Metrics().NewCounter("jms_reconnects"),
		mLatency:    mgr.Metrics().NewTimer("jms_send_latency_ns"),
	}
	conn, err := jms.ConnConfigFromParsed(conf)
	if err != nil {
		return nil, err
	}
	o.connConf, o.dial = conn, conn.Dial
	if o.dial.AnonymousRelay, err = conf.FieldBool(jmsFieldAnonymousRelay); err != nil {
		return nil, err
	}
	if o.dial.LinkCacheSize, err = conf.FieldInt(jmsFieldLinkCacheSize); err != nil {
		return nil, err
	}
	if o.dial.LinkCacheSize < 1 {
		return nil, fmt.Errorf("field %s must be at least 1, got %d", jmsFieldLinkCacheSize, o.dial.LinkCacheSize)
	}
	if o.dial.ContainerID, err = conf.FieldString(jmsFieldContainerID); err != nil {
		return nil, err
	}

	if conf.Contains(jmsFieldQueue) {
		if o.queue, err = conf.FieldInterpolatedString(jmsFieldQueue); err != nil {
			return nil, err
		}
	}
	if conf.Contains(jmsFieldTopic) {
		if o.topic, err = conf.FieldInterpolatedString(jmsFieldTopic); err != nil {
			return nil, err
		}
	}
	switch {
	case o.queue == nil && o.topic == nil:
		return nil, errors.New("field queue or topic is required: set queue: <name> for point-to-point or topic: <name> for publish/subscribe")
	case o.queue != nil && o.topic != nil:
		return nil, errors.New("fields queue and topic are both set: a JMS destination is either a queue or a topic, remove one of them")
	case o.topic != nil:
		o.destKind = jms.KindTopic
	default:
		o.destKind = jms.KindQueue
	}

	mt, err := conf.FieldString(jmsFieldMessageType)
	if err != nil {
		return nil, err
	}
	o.msgType = jms.BodyType(mt)
	dm, err := conf.FieldString(jmsFieldDeliveryMode)
	if err != nil {
		return nil, err
	}
	o.persistent = dm == jmsDeliveryPersistent

	for _, f := range []struct {
		name string
		dst  **service.InterpolatedString
	}{
		{jmsFieldPriority, &o.priority},
		{jmsFieldTTL, &o.ttl},
		{jmsFieldMessageID, &o.messageID},
		{jmsFieldCorrelationID, &o.correlationID},
		{jmsFieldJMSType, &o.jmsType},
		{jmsFieldReplyTo, &o.replyTo},
		{jmsFieldGroupID, &o.groupID},
		{jmsFieldGroupSequence, &o.groupSeq},
	} {
		if *f.dst, err = jmsOptionalInterpolated(conf, f.name); err != nil {
			return nil, err
		}
	}
	if o.priority != nil {
		if s, ok := o.priority.Static(); ok {
			if _, err := jmsParsePriority(s); err != nil {
				return nil, fmt.Errorf("field %s: %w", jmsFieldPriority, err)
			}
		}
	}
	o.statics = map[*service.InterpolatedString]string{}
	for _, is := range []*service.InterpolatedString{o.queue, o.topic, o.priority, o.ttl, o.messageID, o.correlationID, o.jmsType, o.replyTo, o.groupID, o.groupSeq} {
		if is == nil {
			continue
		}
		if v, ok := is.Static(); ok {
			o.statics[is] = v
		}
	}
	rt, err := conf.FieldString(jmsFieldReplyToType)
	if err != nil {
		return nil, err
	}
	o.replyToKind = jms.KindQueue
	if rt == "topic" {
		o.replyToKind = jms.KindTopic
	}
	if conf.Contains(jmsFieldMetadata) {
		if o.meta, err = conf.FieldMetadataFilter(jmsFieldMetadata); err != nil {
			return nil, err
		}
	}

	rc := conf.Namespace(jmsFieldRetry)
	if o.retry.maxRetries, err = rc.FieldInt(jmsFieldMaxRetries); err != nil {
		return nil, err
	}
	if o.retry.initial, err = rc.FieldDuration(jmsFieldInitInterval); err != nil {
		return nil, err
	}
	if o.retry.max, err = rc.FieldDuration(jmsFieldMaxInterval); err != nil {
		return nil, err
	}
	if o.retry.maxElapsed, err = rc.FieldDuration(jmsFieldMaxElapsed); err != nil {
		return nil, err
	}
	if o.retry.maxRetries < 0 {
		return nil, fmt.Errorf("field %s.%s cannot be negative", jmsFieldRetry, jmsFieldMaxRetries)
	}
	if o.sendTimeout, err = conf.FieldDuration(jmsFieldSendTimeout); err != nil {
		return nil, err
	}
	return o, nil
}

// jmsOptionalInterpolated returns nil for an absent or empty field, so the hot
// path skips fields the user did not set.
func jmsOptionalInterpolated(conf *service.ParsedConfig, name string) (*service.InterpolatedString, error) {
	if !conf.Contains(name) {
		return nil, nil
	}
	is, err := conf.FieldInterpolatedString(name)
	if err != nil {
		return nil, err
	}
	if s, ok := is.Static(); ok && s == "" {
		return nil, nil
	}
	return is, nil
}

func jmsParsePriority(s string) (uint8, error) {
	p, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || p < 0 || p > 9 {
		return 0, fmt.Errorf("JMS priority must be an integer from 0 to 9, got %q", s)
	}
	return uint8(p), nil
}

func jmsParseTTL(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		if ms < 0 {
			return 0, fmt.Errorf("ttl cannot be negative, got %q", s)
		}
		return time.Duration(ms) * time.Millisecond, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("ttl must be a duration such as 30s or a number of milliseconds, got %q", s)
	}
	return d, nil
}

func (o *jmsOutput) Connect(ctx context.Context) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.conn != nil {
		return nil
	}
	return o.connectLocked(ctx)
}

func (o *jmsOutput) connectLocked(ctx context.Context) error {
	if o.closed {
		return errors.New("jms output is closed")
	}
	dial, err := o.connConf.ResolvedDial()
	if err != nil {
		return err
	}
	dial.AnonymousRelay, dial.LinkCacheSize, dial.ContainerID = o.dial.AnonymousRelay, o.dial.LinkCacheSize, o.dial.ContainerID
	c, idx, err := jms.DialAny(ctx, dial, o.urlIndex)
	if err != nil {
		return err
	}
	addr, err := o.connConf.Addresser(c.Properties())
	if err != nil {
		_ = c.Close()
		return err
	}
	if o.connected {
		o.mReconnects.Incr(1)
	}
	o.conn, o.addresser, o.urlIndex, o.connected = c, addr, idx, true
	o.log.Infof("jms output connected to %s (address style %s, anonymous relay %v)", c.URL(), addr.Style(), c.UsesRelay())
	return nil
}

// recycle closes c if it is still the current connection, so the next
// attempt dials afresh, starting with the next URL.
func (o *jmsOutput) recycle(c *jms.Conn) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.conn != c || c == nil {
		return
	}
	_ = c.Close()
	o.conn = nil
	o.urlIndex = (o.urlIndex + 1) % len(o.dial.URLs)
}

func (o *jmsOutput) current() (*jms.Conn, jms.Addresser) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.conn, o.addresser
}

// jmsPrepared is everything about a message that must not change between
// attempts (its message ID above all, so brokers can spot a resend).
type jmsPrepared struct {
	msg      jms.Message
	destName string
	replyTo  string
}

// jmsEval evaluates the output's interpolated fields over one batch. Static
// fields (the common case) cost a map read; a dynamic one gets one executor
// per batch, rather than TryInterpolatedString's copy of the batch per call.
type jmsEval struct {
	batch   service.MessageBatch
	statics map[*service.InterpolatedString]string
	execs   map[*service.InterpolatedString]*service.MessageBatchInterpolationExecutor
}

func (o *jmsOutput) newEval(batch service.MessageBatch) *jmsEval {
	return &jmsEval{batch: batch, statics: o.statics}
}

func (e *jmsEval) str(field string, is *service.InterpolatedString, i int) (string, error) {
	if is == nil {
		return "", nil
	}
	if s, ok := e.statics[is]; ok {
		return s, nil
	}
	x := e.execs[is]
	if x == nil {
		if e.execs == nil {
			e.execs = map[*service.InterpolatedString]*service.MessageBatchInterpolationExecutor{}
		}
		x = e.batch.InterpolationExecutor(is)
		e.execs[is] = x
	}
	s, err := x.TryString(i)
	if err != nil {
		return "", fmt.Errorf("interpolating %s: %w", field, err)
	}
	return s, nil
}

// prepare evaluates interpolations and builds the JMS view of message i.
func (o *jmsOutput) prepare(ev *jmsEval, i int) (*jmsPrepared, error) {
	batch := ev.batch
	p := &jmsPrepared{msg: jms.Message{Type: o.msgType, Persistent: o.persistent, Priority: jms.DefaultPriority}}
	m := &p.msg
	str := func(field string, is *service.InterpolatedString) (string, error) {
		return ev.str(field, is, i)
	}
	var err error
	if o.destKind == jms.KindTopic {
		p.destName, err = str(jmsFieldTopic, o.topic)
	} else {
		p.destName, err = str(jmsFieldQueue, o.queue)
	}
	if err != nil {
		return nil, err
	}
	if p.destName == "" {
		return nil, fmt.Errorf("the %s name resolved to an empty string", o.destKind)
	}

	msg := batch[i]
	if o.msgType == jms.BodyMap {
		v, err := msg.AsStructured()
		if err != nil {
			return nil, fmt.Errorf("message_type map needs a JSON object payload: %w", err)
		}
		if m.Map, err = jms.MapBody(v); err != nil {
			return nil, err
		}
	} else {
		if m.Body, err = msg.AsBytes(); err != nil {
			return nil, err
		}
	}

	if o.priority != nil {
		s, err := str(jmsFieldPriority, o.priority)
		if err != nil {
			return nil, err
		}
		if m.Priority, err = jmsParsePriority(s); err != nil {
			return nil, err
		}
	}
	if o.ttl != nil {
		s, err := str(jmsFieldTTL, o.ttl)
		if err != nil {
			return nil, err
		}
		if m.TTL, err = jmsParseTTL(s); err != nil {
			return nil, err
		}
	}
	if m.MessageID, err = str(jmsFieldMessageID, o.messageID); err != nil {
		return nil, err
	}
	if m.MessageID == "" {
		m.MessageID = jms.NewMessageID()
	}
	if m.CorrelationID, err = str(jmsFieldCorrelationID, o.correlationID); err != nil {
		return nil, err
	}
	if m.JMSType, err = str(jmsFieldJMSType, o.jmsType); err != nil {
		return nil, err
	}
	if p.replyTo, err = str(jmsFieldReplyTo, o.replyTo); err != nil {
		return nil, err
	}
	if m.GroupID, err = str(jmsFieldGroupID, o.groupID); err != nil {
		return nil, err
	}
	if o.groupSeq != nil {
		s, err := str(jmsFieldGroupSequence, o.groupSeq)
		if err != nil {
			return nil, err
		}
		if s != "" {
			n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 32)
			if err != nil {
				return nil, fmt.Errorf("group_sequence must be an unsigned 32-bit integer, got %q", s)
			}
			seq := uint32(n)
			m.GroupSequence = &seq
		}
	}
	if o.meta != nil {
		props := map[string]any{}
		if err := o.meta.WalkMut(msg, func(k string, v any) error {
			props[k] = v
			return nil
		}); err != nil {
			return nil, err
		}
		if m.Properties, err = jms.Properties(props); err != nil {
			return nil, err
		}
	}
	m.CreationTime = time.Now()
	return p, nil
}

// jmsOutcomeError is a delivery the broker settled other than accepted.
type jmsOutcomeError struct {
	Outcome     string // rejected, released or modified
	Condition   string
	Description string
}

func (e *jmsOutcomeError) Error() string {
	s := "broker " + e.Outcome + " the message"
	if e.Condition != "" {
		s += ": " + e.Condition
	}
	if e.Description != "" {
		s += ": " + e.Description
	}
	return s
}

// metricCondition is the failure label: the broker's condition, else the
// outcome.
func (e *jmsOutcomeError) metricCondition() string {
	if e.Condition != "" {
		return e.Condition
	}
	return e.Outcome
}

func jmsOutcome(state amqp.DeliveryState) error {
	switch s := state.(type) {
	case *amqp.StateAccepted:
		return nil
	case *amqp.StateRejected:
		e := &jmsOutcomeError{Outcome: "rejected"}
		if s.Error != nil {
			e.Condition, e.Description = string(s.Error.Condition), s.Error.Description
		}
		return e
	case *amqp.StateReleased:
		return &jmsOutcomeError{Outcome: "released", Description: "the broker did not process it; it may be resent"}
	case *amqp.StateModified:
		e := &jmsOutcomeError{Outcome: "modified"}
		if s.UndeliverableHere {
			e.Description = "undeliverable here"
		}
		return e
	case nil:
		return &jmsOutcomeError{Outcome: "settled without an outcome"}
	}
	return &jmsOutcomeError{Outcome: fmt.Sprintf("settled with state %T", state)}
}

func (o *jmsOutput) WriteBatch(ctx context.Context, batch service.MessageBatch) error {
	if c, _ := o.current(); c == nil {
		return service.ErrNotConnected
	}

	results := make([]error, len(batch))
	prepared := make([]*jmsPrepared, len(batch))
	pending := make([]int, 0, len(batch))
	ev := o.newEval(batch)
	for i := range batch {
		p, err := o.prepare(ev, i)
		if err != nil {
			results[i] = err
			o.mFailures.Incr(1, "encoding")
			continue
		}
		prepared[i] = p
		pending = append(pending, i)
	}

	var firstFailure time.Time
	for attempt := 0; len(pending) > 0; attempt++ {
		conn, addr := o.current()
		var lastErr error
		if conn == nil {
			o.mu.Lock()
			if o.conn == nil {
				lastErr = o.connectLocked(ctx)
			}
			o.mu.Unlock()
			conn, addr = o.current()
		}
		if conn != nil {
			pending, lastErr = o.sendAttempt(ctx, conn, addr, prepared, pending, results)
			if len(pending) > 0 || conn.Lost() {
				o.recycle(conn)
			}
		}
		if len(pending) == 0 {
			break
		}
		if ctx.Err() != nil {
			lastErr = ctx.Err()
		}
		if firstFailure.IsZero() {
			firstFailure = time.Now()
		}
		wait := o.retry.backoff(attempt)
		giveUp := ctx.Err() != nil || attempt >= o.retry.maxRetries ||
			(o.retry.maxElapsed > 0 && time.Since(firstFailure)+wait > o.retry.maxElapsed)
		if giveUp {
			for _, i := range pending {
				results[i] = fmt.Errorf("sending to %s failed after %d attempts: %w", prepared[i].destName, attempt+1, lastErr)
				o.mFailures.Incr(1, "connection")
			}
			break
		}
		o.log.Warnf("jms send attempt %d failed for %d messages, reconnecting and retrying in %v: %v", attempt+1, len(pending), wait, lastErr)
		o.mRetries.Incr(1)
		select {
		case <-time.After(wait):
		case <-ctx.Done():
		}
	}

	var bErr *service.BatchError
	for i, err := range results {
		if err == nil {
			continue
		}
		if bErr == nil {
			bErr = service.NewBatchError(batch, err)
		}
		bErr.Failed(i, err)
	}
	if bErr != nil {
		return bErr
	}
	return nil
}

type jmsInflight struct {
	idx     int
	receipt amqp.SendReceipt
	start   time.Time
}

// sendAttempt sends every pending message without waiting in between, then
// collects the settlements. It fills results for delivered and permanently
// failed messages and returns those whose fate a connection or link failure
// left unknown, with that failure.
func (o *jmsOutput) sendAttempt(ctx context.Context, conn *jms.Conn, addr jms.Addresser, prepared []*jmsPrepared, pending []int, results []error) ([]int, error) {
	ctx, cancel := context.WithTimeout(ctx, o.sendTimeout)
	defer cancel()

	var (
		retry    []int
		connErr  error
		inflight = make([]jmsInflight, 0, len(pending))
		releases []func()
		// Consecutive messages for one destination (the common case) share
		// one resolution and link lookup, and go to the link as one run.
		lastName string
		lastDest jms.Destination
		link     *jms.Link
		run      = make([]*amqp.Message, 0, len(pending))
		runIdx   = make([]int, 0, len(pending))
	)
	defer func() {
		for _, r := range releases {
			r()
		}
	}()
	// flush transfers the run; on a link or connection failure it queues the
	// unsent messages for the retry and reports false.
	flush := func() bool {
		if len(run) == 0 {
			return true
		}
		start := time.Now()
		res := link.SendAll(ctx, run)
		for k, r := range res {
			i := runIdx[k]
			switch {
			case r.Err == nil:
				inflight = append(inflight, jmsInflight{idx: i, receipt: r.Receipt, start: start})
			case jms.IsMessageError(r.Err):
				results[i] = fmt.Errorf("message too large for %s: %w", lastDest.Address, r.Err)
				o.mFailures.Incr(1, string(amqp.ErrCondMessageSizeExceeded))
			default:
				connErr = r.Err
				retry = append(retry, runIdx[k:]...)
			}
		}
		run, runIdx = run[:0], runIdx[:0]
		return connErr == nil
	}

	for n, i := range pending {
		p := prepared[i]
		if link == nil || p.destName != lastName {
			if !flush() {
				retry = append(retry, pending[n:]...)
				break
			}
			dest, err := addr.Resolve(o.destKind, p.destName)
			if err != nil {
				results[i] = err
				o.mFailures.Incr(1, "encoding")
				continue
			}
			l, release, err := conn.Sender(ctx, dest)
			if err != nil {
				var refused *jms.RefusedError
				if errors.As(err, &refused) {
					results[i] = err
					o.mFailures.Incr(1, string(refused.Err.Condition))
					link = nil
					continue
				}
				connErr = err
				retry = append(retry, pending[n:]...)
				break
			}
			releases = append(releases, release)
			lastName, lastDest, link = p.destName, dest, l
		}
		p.msg.Destination = lastDest
		p.msg.ReplyTo = nil
		if p.replyTo != "" {
			rt, err := addr.Resolve(o.replyToKind, p.replyTo)
			if err != nil {
				results[i] = fmt.Errorf("reply_to: %w", err)
				o.mFailures.Incr(1, "encoding")
				continue
			}
			p.msg.ReplyTo = &rt
		}
		am, err := jms.Encode(&p.msg)
		if err != nil {
			results[i] = err
			o.mFailures.Incr(1, "encoding")
			continue
		}
		run = append(run, am)
		runIdx = append(runIdx, i)
	}
	if connErr == nil {
		flush()
	}

	for k := range inflight {
		f := &inflight[k]
		state, err := f.receipt.Wait(ctx)
		if err != nil {
			if connErr == nil {
				connErr = err
			}
			retry = append(retry, f.idx)
			continue
		}
		o.mLatency.Timing(time.Since(f.start).Nanoseconds())
		if oerr := jmsOutcome(state); oerr != nil {
			results[f.idx] = oerr
			o.mFailures.Incr(1, oerr.(*jmsOutcomeError).metricCondition())
			continue
		}
		o.mSent.Incr(1)
	}
	if connErr != nil {
		connErr = fmt.Errorf("connection to %s: %w", conn.URL(), connErr)
	}
	return retry, connErr
}

func (o *jmsOutput) Close(ctx context.Context) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closed = true
	if o.conn == nil {
		return nil
	}
	err := o.conn.Close()
	o.conn = nil
	return err
}
