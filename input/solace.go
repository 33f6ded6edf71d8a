package input

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redpanda-data/benthos/v4/public/bloblang"
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connect-solace/connect-solace/internal/semp"
	"github.com/connect-solace/connect-solace/internal/session"
	"github.com/connect-solace/connect-solace/internal/solacecfg"
	"github.com/connect-solace/connect-solace/internal/tracingcfg"
)

const (
	siFieldQueue               = "queue"
	siFieldTopic               = "topic"
	siFieldQueueName           = "queue_name"
	siFieldNackOutcome         = "nack_outcome"
	siFieldDeduplicate         = "deduplicate"
	siFieldDedupWindow         = "dedup_window"
	siFieldDedupSize           = "size"
	siFieldDedupAge            = "age"
	siFieldDedupCache          = "dedup_cache"
	siFieldFlows               = "flows"
	siFieldSelector            = "selector"
	siFieldReplay              = "replay"
	siFieldReplayFrom          = "from"
	siFieldReplayTime          = "time"
	siFieldReplayMessageID     = "message_id"
	siFieldBatchSize           = "batch_size"
	siFieldTimestamp           = "timestamp"
	siFieldTimestampMapping    = "timestamp_mapping"
	siFieldBacklogPollInterval = "backlog_poll_interval"
	siFieldReceiveBuffer       = "receive_buffer"
)

// Values of the enum fields.
const (
	siNackFailed   = "failed"
	siNackRejected = "rejected"

	siReplayNone      = "none"
	siReplayStart     = "start"
	siReplayTime      = "time"
	siReplayMessageID = "message_id"

	siTimestampSender  = "sender"
	siTimestampReceive = "receive"
	siTimestampMapping = "mapping"
)

// siDefaultBatchSize is batch_size's default: the most messages a read hands
// over, of those already waiting (a read never waits for more).
const siDefaultBatchSize = 64

