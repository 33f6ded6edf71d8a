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

	"github.com/connect-solace/connect-solace/internal/session/ccsmp"
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

// DirectReceiver receives direct messages. Nothing is settled: a message is
// gone from the broker once it was sent, and one the client discards (see
// DirectReceiverConfig.BackPressure) is lost, counted in Discarded.
//
// ReceiveBatch takes the messages from the client's own receive buffer
// itself (ReceiveMessage), where CCSMP's callback puts them: no handler
// goroutine converts them and hands them over, so a message costs one
// goroutine wake-up less on its way to the pipeline, as in a Go-client loop
// that handles each message in the client's callback, and the client's
// buffer (BufferCapacity) is the only one.
type DirectReceiver struct {
	svc solace.MessagingService
	dr  solace.DirectMessageReceiver
	// backlog is how many messages wait in the client's buffer, so that
	// ReceiveBatch takes those without waiting; nil when the client's
	// private layout is not the verified one (ccsmp.DirectBacklogOf), and
	// every call then takes one message.
	backlog func() int

	closed    chan struct{}
	closeOnce sync.Once
	down      chan struct{}
	downOnce  sync.Once
	downErr   error
	// native, dc and spare are used by ReceiveBatch's caller alone (one
	// at a time).
	native     nativeReader
	dc         destCache
	onFallback func()
	// spare are messages given back by Recycle, with their attribute
	// storage, for ReceiveBatch to convert into.
	spare []*Inbound
}

// directSpares bounds how many recycled messages a receiver keeps: two
// batches of the solace input's default size.
const directSpares = 128

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
	backlog, _ := ccsmp.DirectBacklogOf(dr)
	r := &DirectReceiver{
		svc:        s.svc,
		dr:         dr,
		backlog:    backlog,
		closed:     make(chan struct{}),
		down:       make(chan struct{}),
		native:     native,
		onFallback: cfg.OnNativeFallback,
	}
	dr.SetTerminationNotificationListener(func(ev solace.TerminationEvent) {
		r.markDown(fmt.Errorf("%w: direct receiver on %s: %s: %w", ErrReceiverDown,
			strings.Join(cfg.Subscriptions, ", "), ev.GetMessage(), ev.GetCause()))
	})
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

// convert converts msg and frees the client's copy.
func (r *DirectReceiver) convert(msg message.InboundMessage) *Inbound {
	var in *Inbound
	if n := len(r.spare); n > 0 {
		in = r.spare[n-1]
		r.spare[n-1] = nil
		r.spare = r.spare[:n-1]
		*in = Inbound{Meta: in.Meta[:0]}
	} else {
		in = new(Inbound)
	}
	in.msg = msg
	if r.native == nil || !r.native.read(in, &r.dc) {
		if r.onFallback != nil {
			r.onFallback()
		}
		readAPI(in, &r.dc)
	}
	in.msg = nil
	msg.Dispose()
	return in
}

// Recycle gives back messages of ReceiveBatch that the caller is done with
// (called by ReceiveBatch's caller, not concurrently with it): it keeps what
// it handed out of them (their Payload, their attribute values), not the
// messages themselves. A message is converted into again, with its
// attribute storage, unless a string attribute of it lives in its own
// storage (strBuf), which the next conversion would overwrite. Direct
// messages are converted one after the other at the stream's rate, and
// reusing their storage spares the collector about half of what a message
// costs beyond its payload.
func (r *DirectReceiver) Recycle(ins []*Inbound) {
	for _, in := range ins {
		if len(r.spare) == directSpares {
			return
		}
		if in != nil && in.msg == nil && !in.ownStrings() {
			r.spare = append(r.spare, in)
		}
	}
}

func (r *DirectReceiver) markDown(err error) {
	r.downOnce.Do(func() {
		r.downErr = err
		close(r.down)
	})
}

// directPoll is how long ReceiveBatch waits in the client's receive at a
// time before it looks at ctx again: the client's wait knows nothing of
// contexts. It bounds how long a cancelled read (Benthos cancels at
// shutdown) takes to return; Close and a lost session end the wait at once.
const directPoll = 100 * time.Millisecond

// ReceiveBatch waits for a message, then appends it and up to upTo-1 more
// that are already waiting to dst. It returns ErrReceiverDown (wrapped) once
// the session is gone for good, and ErrReceiverClosed after Close. It must
// not be called concurrently.
func (r *DirectReceiver) ReceiveBatch(ctx context.Context, dst []*Inbound, upTo int) ([]*Inbound, error) {
	n0 := len(dst)
	for len(dst) < max(upTo, 1) {
		var msg message.InboundMessage
		var err error
		switch {
		case r.backlog != nil && r.backlog() > 0:
			// Only this caller takes from the buffer: the message is
			// there, and the receive returns at once.
			msg, err = r.dr.ReceiveMessage(-1)
		case len(dst) > n0:
			return dst, nil
		default:
			if err := r.ended(ctx); err != nil {
				return dst, err
			}
			wait := directPoll
			if dl, ok := ctx.Deadline(); ok {
				wait = min(wait, max(time.Until(dl), 0))
			}
			msg, err = r.dr.ReceiveMessage(wait)
		}
		if err != nil {
			if len(dst) > n0 {
				return dst, nil
			}
			var timeout *solace.TimeoutError
			if errors.As(err, &timeout) {
				continue
			}
			// The receiver was terminated, by Close or with its session:
			// wait for the cause.
			select {
			case <-r.closed:
				return dst, ErrReceiverClosed
			case <-r.down:
				return dst, r.downErr
			case <-ctx.Done():
				return dst, ctx.Err()
			}
		}
		dst = append(dst, r.convert(msg))
		if r.backlog == nil {
			return dst, nil
		}
	}
	return dst, nil
}

// ended returns why ReceiveBatch must not wait (any more), or nil.
func (r *DirectReceiver) ended(ctx context.Context) error {
	select {
	case <-r.closed:
		return ErrReceiverClosed
	case <-r.down:
		return r.downErr
	case <-ctx.Done():
		return ctx.Err()
	default:
		return nil
	}
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

// Close stops receiving; messages not handed out yet are dropped (the
// client frees them at once: nothing reads its buffer any more).
func (r *DirectReceiver) Close(context.Context) error {
	var err error
	r.closeOnce.Do(func() {
		close(r.closed)
		var incomplete *solace.IncompleteMessageDeliveryError
		if e := r.dr.Terminate(0); e != nil && !isIllegalState(e) && !errors.As(e, &incomplete) {
			err = e
		}
	})
	return err
}
