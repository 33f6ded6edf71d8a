package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/subcode"
)

// BackPressure selects what Publish does when the client's buffer is full.
type BackPressure struct {
	// Reject makes a full buffer an overflow that the publisher answers by
	// waiting for the client's readiness signal and retrying, instead of
	// blocking inside the client. With BufferSize 0 a message goes straight
	// to the transport (no hand-over to the client's buffer goroutine).
	Reject bool
	// BufferSize is the client's back-pressure buffer in messages; Wait
	// needs at least 1.
	BufferSize uint
}

// withBackPressure sets bp on a publisher builder of either kind.
func withBackPressure[B interface {
	OnBackPressureReject(uint) B
	OnBackPressureWait(uint) B
}](b B, bp BackPressure) B {
	if bp.Reject {
		return b.OnBackPressureReject(bp.BufferSize)
	}
	return b.OnBackPressureWait(bp.BufferSize)
}

// PublisherOptions configure a Publisher.
type PublisherOptions struct {
	// Persistent selects guaranteed (acknowledged) delivery; otherwise
	// messages go direct, at most once.
	Persistent   bool
	BackPressure BackPressure
	// OnDirectFailure, if set, hears of direct messages the client accepted
	// but failed to send (at-most-once losses); it must not block.
	OnDirectFailure func(error)

	// sender, set by a Pool, is shared by the pool's direct publishers;
	// a lone publisher gets its own.
	sender *directSender
}

// Result is the outcome of one message of a batch.
type Result struct {
	// Err is nil once the broker confirmed (persistent) or the client
	// accepted (direct) the message.
	Err error
	// Latency is the time from publish to broker confirmation (persistent).
	Latency time.Duration
}

// Errors a Result may wrap.
var (
	// ErrConnectionLost means the session ended before the broker confirmed
	// the message; it may or may not have been spooled.
	ErrConnectionLost error = &labelled{"connection lost before the broker confirmed the message", "connection_lost"}
	// ErrRejected wraps every broker rejection (nack).
	ErrRejected error = &labelled{"broker rejected the message", "rejected"}
)

// Publisher publishes on one Session, tracking confirmations per message.
type Publisher struct {
	sess    *Session
	opts    PublisherOptions
	builder solace.OutboundMessageBuilder
	topics  topicCache

	persistent solace.PersistentMessagePublisher
	direct     solace.DirectMessagePublisher

	ready chan struct{} // readiness signals after overflow, capacity 1

	// sendMu lets one persistent batch at a time build and send its
	// messages on this publisher (waits for room or for the connection
	// happen without it). Benthos calls WriteBatch from max_in_flight
	// goroutines (64 by default), and that many senders in the client's C
	// library at once contend in the library itself, costing more CPU per
	// message than one after another. It orders nothing:
	// the confirmations are waited for without it. Direct messages go
	// through sender instead.
	sendMu sync.Mutex
	sender *directSender
	onHeld func() // tests: a direct message waits for its retry
	// publishBytes lets direct messages without attributes go through the
	// client's PublishBytes: it sends the message it builds, where Publish
	// copies ours (one C message, two Go finalizers and 1.5 allocations
	// less per message). It frees that message itself when the send fails
	// (short of a terminated publisher), except on an overflow of a
	// reject-mode buffer, where the message would wait for its finalizer:
	// that mode builds here.
	publishBytes bool

	// busy counts the messages of the PublishBatch calls under way, for
	// Pool.PublisherFor.
	busy atomic.Int64

	mu      sync.Mutex
	batches map[*batch]struct{} // batches waiting for receipts
	termErr error               // set once the publisher terminated
	term    chan struct{}
}

// pendingRef is the user context of one published message.
type pendingRef struct {
	b     *batch
	idx   int
	start time.Time
}

// batch collects the receipts of one PublishBatch call.
type batch struct {
	mu      sync.Mutex
	results []Result
	done    []bool
	left    int
	fin     chan struct{}
}

func (b *batch) resolve(idx int, r Result) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done[idx] {
		return
	}
	b.done[idx] = true
	b.results[idx] = r
	b.left--
	if b.left == 0 {
		close(b.fin)
	}
}