func solaceInputSpec() *service.ConfigSpec {
	return solacecfg.Spec("Consumes guaranteed messages from a Solace PubSub+ queue, or from a topic through a queue it provisions, acknowledging each message only after the pipeline processed it.", `
Binds client-acknowledged consumer flows to a durable queue of a Solace PubSub+ event broker through the Solace Go client.

### Source

Set exactly one of `+"`queue`"+` and `+"`topic`"+`, or `+"`topic_subscriptions`"+` for direct mode (at-most-once, see below), or
serve Solace requests with `+"`requests`"+` (see that field).

- `+"`queue`"+` consumes an existing durable queue. When `+"`semp`"+` is set the input checks through SEMP that the queue
  exists and whether it is exclusive (an exclusive queue serves a single flow, so `+"`flows`"+` is then reduced to 1 with a warning).
- `+"`topic`"+` provisions, through SEMPv2 (`+"`semp`"+` is required), a durable non-exclusive queue named `+"`queue_name`"+`
  subscribed to the topic, as Beam's SolaceIO does, and consumes it. An existing queue of that name is reused as it is
  (its settings are never changed) and gets the subscription added. The input never deletes the queue: messages published
  while the pipeline is down wait there.

### Delivery guarantees

A message is acknowledged to the broker only after the pipeline acknowledged it (its output confirmed it). When the
pipeline rejects it, the message is settled with `+"`nack_outcome`"+`: `+"`failed`"+` (the default) asks the broker to
redeliver it, `+"`rejected`"+` moves it to the queue's dead message queue (or discards it when the queue has none).

On shutdown, messages not yet acknowledged are left unsettled; the broker redelivers them to the next consumer. When the
connection drops, the client reconnects (`+"`reconnect_attempts`"+`) and the broker redelivers every message of the old
flows, flagged with `+"`solace_redelivered`"+`; late acknowledgements of the old copies are dropped without failing the
pipeline, and old copies not yet handed to the pipeline are dropped in favour of the redelivered ones. When the session
is lost for good, Benthos reconnects the input with backoff for as long as it runs. A flow on which the Solace Go client
dropped messages without settling them (a race in its flow control) is found within two seconds of going quiet and
rebound, so that the broker redelivers them flagged (`+"`solace_input_stall_recoveries`"+`). Delivery is at least once; use
`+"`deduplicate`"+` to drop copies the pipeline already processed.`+siDirectDescription+`

### De-duplication

With `+"`deduplicate: true`"+` the input remembers the key of every message the pipeline acknowledged: its application
message id or, without one, its replication group message id. A later message with a remembered key (a redelivery whose
acknowledgement was lost, or a republished copy) is acknowledged to the broker and not passed on. A copy that arrives while
the pipeline still processes the first (typically the broker's redelivery after a connection loss) is held back until the
pipeline settles the first: it is then acknowledged and dropped, or passed on if the pipeline rejected the first. Messages
with neither id are always passed on. The window is bounded by `+"`dedup_window`"+`; with `+"`dedup_cache`"+` the keys are kept in a
cache resource instead, so several instances share them.

### Metadata

Every message carries these metadata keys when the attribute is present, typed where Benthos allows (integers, booleans
and timestamps stay typed in Bloblang):
`+"`solace_destination`"+`, `+"`solace_destination_type`"+` (`+"`topic`"+`, `+"`queue`"+`, `+"`temporary_topic`"+`, `+"`temporary_queue`"+`),
`+"`solace_application_message_id`"+`, `+"`solace_application_message_type`"+`, `+"`solace_correlation_id`"+`, `+"`solace_priority`"+`,
`+"`solace_redelivered`"+`, `+"`solace_delivery_count`"+` (when the broker tracks it), `+"`solace_expiration`"+` (receive time plus TTL),
`+"`solace_time_to_live`"+` (milliseconds), `+"`solace_reply_to`"+`, `+"`solace_sender_timestamp`"+`, `+"`solace_receive_timestamp`"+`,
`+"`solace_sequence_number`"+`, `+"`solace_replication_group_message_id`"+`, `+"`solace_sender_id`"+`, `+"`solace_class_of_service`"+` (0 to 2),
`+"`solace_http_content_type`"+`, `+"`solace_http_content_encoding`"+` and `+"`solace_timestamp`"+` (the event time chosen by
`+"`timestamp`"+`). Every user property is added under its own name; a user property named like one of the keys above is
overwritten by it. The user properties `+"`traceparent`"+` and `+"`tracestate`"+` carry the sender's trace context (see `+"`extract_tracing_map`"+`).

### Metrics

- `+"`solace_input_received`"+`: messages handed to the pipeline (added up and reported within 100 ms, not per message, which saves a metric lookup per message).
- `+"`solace_input_acked`"+`: messages acknowledged to the broker after the pipeline acknowledged them (added up like `+"`solace_input_received`"+`).
- `+"`solace_input_nacked`"+` with label `+"`outcome`"+`: messages settled `+"`failed`"+` or `+"`rejected`"+`.
- `+"`solace_input_duplicates_dropped`"+`: duplicates acknowledged and dropped by `+"`deduplicate`"+`.
- `+"`solace_input_stale_settlements`"+`: settlements of messages whose flow was lost (the broker redelivers them).
- `+"`solace_input_stale_dropped`"+`: messages received before a connection loss and dropped before the pipeline saw them, in favour of the broker's redelivered copies.
- `+"`solace_input_native_fallback`"+`: messages read through the Solace Go client's API alone, without `+"`solace_time_to_live`"+`, `+"`solace_expiration`"+`, `+"`solace_delivery_count`"+` and `+"`solace_reply_to`"+`, because the input's direct read of the client's C library is not verified for the linked client version (logged once at start-up). Zero with the client this binary was built with.
- `+"`solace_input_stall_recoveries`"+`: flows rebound because the Solace Go client dropped messages it had received without settling them (the broker redelivers them; each is logged with its numbers).
- `+"`solace_input_backlog_messages`"+` / `+"`solace_input_backlog_bytes`"+`: the queue's backlog, read over SEMP every `+"`backlog_poll_interval`"+`.
- `+"`solace_input_reconnects`"+`: client reconnections.`+siDirectMetrics,
		// The rules live in siFields.problems (solace_config.go).
		`this.solace_input_lint()`).
		Fields(siDirectFields()...).
		Fields(siQueueSettingsField()).
		Fields(
			service.NewStringField(siFieldQueue).
				Description("The durable queue to consume. Exactly one of `queue` and `topic` must be set.").
				Example("orders").Default(""),
			service.NewStringField(siFieldTopic).
				Description("A topic subscription (wildcards `*` and `>` allowed). The input provisions a durable non-exclusive queue `queue_name` subscribed to it through SEMP and consumes that queue. Exactly one of `queue` and `topic` must be set.").
				Example("orders/>").Default(""),
			service.NewStringField(siFieldQueueName).
				Description("The queue provisioned for `topic`. Empty derives it from the topic: `"+siQueuePrefix+"` followed by the topic with `*` replaced by `_any_`, `>` by `_all_` and the characters `?<>'\"&;` by `_` (cut to 200 characters with a hash suffix when longer). For example `orders/*/eu/>` gives `"+siQueuePrefix+"orders/_any_/eu/_all_`.").
				Example("orders-pipeline").Default(""),
			siRequestsField(),
			solacecfg.SEMPField("SEMPv2 management access: required by `topic`, used by `queue` to check the queue and by `backlog_poll_interval`.",
				"The SEMP user; it needs read access for `queue`, and the rights to create queues and subscriptions for `topic`.",
				"The VPN the queue lives in; empty means the connection's `vpn`."),
			service.NewStringAnnotatedEnumField(siFieldNackOutcome, map[string]string{
				siNackFailed:   "Settle as FAILED: the broker redelivers the message (up to the queue's max redelivery count, then the DMQ).",
				siNackRejected: "Settle as REJECTED: the broker moves the message to the queue's dead message queue, or discards it.",
			}).Description("How a message the pipeline rejected is settled.").
				Default(siNackFailed),
			service.NewBoolField(siFieldDeduplicate).
				Description("Drop messages whose application message id (or replication group message id) the pipeline already processed. Duplicates are acknowledged to the broker and not passed on.").
				Default(false),
			service.NewObjectField(siFieldDedupWindow,
				service.NewIntField(siFieldDedupSize).
					Description("How many keys to remember; 0 means no count bound.").
					Default(100000),
				service.NewDurationField(siFieldDedupAge).
					Description("How long to remember a key; `0s` means no age bound. This is also the TTL of keys in `dedup_cache`.").
					Default("1h"),
			).Description("The bounds of the de-duplication window; at least one must be set.").Advanced(),
			service.NewStringField(siFieldDedupCache).
				Description("A cache resource holding the de-duplication keys instead of the in-memory window, so that several instances share them.").
				Default("").Advanced(),
			service.NewIntField(siFieldFlows).
				Description("The number of parallel consumer flows bound to a non-exclusive queue. On an exclusive queue only one flow receives, so more than one gives a warning and one is used (when SEMP can tell).").
				Default(1),
			service.NewStringField(siFieldSelector).
				Description("A JMS (SQL-92) message selector over message properties; only matching messages are delivered.").
				Example("region = 'eu' AND priority > 4").Default(""),
			service.NewObjectField(siFieldReplay,
				service.NewStringAnnotatedEnumField(siFieldReplayFrom, map[string]string{
					siReplayNone:      "No replay.",
					siReplayStart:     "Replay everything in the replay log.",
					siReplayTime:      "Replay from `replay.time`.",
					siReplayMessageID: "Replay after the message `replay.message_id`.",
				}).Default(siReplayNone),
				service.NewStringField(siFieldReplayTime).
					Description("An RFC 3339 time for `from: time`.").
					Example("2025-01-31T12:00:00Z").Default(""),
				service.NewStringField(siFieldReplayMessageID).
					Description("A replication group message id (`rmid1:…`, see `solace_replication_group_message_id`) for `from: message_id`.").
					Default(""),
			).Description("Asks the broker to replay messages from its replay log into the queue when the input first connects; later reconnects carry on from the queue, so a replay never repeats. Replay requires a replay log on the broker.").Advanced(),
			service.NewIntField(siFieldBatchSize).
				Description("Read up to this many messages that are already waiting into one batch. The input never waits for more: when the pipeline keeps up, each message goes on alone as soon as it arrives, and batches grow with the backlog, so a busy pipeline pays its per-batch costs (a transaction, an output call, one settlement call for the batch) once per batch rather than per message. When the pipeline fails a batch, the input settles all of its messages with `nack_outcome`, so the broker redelivers them all, also those the output had already sent. 1 passes messages one at a time, as components that look at one message of each batch expect (`read_until` checks the first). For time- or size-based batching wrap the input in a `broker` with `batching`.").
				Default(siDefaultBatchSize),
			service.NewStringAnnotatedEnumField(siFieldTimestamp, map[string]string{
				siTimestampSender:  "The sender timestamp, falling back to the receive time when the publisher set none.",
				siTimestampReceive: "The time the client received the message.",
				siTimestampMapping: "The result of `timestamp_mapping`.",
			}).Description("Where the message's event time, `solace_timestamp`, comes from.").
				Default(siTimestampSender),
			service.NewBloblangField(siFieldTimestampMapping).
				Description("For `timestamp: mapping`: a Bloblang mapping over the message whose result is a timestamp, an RFC 3339 string or Unix seconds.").
				Example(`root = this.event_time.ts_parse("2006-01-02T15:04:05Z07:00")`).
				Optional(),
			tracingcfg.ExtractField(tracingcfg.UserProperties),
			service.NewDurationField(siFieldBacklogPollInterval).
				Description("How often the queue's backlog (messages and bytes) is read over SEMP into the `solace_input_backlog_*` gauges; `0s` turns polling off. Needs `semp`.").
				Default("30s").Advanced(),
			service.NewIntField(siFieldReceiveBuffer).
				Description("How many received messages may wait for the pipeline across all flows (each is converted to a Benthos message when the pipeline reads it). When full, the flows stop taking messages and the broker holds the rest.").
				Default(256).Advanced(),
		).
		Example(tracingcfg.InputExample("solace", "    urls: [ tcp://localhost:55555 ]\n    username: app\n    password: ${SOLACE_PASSWORD}\n    queue: orders\n"))
}

