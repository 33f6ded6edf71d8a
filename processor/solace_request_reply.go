package processor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connect-solace/connect-solace/internal/interp"
	"github.com/connect-solace/connect-solace/internal/session"
	"github.com/connect-solace/connect-solace/internal/solacecfg"
	"github.com/connect-solace/connect-solace/internal/tracingcfg"
)

const (
	rrFieldTopic          = "topic"
	rrFieldTimeout        = "timeout"
	rrFieldMaxOutstanding = "max_outstanding"
	rrFieldMetadata       = "metadata"
)

func solaceRequestReplySpec() *service.ConfigSpec {
	return solacecfg.Spec("Sends each message as a request to a Solace PubSub+ topic and replaces it with the reply.", `
Publishes every message of a batch as a direct request through the Solace Go client's request-reply publisher, which
sets the request's reply-to (the session's own P2P inbox) and correlation id and matches the reply by that id, as any
Solace requester does. The answering side can be any Solace replier, for example the Go client's
`+"`RequestReplyMessageReceiver`"+` or a connect-solace pipeline with a `+"`solace`"+` input in `+"`requests`"+` mode.

The reply's payload replaces the message's content. Its attributes become metadata under the `+"`solace`"+` input's key names
(`+"`solace_correlation_id`"+`, `+"`solace_application_message_id`"+`, `+"`solace_sender_timestamp`"+`, …) and its user
properties metadata under their own names; the message's other metadata stays.

### Errors

A message whose request fails is kept, unchanged, and flagged with the reason, so that `+"`catch`"+`, `+"`switch`"+` (with
`+"`errored()`"+`) and `+"`fallback`"+` handle it: no reply within `+"`timeout`"+`, a request the client or broker refused, an invalid
topic or attribute, or a connection lost while the request waited. A message is never dropped and never waits longer than
`+"`timeout`"+` for its reply once its request is sent; a request the client cannot send (a stalled connection) fails 250 ms after
its timeout.

### Concurrency

The requests of a batch are all in flight together, up to `+"`max_outstanding`"+` requests across every batch and pipeline
thread of the processor; a message waits for a free slot before its request is sent (the timeout counts from the send).

### Reconnects and shutdown

The processor connects when the first batch arrives. When the connection drops, the client reconnects
(`+"`reconnect_attempts`"+`) and every request then waiting for its reply fails at once with `+"`connection_lost`"+`: PubSub+ keeps no
direct message for a disconnected client, so its reply may be lost. A retry (for example with `+"`retry`"+` or a `+"`catch`"+`
that re-sends) may therefore reach the replier twice. Requests of later messages wait for the reconnection. When the session is
lost for good, the messages of that batch fail and the next batch connects anew. On shutdown, requests still waiting fail
with `+"`closed`"+`.

### Metrics

- `+"`solace_request_reply_latency_ns`"+`: round-trip time of each request that got its reply.
- `+"`solace_request_reply_replies`"+`: requests answered.
- `+"`solace_request_reply_timeouts`"+`: requests without reply within `+"`timeout`"+`.
- `+"`solace_request_reply_errors`"+` with label `+"`reason`"+`: failed requests by reason (`+"`timeout`"+`, `+"`connection_lost`"+`,
  `+"`refused`"+`, `+"`not_connected`"+`, `+"`invalid_message`"+`, `+"`closed`"+`, `+"`canceled`"+`).
- `+"`solace_request_reply_outstanding`"+`: requests waiting for their reply.
- `+"`solace_request_reply_reconnects`"+`: client reconnections.`).
		Fields(
			service.NewInterpolatedStringField(rrFieldTopic).
				Description("The topic each request is published to, interpolated per message.").
				Example("services/pricing/quote").Example(`services/${! meta("region") }/quote`).
				LintRule(rrLint(rrFieldTopic)),
			service.NewDurationField(rrFieldTimeout).
				Description("How long a request waits for its reply before its message fails with `timeout`.").
				Default("5s"),
			service.NewIntField(rrFieldMaxOutstanding).
				Description("The most requests waiting for their replies at once, across all batches and threads.").
				Default(256).LintRule(`root = if this < 1 { "field max_outstanding: must be at least 1, e.g. 256" }`),
		).
		Fields(rrAttributeFields()...).
		Fields(
			service.NewMetadataFilterField(rrFieldMetadata).
				Description("Which metadata of a message travel with its request as user properties. Unset sends none (but the trace context, see `"+tracingcfg.FieldInject+"`).").
				Optional(),
			tracingcfg.InjectFieldOf("the processor", tracingcfg.UserProperties),
		)
}

