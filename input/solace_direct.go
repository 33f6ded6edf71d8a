package input

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connect-solace/connect-solace/internal/session"
	"github.com/connect-solace/connect-solace/internal/solacecfg"
)

// This file is the solace input's direct mode: topic subscriptions, shared
// or not, received at most once through the client's direct receiver.

const (
	siFieldTopicSubscriptions = "topic_subscriptions"
	siFieldShareName          = "share_name"
	siFieldBackPressure       = "back_pressure"
	siFieldBPBufferCapacity   = "buffer_capacity"
	siFieldBPStrategy         = "strategy"

	siDropLatest = "drop_latest"
	siDropOldest = "drop_oldest"

	// siNackDropped labels solace_input_nacked for a direct message the
	// pipeline rejected: it cannot be redelivered.
	siNackDropped = "dropped"
)

// siDirectDescription is the spec's section on direct mode.
const siDirectDescription = `

### Direct mode

With ` + "`topic_subscriptions`" + ` the input subscribes its session to the topics (wildcards ` + "`*`" + ` and ` + "`>`" + ` allowed)
and receives direct messages, as Solace's Kafka source connector does with ` + "`sol.topics`" + `; no queue and no SEMP rights
are needed. With ` + "`share_name`" + ` every subscription is shared (` + "`#share/<share_name>/<topic>`" + `): all consumers
subscribed with the same share name and topic split the stream, each message going to one of them, so N replicas of a
pipeline share the work. Direct mode excludes ` + "`queue`" + `, ` + "`topic`" + ` and the fields that only apply to queues
(` + "`queue_name`" + `, ` + "`flows`" + `, ` + "`selector`" + `, ` + "`replay`" + `, ` + "`nack_outcome`" + `).

**Direct mode is at-most-once.** The broker forgets a direct message once it sent it:

- A message is never redelivered: messages in the pipeline when it crashes, or in flight when the connection drops, are lost.
- Acknowledgements are no-ops. A message the pipeline rejects cannot be redelivered either: it is counted in
  ` + "`solace_input_nacked`" + ` with outcome ` + "`dropped`" + ` and logged, never silently ignored.
- When the pipeline is slower than the stream, the client's receive buffer (` + "`back_pressure.buffer_capacity`" + ` messages,
  from which the input takes its batches directly) fills and the client discards messages by ` + "`back_pressure.strategy`" + `; they are counted in ` + "`solace_input_discarded`" + `.
  Messages the broker dropped for this consumer (its egress queue overflowed) are reported by the broker's discard
  notification on the next message delivered, counted in ` + "`solace_input_broker_discards`" + ` (one notification can stand for
  several messages).

The input reconnects as in queue mode (` + "`reconnect_attempts`" + `, then Benthos's connect loop) and its subscriptions
are re-added after every reconnect. Every attribute and timestamp arrives as metadata under the same keys as in queue
mode (` + "`solace_redelivered`" + ` is always false, ` + "`solace_delivery_count`" + ` absent), and ` + "`deduplicate`" + ` drops
copies of messages the pipeline already acked, and copies that arrive while the first is still in the pipeline.`

// siDirectMetrics is the spec's list of direct mode's own metrics.
const siDirectMetrics = `
- ` + "`solace_input_discarded`" + `: direct messages the client discarded because its receive buffer was full (` + "`back_pressure`" + `).
- ` + "`solace_input_broker_discards`" + `: direct messages that arrived with the broker's discard notification.`

