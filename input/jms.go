package input

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connect-solace/connect-solace/internal/confread"
	"github.com/connect-solace/connect-solace/internal/jms"
	"github.com/connect-solace/connect-solace/internal/jmscfg"
	"github.com/connect-solace/connect-solace/internal/tracingcfg"
)

const (
	jiFieldQueue              = "queue"
	jiFieldTopic              = "topic"
	jiFieldSubscriptionName   = "subscription_name"
	jiFieldDurable            = "durable"
	jiFieldShared             = "shared"
	jiFieldClientID           = "client_id"
	jiFieldUnsubscribeOnClose = "unsubscribe_on_close"
	jiFieldSelector           = "selector"
	jiFieldPrefetch           = "prefetch"
	jiFieldNackOutcome        = "nack_outcome"
	jiFieldBatchSize          = "batch_size"
	jiFieldMaxPropertyBytes   = "max_property_bytes"
)

// Values of nack_outcome.
const (
	jiNackReleased = "released"
	jiNackModified = "modified"
	jiNackRejected = "rejected"
)

// The input's lint rule (see jmscfg.Spec) calls this method.
var _ = jmscfg.RegisterLint("jms_input_lint", jmsInputSpec, jiDestination)

// jiDestination says whether queue and topic are set, for lint.
func jiDestination(pc *service.ParsedConfig) (queue, topic bool, err error) {
	var q, t string
	if q, err = pc.FieldString(jiFieldQueue); err == nil {
		t, err = pc.FieldString(jiFieldTopic)
	}
	return q != "", t != "", err
}