// solaceRequestReply is the solace_request_reply processor. One session and
// one request publisher serve all its batches.
type solaceRequestReply struct {
	log  *service.Logger
	conn session.Config
	// tmpl holds the static topic and attributes, applied once by the
	// constructor; fields plans the dynamic ones (rrRules).
	tmpl    session.Outbound
	fields  *interp.Plan[session.Outbound]
	props   tracingcfg.Properties
	inject  *tracingcfg.Injector // nil: no trace context to inject
	timeout time.Duration
	slots   chan struct{}

	mLatency     *service.MetricTimer
	mReplies     *service.MetricCounter
	mTimeouts    *service.MetricCounter
	mErrors      *service.MetricCounter
	mOutstanding *service.MetricGauge
	mReconnects  *service.MetricCounter
	outstanding  atomic.Int64

	// mu serialises connecting and closing; live, set under it, is the
	// current session and requester, read without it by every batch and by
	// the session's event callbacks (which run on the client's goroutine
	// and must not take mu).
	mu     sync.Mutex
	live   atomic.Pointer[rrConn]
	closed bool
}

// rrConn is a session with its requester.
type rrConn struct {
	sess *session.Session
	req  *session.Requester
}

// failOutstanding fails the live requester's outstanding requests.
func (p *solaceRequestReply) failOutstanding(cause error) {
	if c := p.live.Load(); c != nil {
		c.req.FailOutstanding(fmt.Errorf("%w: %v", session.ErrReplyLost, cause))
	}
}

func newSolaceRequestReplyFromParsed(conf *service.ParsedConfig, mgr *service.Resources) (*solaceRequestReply, error) {
	p := &solaceRequestReply{log: mgr.Logger()}
	var err error
	if p.conn, err = solacecfg.ConfigFromParsed(conf); err != nil {
		return nil, err
	}
	if p.fields, err = interp.NewPlan(conf, &p.tmpl, rrRules()); err != nil {
		return nil, err
	}
	if !p.fields.Dynamic(rrFieldTopic) {
		// Also a static empty topic, which the plan does not apply.
		if err := rrCheckTopic(p.tmpl.Destination.Name); err != nil {
			return nil, err
		}
	}
	if p.props, err = tracingcfg.PropertiesFromParsed(conf, rrFieldMetadata); err != nil {
		return nil, err
	}
	if p.inject, err = tracingcfg.NewInjector(conf, mgr, "solace_request_reply"); err != nil {
		return nil, err
	}
	if p.timeout, err = conf.FieldDuration(rrFieldTimeout); err != nil {
		return nil, err
	}
	if p.timeout <= 0 {
		return nil, fmt.Errorf("field %s: must be positive, e.g. 5s", rrFieldTimeout)
	}
	n, err := conf.FieldInt(rrFieldMaxOutstanding)
	if err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, fmt.Errorf("field %s: must be at least 1, e.g. 256", rrFieldMaxOutstanding)
	}
	p.slots = make(chan struct{}, n)

	m := mgr.Metrics()
	p.mLatency = m.NewTimer("solace_request_reply_latency_ns")
	p.mReplies = m.NewCounter("solace_request_reply_replies")
	p.mTimeouts = m.NewCounter("solace_request_reply_timeouts")
	p.mErrors = m.NewCounter("solace_request_reply_errors", "reason")
	p.mOutstanding = m.NewGauge("solace_request_reply_outstanding")
	p.mReconnects = m.NewCounter("solace_request_reply_reconnects")
	return p, nil
}

// rrCheckTopic is the check of a request topic, static or per message.
func rrCheckTopic(t string) error {
	if err := session.ValidateTopic(t); err != nil {
		return fmt.Errorf("field %s: %w", rrFieldTopic, err)
	}
	return nil
}

// requester returns the live requester, connecting a session first when
// there is none or the last one ended.
func (p *solaceRequestReply) requester(ctx context.Context) (*session.Requester, error) {
	if c := p.live.Load(); c != nil && !c.down() {
		return c.req, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, session.ErrRequesterClosed
	}
	if c := p.live.Load(); c != nil {
		if !c.down() {
			return c.req, nil
		}
		p.dropLocked()
	}
	sess, err := session.Connect(ctx, p.conn, p.log, session.Events{
		OnReconnecting: p.failOutstanding,
		OnReconnected:  func() { p.mReconnects.Incr(1) },
		OnInterrupted:  p.failOutstanding,
	})
	if err != nil {
		return nil, err
	}
	req, err := sess.NewRequester(uint(cap(p.slots)))
	if err != nil {
		_ = sess.Close(context.Background())
		return nil, err
	}
	p.live.Store(&rrConn{sess: sess, req: req})
	return req, nil
}

// down reports whether c's session ended (Err is set as it ends).
func (c *rrConn) down() bool { return c.sess.Err() != nil }

// dropLocked closes the current session in the background; p.mu is held.
func (p *solaceRequestReply) dropLocked() {
	c := p.live.Swap(nil)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = c.req.Close(ctx)
		_ = c.sess.Close(ctx)
	}()
}

// rrOutcome is the end of one message's request; it is the request's
// session.ReplyHandler, so a request costs no closure.
type rrOutcome struct {
	reply *session.Reply
	err   error
	// topic is the request's topic, "" when it did not resolve.
	topic string
	b     *rrBatch
}