// siDirectFields are direct mode's fields.
func siDirectFields() []*service.ConfigField {
	return []*service.ConfigField{
		service.NewStringListField(siFieldTopicSubscriptions).
			Description("Direct mode: the topic subscriptions to receive direct messages from (wildcards `*` and `>` allowed). Exclusive with `queue` and `topic`. At-most-once, see Direct mode.").
			Example([]string{"orders/>", "prices/*/eu"}).Default([]any{}),
		service.NewStringField(siFieldShareName).
			Description("Direct mode: a share name that makes every subscription shared (`#share/<share_name>/<topic>`), so that all consumers with the same share name split the stream. Empty: every consumer gets every message.").
			Example("orders-pipeline").Default(""),
		service.NewObjectField(siFieldBackPressure,
			service.NewIntField(siFieldBPBufferCapacity).
				Description("How many direct messages the client buffers for the pipeline.").
				Default(session.DefaultDirectBuffer),
			service.NewStringAnnotatedEnumField(siFieldBPStrategy, map[string]string{
				siDropLatest: "Discard the message that arrives while the buffer is full (the Solace client's default): what the pipeline gets is the oldest part of a burst.",
				siDropOldest: "Discard the oldest buffered message to make room: the pipeline catches up with the newest messages.",
			}).Description("Which message the client discards when the buffer is full.").
				Default(siDropLatest),
		).Description("Direct mode: the client's receive buffer and what it discards when the pipeline falls behind; discards are counted in `solace_input_discarded`.").Advanced(),
	}
}

// siDirectFromParsed reads direct mode's fields into f.
func (f *siFields) directFromParsed(conf *service.ParsedConfig) (err error) {
	if f.topicSubscriptions, err = conf.FieldStringList(siFieldTopicSubscriptions); err != nil {
		return err
	}
	if f.shareName, err = conf.FieldString(siFieldShareName); err != nil {
		return err
	}
	if f.bpBuffer, err = conf.FieldInt(siFieldBackPressure, siFieldBPBufferCapacity); err != nil {
		return err
	}
	f.bpStrategy, err = conf.FieldString(siFieldBackPressure, siFieldBPStrategy)
	return err
}

// directProblems lists the contradictions of direct mode's fields with the
// others; problems adds them.
func (f *siFields) directProblems() []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if len(f.topicSubscriptions) == 0 {
		if f.shareName != "" {
			add("field share_name: only used with topic_subscriptions (direct mode); set topic_subscriptions or remove share_name")
		}
		return errs
	}
	for _, other := range []struct{ field, value string }{
		{siFieldQueue, f.queue}, {siFieldTopic, f.topic}, {siFieldQueueName, f.queueName}, {siFieldSelector, f.selector},
	} {
		if other.value != "" {
			add("fields topic_subscriptions and %s: direct mode (topic_subscriptions) and queue mode (%s) are exclusive; keep one", other.field, other.field)
		}
	}
	if f.flows != 1 {
		add("field flows: only used with a queue; direct mode (topic_subscriptions) receives on one session, remove flows")
	}
	if f.replay.from != "" && f.replay.from != siReplayNone {
		add("field replay: only used with a queue; direct messages are not replayed, remove replay")
	}
	if f.nackOutcome != siNackFailed {
		add("field nack_outcome: only used with a queue; a direct message the pipeline rejects is dropped (counted), remove nack_outcome")
	}
	for i, s := range f.topicSubscriptions {
		if s == "" {
			add("field topic_subscriptions[%d]: empty; remove it or name a topic", i)
		}
	}
	if f.bpBuffer < 1 {
		add("field back_pressure.buffer_capacity: must be at least 1, got %d", f.bpBuffer)
	}
	return errs
}

// siDirect is the state of a reader in direct mode.
type siDirect struct {
	cfg session.DirectReceiverConfig

	mDiscarded      *service.MetricCounter
	mBrokerDiscards *service.MetricCounter

	mu   sync.Mutex
	sess *session.Session
	recv *session.DirectReceiver
	// counted are the receiver's client counts already added to the
	// metrics (they start at 0 with every session).
	counted     [2]uint64
	stopPoll    context.CancelFunc
	pollDone    chan struct{}
	lastNackLog atomic.Int64
	// scratch is what a read takes from the receiver, reused: Benthos
	// reads from one goroutine.
	scratch []*session.Inbound

	// flying are the dedup keys of messages in the pipeline: a copy that
	// arrives meanwhile is dropped (nothing is redelivered, so there is
	// nothing to hold it back for).
	flyMu  sync.Mutex
	flying map[string]struct{}
}