// siReceiver hands out deliveries whose slot holds the message the input
// built of them (see build).
type (
	siReceiver = session.Receiver[*service.Message]
	siDelivery = session.Delivery[*service.Message]
)

// solaceReader is the solace input. One session carries all its flows.
type solaceReader struct {
	log *service.Logger
	mgr *service.Resources

	// metaTmpls speeds up building messages (see metaTemplate), keyed by
	// attribute; solace_timestamp's value follows the attributes'.
	metaTmpls metaTemplates[session.Attr]
	// metaScratch holds the storage of attributes that build reuses
	// (*[]session.MetaField).
	metaScratch sync.Pool

	conn      session.Config
	queue     string // the queue consumed, given or derived
	topic     string
	semp      *solacecfg.SEMPAccess // nil without semp.url
	nack      session.Outcome
	rcvConf   session.ReceiverConfig
	batchSize int
	// scratch is what a read takes from the receiver, reused: Benthos
	// reads from one goroutine, and a batch gets a copy of its own size.
	scratch   []*siDelivery
	tsMode    string
	tsMapping *bloblang.Executor
	pollEvery time.Duration

	dedup      bool
	dedupWin   *dedupWindow
	dedupCache string
	dedupTTL   time.Duration
	inFlight   dedupInFlight

	inputMetrics
	mDuplicates *service.MetricCounter
	mStaleDrop  *service.MetricCounter
	mFallback   *service.MetricCounter
	mBacklogMsg *service.MetricGauge
	mBacklogB   *service.MetricGauge

	// direct is set in direct mode (solace_direct.go), which owns the
	// connection then.
	direct *siDirect

	// qs is queue_settings; qsWarned makes its mismatch warning once.
	qs       *siQueueSettings
	qsWarned atomic.Bool

	mu      sync.Mutex
	sess    *session.Session
	recv    *siReceiver
	sempCli *semp.Client
	// sempLive is sempCli for the backlog poller, which must not wait for
	// mu while Connect holds it.
	sempLive atomic.Pointer[semp.Client]
	stopPoll context.CancelFunc
	pollDone chan struct{}
}