// failRest resolves every message still waiting with err; it reports how
// many messages had been confirmed before.
func (b *batch) failRest(err error) (confirmed int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := range b.done {
		if b.done[i] {
			if b.results[i].Err == nil {
				confirmed++
			}
			continue
		}
		b.done[i] = true
		b.results[i] = Result{Err: err}
		b.left--
	}
	if b.left == 0 {
		select {
		case <-b.fin:
		default:
			close(b.fin)
		}
	}
	return confirmed
}

// NewPublisher creates and starts a publisher on s.
func NewPublisher(s *Session, opts PublisherOptions) (*Publisher, error) {
	p := &Publisher{
		sess:    s,
		opts:    opts,
		builder: s.svc.MessageBuilder(),
		ready:   make(chan struct{}, 1),
		batches: map[*batch]struct{}{},
		term:    make(chan struct{}),
		sender:  opts.sender,
	}
	if p.sender == nil {
		p.sender = &directSender{}
	}
	p.publishBytes = !opts.Persistent && !(opts.BackPressure.Reject && opts.BackPressure.BufferSize > 0)
	bp := opts.BackPressure
	if !bp.Reject && bp.BufferSize == 0 {
		bp.BufferSize = 1
	}
	var (
		lc  solace.LifecycleControl
		err error
	)
	if opts.Persistent {
		b := withBackPressure(s.svc.CreatePersistentMessagePublisherBuilder(), bp)
		if p.persistent, err = b.Build(); err != nil {
			return nil, fmt.Errorf("creating persistent publisher: %w", err)
		}
		p.persistent.SetMessagePublishReceiptListener(p.onReceipt)
		p.persistent.SetPublisherReadinessListener(p.onReady)
		lc = p.persistent
		err = p.persistent.Start()
	} else {
		b := withBackPressure(s.svc.CreateDirectMessagePublisherBuilder(), bp)
		if p.direct, err = b.Build(); err != nil {
			return nil, fmt.Errorf("creating direct publisher: %w", err)
		}
		p.direct.SetPublisherReadinessListener(p.onReady)
		if opts.OnDirectFailure != nil {
			p.direct.SetPublishFailureListener(func(ev solace.FailedPublishEvent) {
				opts.OnDirectFailure(ev.GetError())
			})
		}
		lc = p.direct
		err = p.direct.Start()
	}
	if err != nil {
		return nil, fmt.Errorf("starting publisher: %w", err)
	}
	lc.SetTerminationNotificationListener(func(ev solace.TerminationEvent) {
		cause := ev.GetCause()
		if cause == nil {
			cause = ErrSessionDown
		}
		p.terminated(cause)
	})
	return p, nil
}

func (p *Publisher) onReady() {
	select {
	case p.ready <- struct{}{}:
	default:
	}
}

func (p *Publisher) onReceipt(r solace.PublishReceipt) {
	// Publish sends a copy of the message, which the client hands to the
	// receipt and never frees itself: left to the Go finalizer, the C
	// memory of every published message waited for a garbage collection
	// that a small Go heap rarely triggers, and the producer's RSS grew with
	// the message count (issue 11 finding 7).
	if m := r.GetMessage(); m != nil {
		m.Dispose()
	}
	ref, ok := r.GetUserContext().(*pendingRef)
	if !ok {
		return
	}
	res := Result{Latency: time.Since(ref.start)}
	if err := r.GetError(); err != nil || !r.IsPersisted() {
		res.Err = receiptError(err)
	}
	ref.b.resolve(ref.idx, res)
}

// receiptError classifies a receipt error: a broker nack becomes ErrRejected
// with the broker's reason; a lost session becomes ErrConnectionLost.
func receiptError(err error) error {
	if err == nil {
		return fmt.Errorf("%w: not persisted", ErrRejected)
	}
	var ne *solace.NativeError
	if errors.As(err, &ne) {
		return &RejectError{Reason: ne.Error(), SubCode: int(ne.SubCode()), err: err}
	}
	var inc *solace.IncompleteMessageDeliveryError
	var ise *solace.IllegalStateError
	if errors.As(err, &inc) || errors.As(err, &ise) {
		return fmt.Errorf("%w: %v", ErrConnectionLost, err)
	}
	return &RejectError{Reason: err.Error(), err: err}
}