// directFromFields sets direct mode up when the fields ask for it.
func (r *solaceReader) directFromFields(f *siFields, m *service.Metrics) {
	if len(f.topicSubscriptions) == 0 {
		return
	}
	d := &siDirect{
		cfg: session.DirectReceiverConfig{
			Subscriptions:    f.topicSubscriptions,
			ShareName:        f.shareName,
			BufferCapacity:   f.bpBuffer,
			OnNativeFallback: func() { r.mFallback.Incr(1) },
		},
		mDiscarded:      m.NewCounter("solace_input_discarded"),
		mBrokerDiscards: m.NewCounter("solace_input_broker_discards"),
		flying:          map[string]struct{}{},
		scratch:         make([]*session.Inbound, 0, f.batchSize),
	}
	if f.bpStrategy == siDropOldest {
		d.cfg.BackPressure = session.DropOldest
	}
	r.direct = d
}

func (r *solaceReader) connectDirect(ctx context.Context) error {
	d := r.direct
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.recv != nil {
		return nil
	}
	sess, recv, err := openSession(ctx, r.conn, r.log, r.mReconnects, func(sess *session.Session) (*session.DirectReceiver, error) {
		return sess.NewDirectReceiver(ctx, d.cfg)
	})
	if err != nil {
		return err
	}
	d.sess, d.recv, d.counted = sess, recv, [2]uint64{}
	pctx, stop := context.WithCancel(context.Background())
	d.stopPoll, d.pollDone = stop, make(chan struct{})
	go d.pollDiscards(pctx, recv, d.pollDone)
	share := ""
	if d.cfg.ShareName != "" {
		share = fmt.Sprintf(" shared as %q", d.cfg.ShareName)
	}
	r.log.Infof("Receiving Solace direct messages (at most once) from %q%s", d.cfg.Subscriptions, share)
	return nil
}

// siDiscardPoll is how often the client's discard counts are read into the
// metrics.
const siDiscardPoll = 200 * time.Millisecond

// pollDiscards adds the client's discard counts to the metrics until ctx
// ends, then once more.
func (d *siDirect) pollDiscards(ctx context.Context, recv *session.DirectReceiver, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(siDiscardPoll)
	defer t.Stop()
	for {
		d.countDiscards(recv)
		select {
		case <-ctx.Done():
			d.countDiscards(recv)
			return
		case <-t.C:
		}
	}
}

// countDiscards adds what recv's counts grew by since last counted. Only
// the poller calls it.
func (d *siDirect) countDiscards(recv *session.DirectReceiver) {
	now := [2]uint64{recv.Discarded(), recv.BrokerDiscards()}
	if n := now[0] - d.counted[0]; now[0] > d.counted[0] {
		d.mDiscarded.Incr(int64(n))
	}
	if n := now[1] - d.counted[1]; now[1] > d.counted[1] {
		d.mBrokerDiscards.Incr(int64(n))
	}
	d.counted = now
}

// current returns the live receiver, or nil.
func (d *siDirect) current() *session.DirectReceiver {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.recv
}

// release closes the session of recv if it is still the live one.
func (d *siDirect) release(ctx context.Context, recv *session.DirectReceiver) error {
	d.mu.Lock()
	if recv == nil || d.recv != recv {
		d.mu.Unlock()
		return nil
	}
	sess, stop, done := d.sess, d.stopPoll, d.pollDone
	d.sess, d.recv, d.stopPoll, d.pollDone = nil, nil, nil, nil
	d.mu.Unlock()
	err := recv.Close(ctx)
	stop()
	<-done
	return errors.Join(err, sess.Close(ctx))
}