func jmsInputSpec() *service.ConfigSpec {
	return jmscfg.Spec("Consumes a JMS queue or topic over AMQP 1.0, decoding messages per the OASIS AMQP JMS Mapping and settling each one only after the pipeline acknowledged it.", `
Reads from any broker that JMS 2.0 clients reach over AMQP 1.0: ActiveMQ 5, ActiveMQ Artemis, Solace PubSub+, RabbitMQ (amqp1_0 plugin), Qpid, IBM MQ and Azure Service Bus. Unlike a plain AMQP 1.0 input it knows JMS: message classes, headers, typed properties, durable and shared subscriptions and selectors. A message the `+"`jms`"+` output sent and this input read back keeps its body, headers and properties, so a `+"`jms`"+` → `+"`jms`"+` bridge is lossless.

### Source

Set exactly one of `+"`queue`"+` and `+"`topic`"+`; names are mapped to addresses by `+"`address_style`"+`, as in the `+"`jms`"+` output.

A topic is consumed by a subscription. Without `+"`subscription_name`"+` it is a plain non-durable subscription that ends with the connection. With it, as JMS 2.0 defines:

| `+"`durable`"+` | `+"`shared`"+` | JMS equivalent | link name (AMQP JMS Mapping) |
|---|---|---|---|
| true | false | `+"`createDurableConsumer`"+` (needs `+"`client_id`"+`) | `+"`<subscription_name>`"+` |
| true | true | `+"`createSharedDurableConsumer`"+` | `+"`<subscription_name>`"+`, or `+"`<subscription_name>|global`"+` without `+"`client_id`"+` |
| false | true | `+"`createSharedConsumer`"+` | `+"`<subscription_name>|volatile1`"+`, or `+"`<subscription_name>|global-volatile1`"+` |

`+"`client_id`"+` is the AMQP container ID, which brokers take as the JMS client ID that scopes subscription names. A durable subscription attaches a source with `+"`durable: unsettled-state`"+` and `+"`expiry-policy: never`"+`; a shared one adds the source capability `+"`shared`"+` (and `+"`global`"+` without `+"`client_id`"+`). A durable subscription is never removed implicitly: when the input stops, its link is detached without closing, so the broker keeps collecting messages for it. Set `+"`unsubscribe_on_close: true`"+` to close the link on shutdown, which deletes the subscription as JMS `+"`unsubscribe`"+` does.

`+"`selector`"+` is a JMS message selector sent as the `+"`apache.org:selector-filter:string`"+` source filter. A broker that does not echo the filter back does not apply it, and the input then refuses to connect rather than deliver every message; RabbitMQ 3.x echoes the filter without applying it, so the input refuses selectors there too.

### Delivery guarantees

The broker may send up to `+"`prefetch`"+` messages ahead of the pipeline (AMQP link credit). As with a JMS client's prefetch, credit is renewed as messages are handed to the pipeline, so the next ones travel while the pipeline still works on the last; at most `+"`prefetch`"+` handed-out messages wait for their acknowledgement before credit waits for settlements too, so at most twice `+"`prefetch`"+` messages are unsettled. Credit is renewed once half the window is used; against RabbitMQ 3.x only once all of it is, because that broker sends more than the window when credit arrives while deliveries are in flight. A message is settled `+"`accepted`"+` only after the pipeline acknowledged it. A message the pipeline rejects is settled with `+"`nack_outcome`"+`. Keep `+"`prefetch`"+` at least as large as any count-based batching downstream, or a batch waits for messages the broker may not send.

When the connection or link fails, the input reconnects through Benthos's connect loop, trying the next URL; unsettled messages are redelivered by the broker (flagged `+"`jms_redelivered`"+`), and late acknowledgements of deliveries from the old link are dropped without failing the pipeline. Delivery is at least once.

A message whose AMQP encoding cannot be split into sections at all is passed on whole, its raw encoding as the payload with `+"`jms_message_type: bytes`"+` and the problem in `+"`jms_decode_error`"+`; a body or property of a type with no Benthos form (the AMQP `+"`decimal`"+` types, which JMS producers never send) is reported the same way, the rest of the message decoded. An AMQP `+"`char`"+` (a Java `+"`char`"+` in a MapMessage or StreamMessage) becomes a one-character string, typed `+"`char`"+`.

### Message body

Chosen by the `+"`x-opt-jms-msg-type`"+` annotation and the body section (inferred from the section and content type when the annotation is missing, as Qpid JMS does):

| JMS class | payload | `+"`jms_message_type`"+` |
|---|---|---|
| TextMessage | the text | `+"`text`"+` |
| BytesMessage | the raw bytes | `+"`bytes`"+` |
| MapMessage | a JSON object; byte arrays base64; `+"`jms_map_types`"+` gives each entry's type (`+"`int`"+`, `+"`long`"+`, `+"`float`"+`, `+"`double`"+`, `+"`bytes`"+`, ...) | `+"`map`"+` |
| StreamMessage | a JSON array; `+"`jms_stream_types`"+` lists the item types | `+"`stream`"+` |
| ObjectMessage | the serialized bytes, never deserialized | `+"`object`"+` |
| Message | empty | `+"`message`"+` |

A message that does not fit the mapping (an unknown type code, a type code that contradicts the body, text that is not UTF-8, a property larger than `+"`max_property_bytes`"+`) is still passed on, with its body in the most faithful raw form, the problem in `+"`jms_decode_error`"+`, and the message flagged as errored (see `+"`errored()`"+` and the `+"`catch`"+` processor).

### Metadata

The JMS headers: `+"`jms_message_id`"+`, `+"`jms_correlation_id`"+`, `+"`jms_type`"+`, `+"`jms_delivery_mode`"+` (`+"`persistent`"+` or `+"`non_persistent`"+`), `+"`jms_priority`"+`, `+"`jms_timestamp`"+` and `+"`jms_expiration`"+` (epoch milliseconds, 0 when unset), `+"`jms_redelivered`"+`, `+"`jms_delivery_count`"+` (JMSXDeliveryCount, 1 on first delivery), `+"`jms_reply_to`"+` and `+"`jms_reply_to_type`"+`, `+"`jms_destination`"+` and `+"`jms_destination_type`"+` (names without the address style's prefix), `+"`jms_group_id`"+`, `+"`jms_group_seq`"+`, `+"`jms_user_id`"+`; then `+"`jms_message_type`"+`, `+"`jms_content_type`"+`, and the type metadata above. `+"`jms_delivery_mode`"+`, `+"`jms_priority`"+` (4 without a header), `+"`jms_redelivered`"+`, `+"`jms_delivery_count`"+`, `+"`jms_timestamp`"+`, `+"`jms_expiration`"+` and `+"`jms_message_type`"+` are always set, the others when the message carries them. Every application property is added under its own name with its type kept (an AMQP int stays a 32-bit integer, a float a 32-bit float), so the `+"`jms`"+` output sends it back unchanged; a property named like a header above is overwritten by the header. The properties `+"`traceparent`"+` and `+"`tracestate`"+` carry the sender's trace context (see `+"`extract_tracing_map`"+`).

### Metrics

- `+"`jms_input_received`"+`: messages handed to the pipeline (added up and reported within 100 ms, not per message, which saves a metric lookup per message).
- `+"`jms_input_acked`"+`: messages settled `+"`accepted`"+` after the pipeline acknowledged them (added up like `+"`jms_input_received`"+`).
- `+"`jms_input_nacked`"+` with label `+"`outcome`"+` (`+"`released`"+`, `+"`modified`"+`, `+"`rejected`"+`).
- `+"`jms_input_stale_settlements`"+`: settlements dropped because the delivery's link was gone (the broker redelivers those messages).
- `+"`jms_input_decode_errors`"+`: messages passed on with `+"`jms_decode_error`"+`.
- `+"`jms_input_reconnects`"+`: connections made after the first.`,
		"jms_input_lint").
		Fields(
			service.NewStringField(jiFieldQueue).
				Description("The JMS queue to consume. Exactly one of `queue` and `topic` must be set.").
				Example("orders").
				Default(""),
			service.NewStringField(jiFieldTopic).
				Description("The JMS topic to subscribe to. Exactly one of `queue` and `topic` must be set.").
				Example("prices").
				Default(""),
			service.NewStringField(jiFieldSubscriptionName).
				Description("The name of a durable or shared topic subscription (JMS `name`). Required by `durable` and `shared`; it may not contain `|`.").
				Example("prices-to-kafka").
				Default(""),
			service.NewBoolField(jiFieldDurable).
				Description("Make the topic subscription durable: the broker keeps it, and collects its messages, while the input is away. Needs `subscription_name`, and `client_id` unless `shared`.").
				Default(false),
			service.NewBoolField(jiFieldShared).
				Description("Make the topic subscription a JMS 2.0 shared subscription, so several inputs (with the same `client_id`, or none) split its messages between them. Needs `subscription_name`.").
				Default(false),
			service.NewStringField(jiFieldClientID).
				Description("The JMS client ID, sent as the AMQP container ID. Durable subscriptions are scoped to it; empty means a random container ID (and, for shared subscriptions, a global subscription name).").
				Example("orders-bridge").
				Default(""),
			service.NewBoolField(jiFieldUnsubscribeOnClose).
				Description("Delete the durable subscription when the input stops (closing its link), like JMS `unsubscribe`. By default it is kept, with the messages that arrive meanwhile.").
				Default(false).
				Advanced(),
			service.NewStringField(jiFieldSelector).
				Description("A JMS message selector (SQL-92 over headers and properties); only matching messages are delivered. The broker must support the `apache.org:selector-filter:string` filter.").
				Example("region = 'eu' AND JMSPriority > 4").
				Default(""),
			service.NewIntField(jiFieldPrefetch).
				Description("How many messages the broker may send ahead of the pipeline (AMQP link credit); at most twice as many are unsettled (see Delivery guarantees).").
				Default(256),
			service.NewStringAnnotatedEnumField(jiFieldNackOutcome, map[string]string{
				jiNackReleased: "Settle `released`: the broker redelivers the message, without counting a failed delivery.",
				jiNackModified: "Settle `modified` with `delivery-failed`: the broker redelivers it and counts the failure toward its redelivery limit, after which it dead-letters the message. RabbitMQ 3.x ends the link on this outcome, so there `released` is sent instead (with a warning at connect).",
				jiNackRejected: "Settle `rejected`: the broker dead-letters the message (or drops it when there is no dead-letter queue).",
			}).Description("How a message the pipeline rejected is settled.").
				Default(jiNackModified),
			service.NewIntField(jiFieldBatchSize).
				Description("Read up to this many messages that have already arrived into one batch. 1 passes messages one at a time. For time- or size-based batching wrap the input in a `broker` with `batching`.").
				Default(1).
				Advanced(),
			service.NewIntField(jiFieldMaxPropertyBytes).
				Description("The largest string or binary application property value passed on as metadata; a larger one is left out and reported in `jms_decode_error`. 0 means no limit.").
				Default(1<<20).
				Advanced(),
			tracingcfg.ExtractField(tracingcfg.ApplicationProperties),
		).
		Example(tracingcfg.InputExample("jms", "    urls: [ amqp://localhost:5672 ]\n    queue: orders\n")).
		Example("ActiveMQ queue to a file", "Consumes an ActiveMQ 5 queue (started with `transport.transformer=jms`); JMS properties become metadata and a failing message is redelivered up to the broker's limit, then sent to `ActiveMQ.DLQ`.", `
input:
  jms:
    urls: [ amqp://activemq:5672 ]
    username: benthos
    password: ${JMS_PASSWORD}
    address_style: activemq
    queue: orders
    selector: "region = 'eu'"
output:
  file:
    path: ./orders.jsonl
    codec: lines
`).
		Example("Artemis durable shared subscription", "Several instances with the same client ID share one durable subscription to an Artemis multicast address; it keeps collecting messages while they are all stopped.", `
input:
  jms:
    urls: [ amqp://artemis:5672 ]
    username: benthos
    password: ${JMS_PASSWORD}
    address_style: artemis
    topic: prices
    subscription_name: prices-archive
    durable: true
    shared: true
    client_id: prices-archiver
    prefetch: 512
`).
		Example("RabbitMQ queue", "Reads a RabbitMQ queue through the AMQP 1.0 plugin (`/queue/<name>`); a rejected message goes to the queue's dead-letter exchange.", `
input:
  jms:
    urls: [ amqp://rabbitmq:5672 ]
    username: benthos
    password: ${JMS_PASSWORD}
    address_style: rabbitmq
    queue: events
    nack_outcome: rejected
`).
		Example("Solace topic to a Solace queue bridge", "A durable subscription on Solace's AMQP (JMS) side, bridged into the solace output; headers travel as metadata.", `
input:
  jms:
    urls: [ amqps://broker.messaging.solace.cloud:5671 ]
    username: solace-cloud-client
    password: ${JMS_PASSWORD}
    tls:
      enabled: true
    address_style: solace
    topic: orders/created
    subscription_name: orders-bridge
    durable: true
    client_id: orders-bridge
`)
}

