package session

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/message"
	"solace.dev/go/messaging/pkg/solace/subcode"
)

// Errors a request may end with, besides ErrSessionDown and a context's
// error; each names its metric label.
var (
	// ErrReplyTimeout means no reply came within the request's timeout.
	ErrReplyTimeout error = &labelled{"no reply within the timeout", "timeout"}
	// ErrReplyLost means the connection dropped while the request waited
	// (to be sent, or for its reply).
	ErrReplyLost error = &labelled{"connection lost while the request waited for its reply", "connection_lost"}
	// ErrRequestRefused wraps a request the client or the broker would not
	// send.
	ErrRequestRefused error = &labelled{"request not sent", "refused"}
	// ErrRequesterClosed means the requester was closed while the request
	// waited for its reply.
	ErrRequesterClosed error = &labelled{"requester closed", "closed"}
)

// Reply is the answer to a request. Its holder calls Convert once, from
// any goroutine, before reading Payload, Meta and Properties.
type Reply struct {
	// Latency is the time from publishing the request to its reply.
	Latency time.Duration

	svc solace.MessagingService
	// in holds the client's message until Convert and then the
	// conversion's storage (its string attributes share in.strBuf), and
	// meta is Meta's: a reply is converted into the request's own
	// allocation, which replyMetaCap keeps at 512 bytes, the largest size
	// the allocator serves without a header (a reply with more attributes
	// than that grows its Meta).
	in   Inbound
	meta [replyMetaCap]MetaField
}

// replyMetaCap is the room for a reply's attributes in its request's
// allocation: a reply usually has six (destination and its type,
// correlation id, redelivered, receive timestamp, class of service).
const replyMetaCap = 8

// Payload is the reply's payload (Inbound.Payload).
func (r *Reply) Payload() []byte { return r.in.Payload }

// Meta holds the reply's attributes that are present, as Inbound.Meta.
func (r *Reply) Meta() []MetaField { return r.in.Meta }

// Properties are the reply's user properties.
func (r *Reply) Properties() map[string]any { return r.in.Properties }

// Convert reads the reply's payload, attributes and user properties, as
// plain Go values, and frees the client's message; later calls do nothing. The Requester leaves it to the reply's
// holder because the client calls the reply handler on a goroutine of its
// own per request, fresh, whose stack the native read would have to grow
// every time; a goroutine that waits for its requests (a pipeline's
// thread) has grown its stack once.
func (r *Reply) Convert() {
	msg := r.in.msg
	if msg == nil {
		return
	}
	r.in.Meta = r.meta[:0]
	convertInto(r.svc, &r.in)
	msg.Dispose()
	r.in.msg = nil
}

// ReplyHandler is told how a request ended: with its reply, or with an
// error (see Requester.Request). A method rather than a func so that a
// caller can hand in a pointer it already has (such as an element of a
// slice) instead of allocating a closure per request.
type ReplyHandler interface {
	HandleReply(*Reply, error)
}

// ReplyFunc is a ReplyHandler written as a func.
type ReplyFunc func(*Reply, error)

// HandleReply calls f.
func (f ReplyFunc) HandleReply(r *Reply, err error) { f(r, err) }

// Requester publishes requests on one Session through the client's
// request-reply publisher, which sets each request's reply-to (the session's
// P2P inbox) and correlation id, and matches replies by that id. Every
// request ends exactly once: with its reply, on its timeout, or with an
// error when the connection drops, the publish is refused or the requester
// closes.
type Requester struct {
	sess    *Session
	pub     solace.RequestReplyMessagePublisher
	builder solace.OutboundMessageBuilder
	topics  topicCache
	// handler is r.onReply, made once: a method value allocates.
	handler solace.ReplyMessageHandler

	// pubMu is held shared while a request is handed to the client and
	// exclusively while Close terminates it: the client's Terminate closes
	// the buffer a concurrent Publish sends on (v1.10.1), a data race.
	// Publish does not block while holding it: the client's buffer has room
	// for every request the plugin lets wait at once.
	pubMu sync.RWMutex

	mu      sync.Mutex
	pending map[*pendingRequest]struct{}
	closed  bool
	// watchdog ends the requests the client never reports on: the client
	// starts its reply timer only once a request went out, and a send can
	// stall (a full socket on a silent network) until the connection is
	// given up. One timer serves every request, armed (armed, for armedAt)
	// for the earliest deadline when a request finds it idle or set for
	// later; each time it fires it ends the requests past their deadline
	// and re-arms for the earliest left, so it runs about once per timeout
	// however many requests pass.
	watchdog *time.Timer
	armed    bool
	armedAt  time.Time
}