func (r *solaceReader) readDirect(ctx context.Context) (service.MessageBatch, service.AckFunc, error) {
	d := r.direct
	recv := d.current()
	if recv == nil {
		return nil, nil, service.ErrNotConnected
	}
	for {
		// The messages are built before the read returns, so the scratch
		// space is free again then (dedup keeps a copy).
		ins, err := recv.ReceiveBatch(ctx, d.scratch[:0], r.batchSize)
		if err != nil {
			if errors.Is(err, session.ErrReceiverDown) || errors.Is(err, session.ErrReceiverClosed) {
				r.log.Warnf("Solace direct receiver on %q is down, reconnecting: %v", d.cfg.Subscriptions, err)
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				_ = d.release(ctx, recv)
				cancel()
				return nil, nil, service.ErrNotConnected
			}
			return nil, nil, err
		}
		if r.dedup {
			ins = slices.Clone(r.dropDirectDuplicates(ctx, ins))
			clear(d.scratch[:cap(d.scratch)])
			if len(ins) == 0 {
				continue
			}
		}
		batch := make(service.MessageBatch, len(ins))
		for i, in := range ins {
			msg := r.toMessage(in)
			if r.tsMode == siTimestampMapping {
				msg.MetaSetMut(solacecfg.MetaTimestamp, r.eventTime(msg, in))
			}
			batch[i] = msg
		}
		r.mReceived.Add(int64(len(batch)))
		if !r.dedup {
			// The messages hold what they need of ins.
			recv.Recycle(ins)
			clear(ins)
			n := len(batch)
			return batch, func(_ context.Context, err error) error {
				if err != nil {
					r.directNacked(n, err)
				}
				return nil
			}, nil
		}
		return batch, func(ctx context.Context, err error) error {
			if err != nil {
				r.directNacked(len(ins), err)
			} else {
				now := time.Now()
				for _, in := range ins {
					r.rememberKey(ctx, in.DedupKey(), now)
				}
			}
			d.land(ins)
			return nil
		}, nil
	}
}

// directNacked counts n direct messages the pipeline rejected, and logs it
// (at most every 10 s, with the count since).
func (r *solaceReader) directNacked(n int, err error) {
	r.mNacked.Incr(int64(n), siNackDropped)
	now := time.Now().UnixNano()
	last := r.direct.lastNackLog.Load()
	if now-last >= int64(10*time.Second) && r.direct.lastNackLog.CompareAndSwap(last, now) {
		r.log.Warnf("Dropping %d direct message(s) the pipeline rejected (direct mode cannot redeliver; see solace_input_nacked{outcome=%q}): %v", n, siNackDropped, err)
	}
}

// dropDirectDuplicates removes messages whose key the pipeline already
// processed, or is processing, counting them.
func (r *solaceReader) dropDirectDuplicates(ctx context.Context, ins []*session.Inbound) []*session.Inbound {
	d := r.direct
	now := time.Now()
	return dropKeyed(ins, func(in *session.Inbound, key string) bool {
		d.flyMu.Lock()
		_, flying := d.flying[key]
		if !flying {
			d.flying[key] = struct{}{}
		}
		d.flyMu.Unlock()
		if !flying && !r.seen(ctx, key, now) {
			return false
		}
		if !flying {
			d.land([]*session.Inbound{in})
		}
		r.mDuplicates.Incr(1)
		return true
	})
}

// land ends the flight of the keys of ins.
func (d *siDirect) land(ins []*session.Inbound) {
	d.flyMu.Lock()
	defer d.flyMu.Unlock()
	for _, in := range ins {
		if key := in.DedupKey(); key != "" {
			delete(d.flying, key)
		}
	}
}

// closeDirect closes the live receiver and its session.
func (r *solaceReader) closeDirect(ctx context.Context) error {
	return r.direct.release(ctx, r.direct.current())
}