// jmsReader is the jms input: one connection, one session, one receiver
// link.
type jmsReader struct {
	log *service.Logger

	connConf    jms.ConnConfig
	src         jms.ReceiverSource
	unsubscribe bool
	nack        jms.Outcome
	batchSize   int
	maxPropLen  int

	inputMetrics
	mDecodeErrors *service.MetricCounter

	meta jmsMetaCache

	mu        sync.Mutex
	rcv       *jms.Receiver
	decode    jms.DecodeOptions
	urlIndex  int
	connected bool // a connection was made before, so the next is a reconnect
	closed    bool
}

func newJMSReaderFromParsed(conf *service.ParsedConfig, mgr *service.Resources) (*jmsReader, error) {
	r := &jmsReader{log: mgr.Logger()}
	var err error
	if r.connConf, err = jmscfg.ConnConfigFromParsed(conf); err != nil {
		return nil, err
	}
	rd := confread.New(conf)
	var queue, topic string
	rd.String(&queue, jiFieldQueue)
	rd.String(&topic, jiFieldTopic)
	if err := rd.Err(); err != nil {
		return nil, err
	}
	if err := jmscfg.DestinationError(queue != "", topic != ""); err != nil {
		return nil, err
	}
	r.src.Kind, r.src.Name = jms.KindQueue, queue
	if topic != "" {
		r.src.Kind, r.src.Name = jms.KindTopic, topic
	}

	rc := &r.src.Config
	rd.String(&rc.Subscription, jiFieldSubscriptionName)
	rd.Bool(&rc.Durable, jiFieldDurable)
	rd.Bool(&rc.Shared, jiFieldShared)
	rd.String(&r.src.ContainerID, jiFieldClientID)
	rd.Bool(&r.unsubscribe, jiFieldUnsubscribeOnClose)
	if err := rd.Err(); err != nil {
		return nil, err
	}
	rc.Global = rc.Shared && r.src.ContainerID == ""
	switch {
	case rc.Subscription != "" && r.src.Kind != jms.KindTopic:
		return nil, fmt.Errorf("field %s only applies to a topic: a queue has no subscriptions, remove it", jiFieldSubscriptionName)
	case (rc.Durable || rc.Shared) && rc.Subscription == "":
		return nil, fmt.Errorf("fields durable and shared need %s: name the subscription, e.g. subscription_name: %s-sub", jiFieldSubscriptionName, topic)
	case rc.Subscription != "" && !rc.Durable && !rc.Shared:
		return nil, fmt.Errorf("field %s is set but the subscription is neither durable nor shared: set durable: true and/or shared: true, or remove %s", jiFieldSubscriptionName, jiFieldSubscriptionName)
	case strings.Contains(rc.Subscription, jms.SubscriptionNameDelimiter):
		return nil, fmt.Errorf("field %s %q contains %q, which the AMQP JMS Mapping uses to build link names: choose another name", jiFieldSubscriptionName, rc.Subscription, jms.SubscriptionNameDelimiter)
	case rc.Durable && !rc.Shared && r.src.ContainerID == "":
		return nil, fmt.Errorf("a durable subscription that is not shared is scoped to the JMS client ID: set %s (a stable name, the same on every restart), or set shared: true", jiFieldClientID)
	case r.unsubscribe && !rc.Durable:
		return nil, fmt.Errorf("field %s only applies to a durable subscription (durable: true); other subscriptions end with the connection anyway", jiFieldUnsubscribeOnClose)
	}
	var outcome string
	rd.String(&rc.Selector, jiFieldSelector)
	rd.Int(&rc.Prefetch, jiFieldPrefetch)
	rd.Int(&r.batchSize, jiFieldBatchSize)
	rd.Int(&r.maxPropLen, jiFieldMaxPropertyBytes)
	rd.String(&outcome, jiFieldNackOutcome)
	if err := rd.Err(); err != nil {
		return nil, err
	}
	if rc.Prefetch < 1 {
		return nil, fmt.Errorf("field %s must be at least 1, got %d", jiFieldPrefetch, rc.Prefetch)
	}
	if r.batchSize < 1 || r.batchSize > rc.Prefetch {
		return nil, fmt.Errorf("field %s must be from 1 to prefetch (%d), got %d", jiFieldBatchSize, rc.Prefetch, r.batchSize)
	}
	if r.maxPropLen < 0 {
		return nil, fmt.Errorf("field %s cannot be negative", jiFieldMaxPropertyBytes)
	}
	switch outcome {
	case jiNackReleased:
		r.nack = jms.Released
	case jiNackRejected:
		r.nack = jms.Rejected
	default:
		r.nack = jms.Modified
	}

	r.inputMetrics = newInputMetrics(mgr.Metrics(), "jms_input")
	r.mDecodeErrors = mgr.Metrics().NewCounter("jms_input_decode_errors")
	return r, nil
}