func newSolaceReaderFromParsed(conf *service.ParsedConfig, mgr *service.Resources) (*solaceReader, error) {
	r := &solaceReader{log: mgr.Logger(), mgr: mgr}
	var err error
	if r.conn, err = solacecfg.ConfigFromParsed(conf); err != nil {
		return nil, err
	}
	f, err := siFieldsFromParsed(conf)
	if err != nil {
		return nil, err
	}
	if err := errors.Join(f.problems()...); err != nil {
		return nil, err
	}
	r.queue, r.topic = f.queue, f.topic
	if r.topic != "" {
		r.queue = f.queueName
		if r.queue == "" {
			r.queue = QueueNameForTopic(r.topic)
		}
	}
	if err := r.sempFromFields(&f); err != nil {
		return nil, err
	}
	r.nack = session.Failed
	if f.nackOutcome == siNackRejected {
		r.nack = session.Rejected
	}
	if err := r.dedupFromFields(&f, mgr); err != nil {
		return nil, err
	}
	r.rcvConf = session.ReceiverConfig{
		Queue:    r.queue,
		Flows:    f.flows,
		Selector: f.selector,
		Replay:   f.replay.asked(),
		Buffer:   f.receiveBuffer,
	}
	r.batchSize = f.batchSize
	r.scratch = make([]*siDelivery, 0, r.batchSize)
	r.tsMode = f.timestamp
	if r.tsMode == siTimestampMapping {
		if r.tsMapping, err = conf.FieldBloblang(siFieldTimestampMapping); err != nil {
			return nil, err
		}
	}
	r.pollEvery = f.backlogPollInterval

	m := mgr.Metrics()
	r.inputMetrics = newInputMetrics(m, "solace_input")
	r.mDuplicates = m.NewCounter("solace_input_duplicates_dropped")
	r.mStaleDrop = m.NewCounter("solace_input_stale_dropped")
	r.rcvConf.OnStaleDropped = func() { r.mStaleDrop.Incr(1) }
	r.mFallback = m.NewCounter("solace_input_native_fallback")
	r.rcvConf.OnNativeFallback = func() { r.mFallback.Incr(1) }
	stalls := m.NewCounter("solace_input_stall_recoveries")
	r.rcvConf.OnStallRecovered = func() { stalls.Incr(1) }
	r.mBacklogMsg = m.NewGauge("solace_input_backlog_messages")
	r.mBacklogB = m.NewGauge("solace_input_backlog_bytes")
	r.directFromFields(&f, m)
	r.qs = f.qs
	return r, nil
}