// RejectError is a broker nack for one message.
type RejectError struct {
	// Reason is the broker's response text, e.g. "Spool Over Quota".
	Reason string
	// SubCode is the client's subcode for it.
	SubCode int
	err     error
}

func (e *RejectError) Error() string { return "broker rejected the message: " + e.Reason }

// Unwrap lets errors.Is(err, ErrRejected) and errors.As to the client's
// error both work.
func (e *RejectError) Unwrap() []error { return []error{ErrRejected, e.err} }

// Label names the rejection for a metric: the client's subcode name in
// lower case (e.g. "spool_over_quota"), a bounded set, never the broker's
// free text; "rejected" when the subcode has no name.
func (e *RejectError) Label() string {
	name, ok := strings.CutPrefix(subcode.Code(e.SubCode).String(), "SOLCLIENT_SUBCODE_")
	if e.SubCode == 0 || !ok || name == "" {
		return "rejected"
	}
	return strings.ToLower(name)
}

// UnknownQueue reports a nack that means the destination queue is missing.
func (e *RejectError) UnknownQueue() bool {
	switch subcode.Code(e.SubCode) {
	case subcode.UnknownQueueName, subcode.QueueNotFound, subcode.NoSubscriptionMatch:
		return true
	}
	return false
}

// terminated fails every waiting message once the publisher is gone.
func (p *Publisher) terminated(cause error) {
	p.mu.Lock()
	if p.termErr != nil {
		p.mu.Unlock()
		return
	}
	p.termErr = cause
	close(p.term)
	bs := make([]*batch, 0, len(p.batches))
	for b := range p.batches {
		bs = append(bs, b)
	}
	p.mu.Unlock()
	for _, b := range bs {
		b.failRest(fmt.Errorf("%w: %v", ErrConnectionLost, cause))
	}
}

// NativeErr is the session's NativeErr: why Outbound.Reply cannot be
// sent with this client, or nil.
func (p *Publisher) NativeErr() error { return p.sess.NativeErr() }

// Alive reports whether the publisher and its session can still publish.
// It is asked per batch (and per pool slot), so it checks each channel
// alone: a non-blocking receive from one open channel reads its state
// without the lock that a select over two channels takes on both, which
// the output's concurrent writers contended for.
func (p *Publisher) Alive() bool {
	select {
	case <-p.term:
		return false
	default:
	}
	select {
	case <-p.sess.down:
		return false
	default:
		return true
	}
}

// PublishBatch publishes msgs in order and, for persistent delivery, waits
// until the broker confirmed or rejected each one, the session ended, or ctx
// ended. results[i] belongs to msgs[i]; confirmed messages have a nil Err.
func (p *Publisher) PublishBatch(ctx context.Context, msgs []*Outbound) []Result {
	return p.PublishBatchInto(ctx, msgs, nil)
}

// PublishBatchInto is PublishBatch writing the results into dst's room
// (grown when too small), so that a caller that keeps its scratch space
// across batches pays no allocation for them: for the streaming writer,
// whose batches hold one message, that would be one allocation per message. Nothing writes
// to the returned slice once PublishBatchInto has returned.
func (p *Publisher) PublishBatchInto(ctx context.Context, msgs []*Outbound, dst []Result) []Result {
	var results []Result
	if cap(dst) >= len(msgs) {
		results = dst[:len(msgs)]
		clear(results)
	} else {
		results = make([]Result, len(msgs))
	}
	if len(msgs) == 0 {
		return results
	}
	p.busy.Add(int64(len(msgs)))
	defer p.busy.Add(-int64(len(msgs)))
	if !p.opts.Persistent {
		p.publishDirect(ctx, msgs, results)
		return results
	}

	b := &batch{results: results, done: make([]bool, len(msgs)), left: len(msgs), fin: make(chan struct{})}
	p.mu.Lock()
	if p.termErr != nil {
		err := p.termErr
		p.mu.Unlock()
		b.failRest(fmt.Errorf("%w: %v", ErrConnectionLost, err))
		return results
	}
	p.batches[b] = struct{}{}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.batches, b)
		p.mu.Unlock()
	}()

	// One allocation for the user contexts of the whole batch.
	refs := make([]pendingRef, len(msgs))
	p.sendMu.Lock()
	for i, o := range msgs {
		m, topic, err := build(p.builder, &p.topics, o)
		if err != nil {
			b.resolve(i, Result{Err: err})
			continue
		}
		ref := &refs[i]
		*ref = pendingRef{b: b, idx: i, start: time.Now()}
		if p.sess.connected.Load() {
			err = p.persistent.Publish(m, topic, nil, ref)
		} else {
			err = errNotConnectedYet
		}
		if err != nil {
			// Waiting for room or the connection happens without the lock.
			p.sendMu.Unlock()
			err = p.retryPublish(ctx, err, func() error { return p.persistent.Publish(m, topic, nil, ref) })
			p.sendMu.Lock()
			if err != nil {
				b.resolve(i, Result{Err: err})
			}
		}
		m.Dispose()
	}
	p.sendMu.Unlock()

	select {
	case <-b.fin:
	case <-p.term:
		// terminated() fails the rest; wait for it to finish doing so.
		<-b.fin
	case <-p.sess.down:
		b.failRest(fmt.Errorf("%w: %v", ErrConnectionLost, p.sess.Err()))
	case <-ctx.Done():
		b.failRest(fmt.Errorf("waiting for broker confirmation: %w", ctx.Err()))
	}
	return results
}