func (r *jmsReader) Connect(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return service.ErrEndOfInput
	}
	if r.rcv != nil {
		return nil
	}
	rcv, idx, err := r.connConf.DialReceiver(ctx, r.src, r.urlIndex)
	if err != nil {
		r.urlIndex = idx
		return err
	}
	if r.connected {
		r.mReconnects.Incr(1)
	}
	r.rcv, r.urlIndex, r.connected = rcv, idx, true
	r.decode = jms.DecodeOptions{
		Addresser: rcv.Addresser(), Kind: r.src.Kind, Source: rcv.Source().Address, MaxPropertyBytes: r.maxPropLen,
		FirstAcquirerMarksRedelivery: rcv.FirstAcquirerMarksRedelivery(),
	}
	r.decode.Prepare()
	if r.nack == jms.Modified && rcv.ModifiedUnsupported() {
		r.log.Warnf("jms input: the broker (RabbitMQ 3.x) ends the link on a modified outcome, so nacked messages are settled released instead (redelivered without counting a failure)")
	}
	r.log.Infof("jms input consuming %s %q (address %q, link %q) from %s, prefetch %d", r.src.Kind, r.src.Name, rcv.Source().Address, rcv.LinkName(), rcv.Conn().URL(), r.src.Config.Prefetch)
	return nil
}