// pendingRequest is one request waiting for its end, with the storage of
// its reply: one allocation per request.
type pendingRequest struct {
	start time.Time
	// wait is how long after start the watchdog ends the request (see
	// deadline); a duration is a third of a time.Time, which keeps the
	// allocation within 512 bytes.
	wait  time.Duration
	done  ReplyHandler
	reply Reply
}

// deadline is when the watchdog ends p.
func (p *pendingRequest) deadline() time.Time { return p.start.Add(p.wait) }

// watchdogGrace is how much longer than its timeout a request may wait for
// the client's word before the watchdog ends it.
const watchdogGrace = 250 * time.Millisecond

// errNoWordFromClient is the watchdog's error.
var errNoWordFromClient = fmt.Errorf("%w: the request was not sent within the timeout", ErrReplyTimeout)

// NewRequester creates and starts a request publisher on s. buffer is the
// client's publish buffer in messages (at least 1): Request waits while it
// is full.
func (s *Session) NewRequester(buffer uint) (*Requester, error) {
	if buffer == 0 {
		buffer = 1
	}
	pub, err := s.svc.RequestReply().CreateRequestReplyMessagePublisherBuilder().
		OnBackPressureWait(buffer).Build()
	if err != nil {
		return nil, fmt.Errorf("creating request publisher: %w", err)
	}
	if err := pub.Start(); err != nil {
		return nil, fmt.Errorf("starting request publisher: %w", err)
	}
	r := &Requester{sess: s, pub: pub, builder: s.svc.MessageBuilder(), pending: map[*pendingRequest]struct{}{}}
	r.handler = r.onReply
	pub.SetTerminationNotificationListener(func(ev solace.TerminationEvent) {
		cause := ev.GetCause()
		if cause == nil {
			cause = ErrSessionDown
		}
		r.FailOutstanding(fmt.Errorf("%w: %v", ErrReplyLost, cause))
	})
	return r, nil
}

// Request publishes o as a request to o.Destination (a topic) and tells done
// exactly once, from another goroutine or, when the request could not be
// sent, before Request returns: the reply (done's from then on: it calls
// Reply.Convert), or an error wrapping ErrReplyTimeout, ErrReplyLost,
// ErrRequestRefused, ErrSessionDown, ErrRequesterClosed or ctx's error. Request waits up to timeout while the session
// reconnects, and while the client's buffer is full. o.CorrelationID and
// o.ReplyTo are ignored: the client sets both; Request keeps nothing of o.
func (r *Requester) Request(ctx context.Context, o *Outbound, timeout time.Duration, done ReplyHandler) {
	if !r.sess.connected.Load() {
		// A request waits for a reconnection no longer than for its reply.
		wctx, cancel := context.WithTimeout(ctx, timeout)
		err := r.sess.WaitConnected(wctx)
		cancel()
		if err != nil {
			if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
				err = fmt.Errorf("%w: not reconnected within the timeout", ErrReplyLost)
			}
			done.HandleReply(nil, err)
			return
		}
	}
	p := &pendingRequest{done: done}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		done.HandleReply(nil, ErrRequesterClosed)
		return
	}
	p.start = time.Now()
	p.wait = timeout + watchdogGrace
	r.pending[p] = struct{}{}
	if d := p.deadline(); !r.armed || d.Before(r.armedAt) {
		r.armWatchdogLocked(d)
	}
	r.mu.Unlock()

	plain := *o
	plain.CorrelationID, plain.ReplyTo = "", ""
	topic := r.topics.get(plain.Destination.Topic())
	r.pubMu.RLock()
	defer r.pubMu.RUnlock()
	var err error
	if plain.plain() {
		err = r.pub.PublishBytes(plain.Payload, r.handler, topic, timeout, p)
	} else {
		var m message.OutboundMessage
		if m, err = buildMessage(r.builder, &plain); err == nil {
			err = r.pub.Publish(m, r.handler, topic, timeout, nil, p)
			m.Dispose()
		}
	}
	if err != nil {
		err = fmt.Errorf("%w: %w", ErrRequestRefused, err)
		if notEstablished(err) || !r.sess.Connected() {
			err = fmt.Errorf("%w: %w", ErrReplyLost, err)
		}
		r.end(p, nil, err)
	}
}

// onReply is the client's reply handler of every request.
func (r *Requester) onReply(msg message.InboundMessage, uc any, err error) {
	p, ok := uc.(*pendingRequest)
	if !ok {
		if msg != nil {
			msg.Dispose()
		}
		return
	}
	if err != nil || msg == nil {
		err = requestError(err)
		if errors.Is(err, ErrRequestRefused) && (notEstablished(err) || !r.sess.Connected()) {
			// The client fails a send while its session reconnects.
			err = fmt.Errorf("%w: %w", ErrReplyLost, err)
		}
		r.end(p, nil, err)
		return
	}
	rep := &p.reply
	rep.svc, rep.in.msg = r.sess.svc, msg
	rep.Latency = time.Since(p.start)
	if !r.end(p, rep, nil) {
		// The request ended already (its watchdog, a connection loss).
		msg.Dispose()
	}
}