func (r *solaceReader) Connect(ctx context.Context) error {
	if r.direct != nil {
		return r.connectDirect(ctx)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.recv != nil {
		return nil
	}
	if err := r.connectSEMP(); err != nil {
		return err
	}
	rc := r.rcvConf
	if r.sempCli != nil {
		if err := r.prepareQueue(ctx, &rc); err != nil {
			return err
		}
	}

	sess, recv, err := openSession(ctx, r.conn, r.log, r.mReconnects, func(sess *session.Session) (*siReceiver, error) {
		return session.NewReceiver[*service.Message](ctx, sess, rc)
	})
	if err != nil {
		return err
	}
	r.sess, r.recv = sess, recv
	// A replay copies the log into the queue, so it is asked for once: a
	// later connect (after the session was lost) resumes from the queue
	// instead of replaying, and duplicating, everything again.
	r.rcvConf.Replay = session.Replay{}
	r.startBacklogPoll()
	r.log.Infof("Consuming Solace queue %q with %d flow(s)", r.queue, rc.Flows)
	return nil
}

// current returns the live receiver, or nil.
func (r *solaceReader) current() *siReceiver {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.recv
}

// disconnect drops a receiver whose flows went down, so that Benthos calls
// Connect again (with its backoff) and a fresh session and flows are built.
func (r *solaceReader) disconnect(recv *siReceiver) {
	dropIfCurrent(&r.mu, &r.recv, &r.sess, recv)
}

func (r *solaceReader) ReadBatch(ctx context.Context) (service.MessageBatch, service.AckFunc, error) {
	if r.direct != nil {
		return r.readDirect(ctx)
	}
	recv := r.current()
	if recv == nil {
		return nil, nil, service.ErrNotConnected
	}
	for {
		got, err := r.receive(ctx, recv, r.scratch[:0])
		if err != nil {
			return nil, nil, err
		}
		if len(got) == 0 {
			continue
		}
		if len(got) == 1 {
			// What a pipeline that keeps up reads: the ack holds the one
			// message, which costs less than a batch kept for it, and
			// the batch is the delivery's own slot.
			in := got[0]
			got[0] = nil
			r.message(in)
			r.mReceived.Add(1)
			return in.Slot[:], func(ctx context.Context, err error) error {
				return r.settleOne(ctx, recv, in, err)
			}, nil
		}
		ins := slices.Clone(got)
		clear(got)
		batch := make(service.MessageBatch, len(ins))
		for i, in := range ins {
			batch[i] = r.message(in)
		}
		r.mReceived.Add(int64(len(batch)))
		return batch, func(ctx context.Context, err error) error {
			return r.settleBatch(ctx, recv, ins, err)
		}, nil
	}
}

// receive appends to dst up to batch_size messages from recv, built (see
// build), less the duplicates deduplicate drops (so possibly none). Flows
// that went down disconnect the input: the error is then
// service.ErrNotConnected.
func (r *solaceReader) receive(ctx context.Context, recv *siReceiver, dst []*siDelivery) ([]*siDelivery, error) {
	n0 := len(dst)
	ins, err := recv.ReceiveBatch(ctx, dst, r.batchSize)
	if err != nil {
		if errors.Is(err, session.ErrReceiverDown) || errors.Is(err, session.ErrReceiverClosed) {
			r.log.Warnf("Solace flows on queue %q are down, reconnecting: %v", r.queue, err)
			r.disconnect(recv)
			return nil, service.ErrNotConnected
		}
		return nil, err
	}
	r.buildAll(ins[n0:])
	if r.dedup {
		ins = r.dropDuplicates(ctx, recv, ins)
	}
	return ins, nil
}

func (r *solaceReader) Close(ctx context.Context) error {
	defer r.flush()
	if r.direct != nil {
		return r.closeDirect(ctx)
	}
	r.mu.Lock()
	recv, sess := r.recv, r.sess
	r.recv, r.sess = nil, nil
	stop, done := r.stopPoll, r.pollDone
	r.stopPoll, r.pollDone = nil, nil
	r.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
	r.releaseHeld()
	var errs []error
	if recv != nil {
		if err := recv.Close(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if sess != nil {
		if err := sess.Close(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