func (r *jmsReader) current() (*jms.Receiver, jms.DecodeOptions) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rcv, r.decode
}

// disconnect drops a receiver whose link or connection failed, so that
// Benthos calls Connect again, with its backoff.
func (r *jmsReader) disconnect(rcv *jms.Receiver) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rcv != rcv {
		return
	}
	r.rcv = nil
	_ = rcv.Conn().Close()
	r.urlIndex = (r.urlIndex + 1) % len(r.connConf.Dial.URLs)
}

func (r *jmsReader) ReadBatch(ctx context.Context) (service.MessageBatch, service.AckFunc, error) {
	rcv, opts := r.current()
	if rcv == nil {
		r.mu.Lock()
		closed := r.closed
		r.mu.Unlock()
		if closed {
			return nil, nil, service.ErrEndOfInput
		}
		return nil, nil, service.ErrNotConnected
	}
	first, err := rcv.Receive(ctx)
	if err == nil && !first.Settled && rcv.Lost() {
		// Buffered before the connection ended: the broker redelivers it,
		// so passing this copy on would only add a duplicate. One the
		// broker sent settled it never sends again: that is passed on.
		err = errors.New("connection closed")
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		r.log.Warnf("jms input lost its link to %s %q, reconnecting: %v", r.src.Kind, r.src.Name, err)
		r.disconnect(rcv)
		return nil, nil, service.ErrNotConnected
	}
	opts.Arrival = time.Now()
	var second jms.Delivery
	var more bool
	if r.batchSize > 1 {
		second, more = rcv.TryReceive()
	}
	if !more {
		// One message: no slice of deliveries for the ack to keep.
		batch := service.MessageBatch{r.toMessage(first, &opts)}
		r.mReceived.Add(1)
		return batch, r.ackOne(rcv, first), nil
	}
	ds := make([]jms.Delivery, 2, r.batchSize)
	ds[0], ds[1] = first, second
	for len(ds) < r.batchSize {
		d, ok := rcv.TryReceive()
		if !ok {
			break
		}
		ds = append(ds, d)
	}
	batch := make(service.MessageBatch, len(ds))
	for i := range ds {
		batch[i] = r.toMessage(ds[i], &opts)
		ds[i].Payload = nil // the messages hold what they need of it
	}
	r.mReceived.Add(int64(len(batch)))
	return batch, r.ackFunc(rcv, batch, ds), nil
}

func (r *jmsReader) Close(ctx context.Context) error {
	defer r.flush()
	r.mu.Lock()
	rcv := r.rcv
	r.rcv, r.closed = nil, true
	r.mu.Unlock()
	if rcv == nil {
		return nil
	}
	err := rcv.Close(ctx, r.unsubscribe)
	// A connection that had failed already is no news at shutdown: Close
	// reports nothing for it.
	if cerr := rcv.Conn().Close(); cerr != nil && err == nil {
		err = cerr
	}
	return err
}