// errNotConnectedYet stands for a first send attempt not made because the
// session was not connected; the retry loops then wait for it.
var errNotConnectedYet = errors.New("not connected")

// retryPublish retries publish after its first attempt failed with err
// (errNotConnectedYet: not attempted), waiting for room in the buffer or for
// the connection, until it is sent or fails for good. It is the slow path
// of both delivery modes.
func (p *Publisher) retryPublish(ctx context.Context, err error, publish func() error) error {
	if err != errNotConnectedYet {
		if werr := p.waitOverflow(ctx, err); werr != nil {
			return werr
		}
	}
	for {
		if err := p.sess.WaitConnected(ctx); err != nil {
			return fmt.Errorf("%w: %v", ErrConnectionLost, err)
		}
		err := publish()
		if err == nil {
			return nil
		}
		if werr := p.waitOverflow(ctx, err); werr != nil {
			return werr
		}
	}
}

// waitOverflow returns nil when err is a full buffer and the publisher became
// ready again; otherwise it returns the error to report.
func (p *Publisher) waitOverflow(ctx context.Context, err error) error {
	var of *solace.PublisherOverflowError
	if !errors.As(err, &of) {
		var ise *solace.IllegalStateError
		if errors.As(err, &ise) || !p.Alive() {
			return fmt.Errorf("%w: %v", ErrConnectionLost, err)
		}
		return fmt.Errorf("publishing: %w", err)
	}
	// The readiness listener fires on the transport's can-send event, or on
	// a NotifyWhenReady request when the buffer has room. Without a buffer
	// the client always claims to be ready, so asking would spin; there
	// the can-send event alone wakes us. A short timer covers lost signals.
	if p.opts.BackPressure.BufferSize > 0 {
		if p.persistent != nil {
			p.persistent.NotifyWhenReady()
		} else {
			p.direct.NotifyWhenReady()
		}
	}
	t := time.NewTimer(5 * time.Millisecond)
	defer t.Stop()
	select {
	case <-p.ready:
	case <-t.C:
	case <-p.term:
		return fmt.Errorf("%w: %v", ErrConnectionLost, err)
	case <-p.sess.down:
		return fmt.Errorf("%w: %v", ErrConnectionLost, err)
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// Close terminates the publisher, giving in-flight messages until ctx ends
// to be confirmed.
func (p *Publisher) Close(ctx context.Context) error {
	grace := 10 * time.Second
	if dl, ok := ctx.Deadline(); ok {
		grace = max(time.Until(dl), 0)
	}
	var err error
	if p.persistent != nil {
		err = p.persistent.Terminate(grace)
	} else if p.direct != nil {
		err = p.direct.Terminate(grace)
	}
	p.terminated(ErrSessionDown)
	var ise *solace.IllegalStateError
	if err != nil && !errors.As(err, &ise) {
		return fmt.Errorf("terminating publisher: %w", err)
	}
	return nil
}