// rrBatch is what the requests of one batch share.
type rrBatch struct {
	p  *solaceRequestReply
	wg sync.WaitGroup
}

func (o *rrOutcome) HandleReply(r *session.Reply, err error) {
	o.reply, o.err = r, err
	p := o.b.p
	p.mOutstanding.Set(p.outstanding.Add(-1))
	<-p.slots
	o.b.wg.Done()
}

func (p *solaceRequestReply) ProcessBatch(ctx context.Context, batch service.MessageBatch) ([]service.MessageBatch, error) {
	req, err := p.requester(ctx)
	if err != nil {
		reason := "not_connected"
		if errors.Is(err, session.ErrRequesterClosed) {
			reason = "closed"
		}
		err = fmt.Errorf("solace_request_reply: not connected: %w", err)
		for _, m := range batch {
			p.fail(m, reason, err)
		}
		return []service.MessageBatch{batch}, nil
	}

	outs := make([]rrOutcome, len(batch))
	b := &rrBatch{p: p}
	// The requests are built from sent, which carries the trace context;
	// the replies go into batch.
	sent := p.inject.Inject(ctx, batch)
	ev := p.fields.Batch(sent)
	// One request value for the whole batch: Request keeps nothing of it.
	var o session.Outbound
	for i := range batch {
		outs[i].b = b
		err := p.toRequest(&ev, sent, i, &o)
		outs[i].topic = o.Destination.Name
		if err != nil {
			outs[i].err = fmt.Errorf("%w: %w", errInvalidMessage, err)
			continue
		}
		select {
		case p.slots <- struct{}{}:
		default:
			select {
			case p.slots <- struct{}{}:
			case <-ctx.Done():
				outs[i].err = ctx.Err()
				continue
			}
		}
		b.wg.Add(1)
		p.mOutstanding.Set(p.outstanding.Add(1))
		req.Request(ctx, &o, p.timeout, &outs[i])
	}
	// Every request ends by its timeout at the latest: the client's timer,
	// the requester's watchdog, FailOutstanding on a connection loss and
	// Close each end it.
	b.wg.Wait()

	for i, m := range batch {
		o := outs[i]
		if o.err != nil {
			reason := rrReason(o.err)
			p.fail(m, reason, fmt.Errorf("solace_request_reply: request to %s failed (%s): %w", o.topicName(), reason, o.err))
			continue
		}
		p.mReplies.Incr(1)
		p.mLatency.Timing(o.reply.Latency.Nanoseconds())
		o.reply.Convert()
		rrApplyReply(m, o.reply)
	}
	return []service.MessageBatch{batch}, nil
}

// topicName names the request's topic in an error.
func (o *rrOutcome) topicName() string {
	if o.topic == "" {
		return "an uninterpolable topic"
	}
	return fmt.Sprintf("topic %q", o.topic)
}

func (p *solaceRequestReply) fail(m *service.Message, reason string, err error) {
	p.mErrors.Incr(1, reason)
	if reason == "timeout" {
		p.mTimeouts.Incr(1)
	}
	m.SetError(err)
}

var errInvalidMessage = errors.New("invalid message")

// rrReason is the bounded metric label of a failed request.
func rrReason(err error) string {
	if errors.Is(err, errInvalidMessage) {
		return "invalid_message"
	}
	if l := session.ErrorLabel(err); l != "" {
		return l
	}
	switch {
	case errors.Is(err, session.ErrSessionDown):
		return "connection_lost"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "canceled"
	default:
		return "error"
	}
}

// toRequest builds the request of message i into o. On an error the
// request is as far as it got: its topic is set when that resolved.
func (p *solaceRequestReply) toRequest(ev *interp.Eval[session.Outbound], batch service.MessageBatch, i int, o *session.Outbound) error {
	m := batch[i]
	*o = p.tmpl
	if err := ev.Apply(o, i); err != nil {
		return err
	}
	payload, err := m.AsBytes()
	if err != nil {
		return err
	}
	o.Payload = payload
	o.UserProperties = p.props.Of(m)
	return nil
}

// rrApplyReply makes m the reply: its payload, its attributes under the
// solace input's metadata keys and its user properties.
func rrApplyReply(m *service.Message, r *session.Reply) {
	m.SetBytes(r.Payload())
	for k, v := range r.Properties() {
		m.MetaSetMut(k, v)
	}
	for _, f := range r.Meta() {
		m.MetaSetMut(solacecfg.MetaKeys[f.Key], f.Value)
	}
}

func (p *solaceRequestReply) Close(ctx context.Context) error {
	p.mu.Lock()
	p.closed = true
	c := p.live.Swap(nil)
	p.mu.Unlock()
	if c == nil {
		return nil
	}
	return errors.Join(c.req.Close(ctx), c.sess.Close(ctx))
}