// armWatchdogLocked arms the watchdog to fire at d; r.mu is held.
func (r *Requester) armWatchdogLocked(d time.Time) {
	r.armed, r.armedAt = true, d
	if r.watchdog == nil {
		r.watchdog = time.AfterFunc(time.Until(d), r.sweep)
		return
	}
	r.watchdog.Reset(time.Until(d))
}

// sweep is the watchdog's run: it ends the requests past their deadline
// and re-arms for the earliest deadline left.
func (r *Requester) sweep() {
	now := time.Now()
	var expired []*pendingRequest
	var next time.Time
	r.mu.Lock()
	for p := range r.pending {
		switch d := p.deadline(); {
		case !d.After(now):
			expired = append(expired, p)
			delete(r.pending, p)
		case next.IsZero() || d.Before(next):
			next = d
		}
	}
	r.armed = false
	if !next.IsZero() && !r.closed {
		r.armWatchdogLocked(next)
	}
	r.mu.Unlock()
	for _, p := range expired {
		p.done.HandleReply(nil, errNoWordFromClient)
	}
}

// requestError classifies the client's error of a request without reply.
func requestError(err error) error {
	var te *solace.TimeoutError
	var ise *solace.IllegalStateError
	switch {
	case err == nil:
		return fmt.Errorf("%w: the client gave neither reply nor error", ErrReplyLost)
	case errors.As(err, &te):
		return ErrReplyTimeout
	case errors.As(err, &ise):
		return fmt.Errorf("%w: %w", ErrReplyLost, err)
	default:
		return fmt.Errorf("%w: %w", ErrRequestRefused, err)
	}
}

// notEstablished reports the client's error for a send while its session
// is down (reconnecting), which it may report before its reconnection event.
func notEstablished(err error) bool {
	var ne *solace.NativeError
	return errors.As(err, &ne) && ne.SubCode() == subcode.SessionNotEstablished
}

// end ends p once, reporting whether this call did; later calls (the
// client's handler after FailOutstanding) do nothing.
func (r *Requester) end(p *pendingRequest, reply *Reply, err error) bool {
	r.mu.Lock()
	_, ok := r.pending[p]
	delete(r.pending, p)
	r.mu.Unlock()
	if ok {
		p.done.HandleReply(reply, err)
	}
	return ok
}

// Outstanding is the number of requests waiting for their end.
func (r *Requester) Outstanding() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.pending)
}

// FailOutstanding ends every request still waiting with err. The plugins
// call it when the connection drops: a request's reply, or the request
// itself, may have been lost with it, and PubSub+ keeps no direct message
// for a disconnected client. A reply that still comes later is dropped.
func (r *Requester) FailOutstanding(err error) {
	r.mu.Lock()
	ps := make([]*pendingRequest, 0, len(r.pending))
	for p := range r.pending {
		ps = append(ps, p)
	}
	clear(r.pending)
	r.mu.Unlock()
	for _, p := range ps {
		p.done.HandleReply(nil, err)
	}
}

// Close ends the requests still waiting with ErrRequesterClosed and
// terminates the publisher, waiting for the client until ctx ends.
func (r *Requester) Close(ctx context.Context) error {
	r.mu.Lock()
	r.closed = true
	if r.watchdog != nil {
		r.watchdog.Stop()
	}
	r.mu.Unlock()
	r.FailOutstanding(ErrRequesterClosed)
	done := make(chan error, 1)
	go func() {
		r.pubMu.Lock()
		defer r.pubMu.Unlock()
		done <- r.pub.Terminate(0)
	}()
	select {
	case err := <-done:
		var ise *solace.IllegalStateError
		var inc *solace.IncompleteMessageDeliveryError
		if err != nil && !errors.As(err, &ise) && !errors.As(err, &inc) {
			return fmt.Errorf("terminating request publisher: %w", err)
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// convertOne converts a message taken outside a queue flow (a reply or a
// request) as convertInto does, into an Inbound of its own.
func convertOne(svc solace.MessagingService, msg message.InboundMessage) *Inbound {
	in := &Inbound{msg: msg}
	convertInto(svc, in)
	return in
}

// convertInto converts in.msg, a message taken outside a queue flow, into
// in (whose Meta storage it uses, see startConversion) in one native read
// when the client allows it (see native.go), which also gives the
// attributes the Go API hides, else through the Go API. Everything is
// copied: the caller may dispose of the message at once.
func convertInto(svc solace.MessagingService, in *Inbound) {
	if nr, err := probeNative(svc); err == nil && nr.read(in, nil) {
		return
	}
	readAPI(in, nil)
}
