package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/message"
	"solace.dev/go/messaging/pkg/solace/metrics"
	"solace.dev/go/messaging/pkg/solace/resource"
)

// This file is the direct (at-most-once) receiver: topic subscriptions,
// optionally shared, received through the Go client's DirectMessageReceiver.

// DirectBackPressure is what the client does with a message that arrives
// while its receive buffer is full.
type DirectBackPressure int

// Back-pressure strategies, as the Go client names them.
const (
	// DropLatest discards the message that arrived (the client's default).
	DropLatest DirectBackPressure = iota
	// DropOldest discards the oldest buffered message to make room.
	DropOldest
)

// DirectReceiverConfig describes a direct receiver.
type DirectReceiverConfig struct {
	// Subscriptions are topic subscriptions, wildcards * and > allowed.
	Subscriptions []string
	// ShareName, when set, makes the subscriptions shared
	// (#share/<name>/<topic>): every receiver subscribed with the same
	// name and topic gets a share of the messages, each message going to
	// one of them.
	ShareName string
	// BufferCapacity is the client's receive buffer in messages; values
	// below 1 mean DefaultDirectBuffer. When it is full, BackPressure
	// decides which message the client discards.
	BufferCapacity int
	BackPressure   DirectBackPressure
	// OnNativeFallback is ReceiverConfig.OnNativeFallback.
	OnNativeFallback func()
}

// DefaultDirectBuffer is the client receive buffer of a direct receiver
// whose config names none.
const DefaultDirectBuffer = 1024

// DirectHandoff is how many converted messages may wait for ReceiveBatch
// beyond the client's buffer, plus one the handler holds while it waits for
// room: the client's buffer, and its back-pressure strategy, take the rest.
const DirectHandoff = 64

// DirectReceiver receives direct messages. Nothing is settled: a message is
// gone from the broker once it was sent, and one the client discards (see
// DirectReceiverConfig.BackPressure) is lost, counted in Discarded.
type DirectReceiver struct {
	svc solace.MessagingService
	dr  solace.DirectMessageReceiver

	// out carries converted messages from the handler (the client's one
	// dispatch goroutine, which alone uses native and dc) to
	// ReceiveBatch.
	out        chan *Inbound
	closed     chan struct{}
	closeOnce  sync.Once
	down       chan struct{}
	downOnce   sync.Once
	downErr    error
	native     nativeReader
	dc         destCache
	onFallback func()
}

// NewDirectReceiver subscribes to cfg.Subscriptions on the session and starts
// receiving. The client re-adds the subscriptions by itself after it
// reconnected; the receiver goes down with the session.
func (s *Session) NewDirectReceiver(ctx context.Context, cfg DirectReceiverConfig) (*DirectReceiver, error) {
	if len(cfg.Subscriptions) == 0 {
		return nil, errors.New("a direct receiver needs at least one topic subscription")
	}
	native, err := probeNative(s.svc)
	if err != nil {
		logFallbackOnce(s.log, err)
	}
	buf := cfg.BufferCapacity
	if buf < 1 {
		buf = DefaultDirectBuffer
	}
	b := s.svc.CreateDirectMessageReceiverBuilder()
	if cfg.BackPressure == DropOldest {
		b = b.OnBackPressureDropOldest(uint(buf))
	} else {
		b = b.OnBackPressureDropLatest(uint(buf))
	}
	subs := make([]resource.Subscription, len(cfg.Subscriptions))
	for i, t := range cfg.Subscriptions {
		subs[i] = resource.TopicSubscriptionOf(t)
	}
	var share *resource.ShareName
	if cfg.ShareName != "" {
		share = resource.ShareNameOf(cfg.ShareName)
	}
	dr, err := b.WithSubscriptions(subs...).BuildWithShareName(share)
	if err != nil {
		return nil, fmt.Errorf("building direct receiver: %w", err)
	}
	r := &DirectReceiver{
		svc:        s.svc,
		dr:         dr,
		out:        make(chan *Inbound, DirectHandoff),
		closed:     make(chan struct{}),
		down:       make(chan struct{}),
		native:     native,
		onFallback: cfg.OnNativeFallback,
	}
	dr.SetTerminationNotificationListener(func(ev solace.TerminationEvent) {
		r.markDown(fmt.Errorf("%w: direct receiver on %s: %s: %w", ErrReceiverDown,
			strings.Join(cfg.Subscriptions, ", "), ev.GetMessage(), ev.GetCause()))
	})
	if err := dr.ReceiveAsync(r.onMessage); err != nil {
		return nil, fmt.Errorf("registering message handler: %w", err)
	}
	started := make(chan error, 1)
	dr.StartAsyncCallback(func(_ solace.DirectMessageReceiver, err error) { started <- err })
	select {
	case err := <-started:
		if err != nil {
			return nil, fmt.Errorf("subscribing to %s: %w", strings.Join(cfg.Subscriptions, ", "), err)
		}
	case <-ctx.Done():
		go func() {
			if err := <-started; err == nil {
				_ = dr.Terminate(0)
			}
		}()
		return nil, ctx.Err()
	}
	go s.downWith(r.closed, r.markDown)
	return r, nil
}

// onMessage runs on the client's dispatch goroutine. It converts the
// message, frees the client's copy and hands the message on, blocking while
// DirectHandoff messages wait: the client's buffer then fills, and its
// back-pressure strategy discards.
func (r *DirectReceiver) onMessage(msg message.InboundMessage) {
	in := &Inbound{msg: msg}
	if r.native == nil || !r.native.read(in, &r.dc) {
		if r.onFallback != nil {
			r.onFallback()
		}
		readAPI(in, &r.dc)
	}
	in.msg = nil
	msg.Dispose()
	select {
	case r.out <- in:
	case <-r.closed:
	}
}

func (r *DirectReceiver) markDown(err error) {
	r.downOnce.Do(func() {
		r.downErr = err
		close(r.down)
	})
}

// ReceiveBatch waits for a message, then appends it and up to upTo-1 more
// that are already waiting to dst. It returns ErrReceiverDown (wrapped) once
// the session is gone for good, and ErrReceiverClosed after Close.
func (r *DirectReceiver) ReceiveBatch(ctx context.Context, dst []*Inbound, upTo int) ([]*Inbound, error) {
	select {
	case in := <-r.out:
		dst = append(dst, in)
	case <-r.down:
		return dst, r.downErr
	case <-r.closed:
		return dst, ErrReceiverClosed
	case <-ctx.Done():
		return dst, ctx.Err()
	}
	for len(dst) < upTo {
		select {
		case in := <-r.out:
			dst = append(dst, in)
		default:
			return dst, nil
		}
	}
	return dst, nil
}

// Down is closed when the receiver went down for good.
func (r *DirectReceiver) Down() <-chan struct{} { return r.down }

// Discarded is how many messages the client discarded so far because its
// buffer was full, on this receiver's session (a direct receiver has its
// session to itself).
func (r *DirectReceiver) Discarded() uint64 {
	return r.svc.Metrics().GetValue(metrics.ReceivedMessagesBackpressureDiscarded)
}

// BrokerDiscards is how many messages arrived flagged with the broker's
// discard indication, on this receiver's session: each says the broker
// dropped messages for this subscriber before it (some, not how many). It is
// the client's own count, which costs nothing per message.
func (r *DirectReceiver) BrokerDiscards() uint64 {
	return r.svc.Metrics().GetValue(metrics.BrokerDiscardNotificationsReceived)
}

// Close stops receiving; messages not handed out yet are dropped.
func (r *DirectReceiver) Close(ctx context.Context) error {
	var err error
	r.closeOnce.Do(func() {
		close(r.closed)
		grace := 5 * time.Second
		if dl, ok := ctx.Deadline(); ok {
			grace = max(time.Until(dl), 0)
		}
		if e := r.dr.Terminate(grace); e != nil && !isIllegalState(e) {
			err = e
		}
	})
	return err
}
