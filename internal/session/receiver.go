package session

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"solace.dev/go/messaging"
	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/config"
	"solace.dev/go/messaging/pkg/solace/message"
	"solace.dev/go/messaging/pkg/solace/resource"

	"github.com/connect-solace/connect-solace/internal/session/ccsmp"
)

// Outcome is how a received message is settled with the broker.
type Outcome int

// Settlement outcomes. Accepted removes the message from the queue, Failed
// asks for redelivery (counting towards the queue's max redelivery count) and
// Rejected moves it to the queue's dead message queue, or discards it.
const (
	Accepted Outcome = iota
	Failed
	Rejected
)

// outcomes names each Outcome and gives the client's value for it, in its Go
// API and in the native path (CCSMP). An Outcome out of range settles as
// Accepted.
var outcomes = [...]struct {
	name   string
	api    config.MessageSettlementOutcome
	native ccsmp.Outcome
}{
	Accepted: {"accepted", config.PersistentReceiverAcceptedOutcome, ccsmp.Accepted},
	Failed:   {"failed", config.PersistentReceiverFailedOutcome, ccsmp.Failed},
	Rejected: {"rejected", config.PersistentReceiverRejectedOutcome, ccsmp.Rejected},
}

func (o Outcome) valid() bool { return o >= 0 && int(o) < len(outcomes) }

func (o Outcome) String() string {
	if !o.valid() {
		return fmt.Sprintf("outcome(%d)", int(o))
	}
	return outcomes[o].name
}

// native is the Go API's value of o.
func (o Outcome) native() config.MessageSettlementOutcome {
	if !o.valid() {
		o = Accepted
	}
	return outcomes[o].api
}

// ccsmp is the native path's value of o.
func (o Outcome) ccsmp() ccsmp.Outcome {
	if !o.valid() {
		o = Accepted
	}
	return outcomes[o].native
}

// ReplayMode selects where a receiver starts reading a replay log.
type ReplayMode int

// Replay modes.
const (
	ReplayNone ReplayMode = iota
	ReplayAll
	ReplayFromTime
	ReplayAfterMessageID
)

// Replay requests message replay when a flow binds.
type Replay struct {
	Mode ReplayMode
	// Time is the start for ReplayFromTime.
	Time time.Time
	// MessageID is a replication group message id ("rmid1:…") for
	// ReplayAfterMessageID; replay starts after that message.
	MessageID string
}

// ReceiverConfig describes a set of consumer flows on one queue.
type ReceiverConfig struct {
	// Queue is the durable queue to bind to.
	Queue string
	// Flows is the number of consumer flows bound to Queue; values below 1
	// mean 1. Several flows only make sense on a non-exclusive queue.
	Flows int
	// Selector is an optional SQL-92 message selector.
	Selector string
	// Replay requests replay on bind; the zero value asks for none.
	Replay Replay
	// Buffer bounds the messages received and waiting for Receive across
	// all flows; values below 1 mean 256. When it is full the flows are
	// paused until it is half empty, and the API's own buffer then closes
	// the broker window. (It can be exceeded by about one message per flow,
	// delivered while a pause takes effect.)
	Buffer int
	// OnStaleDropped, when set, is called (on the Receive goroutine) for
	// every message dropped because it was delivered before a connection
	// loss; the broker redelivers it. Plugins count it in a metric.
	OnStaleDropped func()
	// OnNativeFallback, when set, is called (on the receiving goroutine)
	// for every message converted through the Go API alone
	// because the native read (native.go) cannot be used with this client:
	// such messages lack TTL, expiration, delivery count and reply-to.
	// Plugins count it in a metric; the receiver logs the reason once.
	OnNativeFallback func()
	// StallCheck is how often the receiver compares each flow's receive
	// count in CCSMP with what the Go client handed over, to find and
	// rebind a flow whose messages the client stranded (see stall.go); zero
	// means DefaultStallCheck, a negative value turns the check off. It
	// needs the native path: on the Go-API fallback there is no check.
	StallCheck time.Duration
	// OnStallRecovered, when set, is called for every stalled flow the
	// receiver rebound. Plugins count it in a metric; the receiver logs
	// each with its numbers.
	OnStallRecovered func()
}

// Errors reported by a Receiver.
var (
	// ErrReceiverDown means a flow was torn down (session lost for good,
	// queue deleted or shut): the receiver must be closed and rebuilt.
	ErrReceiverDown = errors.New("solace receiver flow is down")
	// ErrReceiverClosed is returned after Close.
	ErrReceiverClosed = errors.New("solace receiver is closed")
	// ErrStaleFlow wraps a settlement failure for a message delivered before
	// the connection was lost. The broker redelivers such messages, so the
	// failure loses nothing and must not fail the pipeline.
	ErrStaleFlow = errors.New("message belongs to a flow that was lost")
)

// Delivery is one message a Receiver hands out: the Inbound, which Read
// fills in, and a slot of the caller's own.
type Delivery[T any] struct {
	Inbound
	// Slot is the caller's; the receiver never touches it. The solace input
	// keeps there the message it built, as an array of one so that it hands
	// that out as a batch of one (Slot[:]) without allocating a batch.
	Slot [1]T
}

// Receiver consumes a queue through one or more client-acknowledged flows.
// Messages are handed over through a bounded queue fed by each flow's
// ReceiveAsync callback, so no goroutine is ever parked in a blocking
// receive that could strand a message: a message is either in that queue,
// given to the caller, or still owned by the API, and on Close every message
// not settled is left unacknowledged for the broker to redeliver.
//
// The queue is a slice under a mutex with two signal channels rather than a
// channel of messages: the reader takes everything waiting (up to its batch)
// in one step and is woken once per burst, not once per message.
type Receiver[T any] struct {
	svc   solace.MessagingService
	queue string
	cfg   ReceiverConfig
	// flows[i] is flow i; a rebound flow replaces its entry (flowsMu).
	flowsMu sync.Mutex
	flows   []*flow

	mu      sync.Mutex
	waiting []*Delivery[T] // waiting[head:] are not yet handed out
	head    int
	limit   int           // flows are paused when this many wait
	paused  []*flow       // flows paused by onMessage, resumed by take
	ready   chan struct{} // signalled when waiting becomes non-empty
	closed  chan struct{}

	downOnce sync.Once
	down     chan struct{}
	downErr  error

	// base is the receiver's start; dispatch and loss times are kept as
	// monotonic offsets from it (see lostAt).
	base time.Time
	// lostAt is the offset of the latest connection loss: when the client
	// raised its reconnection-attempt event. A message dispatched to
	// onMessage before it (Inbound.at) belongs to a flow binding the broker
	// has forgotten; settling it after the reconnect is harmless, and a copy
	// still waiting is dropped in favour of the broker's redelivery.
	//
	// It is the event's own timestamp, not the time the listener ran: the
	// Go client takes that timestamp on CCSMP's context thread, in order
	// with the messages it queues for dispatch, and only then hands the
	// event to its event goroutine, which runs it at some later point. A
	// count bumped by the listener (what this was) raced with dispatch: under
	// load the listener ran tens of milliseconds late, the rebound flows'
	// first messages were tagged with the old count and then dropped as
	// stale, and the broker kept them as delivered and unacknowledged for as
	// long as the flow stayed bound.
	lostAt     atomic.Int64
	listenerID uint64
	closeOnce  sync.Once
	closeErr   error
	onStale    func()

	// The stall watch (stall.go): stopWatch ends it, watchDone is closed
	// when it has ended (nil: not started).
	onStallRecovered func()
	stopWatch        context.CancelFunc
	watchDone        chan struct{}

	conv converter
}

// converter reads received messages (Inbound.Read) for the flows of one
// receiver.
type converter struct {
	// mu serialises conversions (on whichever goroutines read), which
	// share the flows' destCaches.
	mu sync.Mutex
	// native is nil when the native read cannot be used at all.
	native     nativeReader
	onFallback func()
	log        Logger
	// fallbackLogged makes a per-message fallback (a message type whose
	// handle is unreachable) log once per receiver.
	fallbackLogged atomic.Bool
}

type flow struct {
	conv *converter
	id   int
	pr   solace.PersistentMessageReceiver
	// handle is the flow's CCSMP handle when the native read is on and
	// flowHandleOf found it (0: settle through the Go API). Atomic: it is
	// set once the flow has started, and a flow rebound after a stall
	// (stall.go) may deliver, and have messages settled, before that.
	handle atomic.Uintptr
	// dest is used by Read alone, under converter.mu.
	dest destCache
	// paused is guarded by the receiver's mu.
	paused bool
	// seen counts the messages the client handed to onMessage, for the
	// stall check, which alone uses stall.
	seen  atomic.Uint64
	stall stallDetector
	// retired is set when the flow is terminated to be rebound: its
	// messages are then stale (the broker redelivers them).
	retired atomic.Bool
}

// NewReceiver binds cfg.Flows flows to cfg.Queue on s and starts them. It
// honours ctx while binding; on failure every flow already bound is
// terminated again. The receiver goes down with the session. T is the type
// of the caller's slot in every Delivery.
func NewReceiver[T any](ctx context.Context, s *Session, cfg ReceiverConfig) (*Receiver[T], error) {
	native, err := probeNative(s.svc)
	if err != nil {
		logFallbackOnce(s.log, err)
	}
	r, err := newReceiver[T](ctx, s.svc, cfg, native, s.log)
	if err != nil {
		return nil, err
	}
	go s.downWith(r.closed, r.markDown)
	return r, nil
}

// fallbackLog makes the start-up fallback log once per process: the client
// linked in does not change.
var fallbackLog sync.Once

func logFallbackOnce(log Logger, why error) {
	fallbackLog.Do(func() {
		log.Warnf("Solace input: reading messages through the Go client's API only, without TTL, expiration, "+
			"delivery count and reply-to metadata, at a higher CPU cost, and without the check for flows whose messages "+
			"the client stranded: %v", why)
	})
}

// newReceiver binds the flows; native nil converts every message through
// the Go API.
func newReceiver[T any](ctx context.Context, svc solace.MessagingService, cfg ReceiverConfig, native nativeReader, log Logger) (*Receiver[T], error) {
	log = orNop(log)
	if cfg.Queue == "" {
		return nil, errors.New("receiver needs a queue name")
	}
	n := max(cfg.Flows, 1)
	buf := cfg.Buffer
	if buf < 1 {
		buf = 256
	}
	r := &Receiver[T]{
		svc:     svc,
		queue:   cfg.Queue,
		cfg:     cfg,
		waiting: make([]*Delivery[T], 0, 2*buf),
		limit:   buf,
		ready:   make(chan struct{}, 1),
		closed:  make(chan struct{}),
		down:    make(chan struct{}),
		onStale: cfg.OnStaleDropped,
		base:    time.Now(),

		onStallRecovered: cfg.OnStallRecovered,

		conv: converter{native: native, onFallback: cfg.OnNativeFallback, log: log},
	}
	r.lostAt.Store(math.MinInt64)
	r.listenerID = svc.AddReconnectionAttemptListener(func(ev solace.ServiceEvent) {
		r.noteLoss(ev.GetTimestamp())
	})

	for i := range n {
		f, err := r.startFlow(ctx, i, cfg)
		if err != nil {
			_ = r.Close(context.Background())
			return nil, fmt.Errorf("binding flow %d of %d to queue %q: %w", i+1, n, cfg.Queue, err)
		}
		r.flows = append(r.flows, f)
	}
	if every := cfg.StallCheck; native != nil && every >= 0 {
		if every == 0 {
			every = DefaultStallCheck
		}
		var wctx context.Context
		wctx, r.stopWatch = context.WithCancel(context.Background())
		r.watchDone = make(chan struct{})
		go r.watchStalls(wctx, every)
	}
	return r, nil
}

func (r *Receiver[T]) startFlow(ctx context.Context, id int, cfg ReceiverConfig) (*flow, error) {
	b := r.svc.CreatePersistentMessageReceiverBuilder().
		WithMessageClientAcknowledgement().
		WithRequiredMessageOutcomeSupport(
			config.PersistentReceiverAcceptedOutcome,
			config.PersistentReceiverFailedOutcome,
			config.PersistentReceiverRejectedOutcome)
	if cfg.Selector != "" {
		b = b.WithMessageSelector(cfg.Selector)
	}
	switch cfg.Replay.Mode {
	case ReplayAll:
		b = b.WithMessageReplay(config.ReplayStrategyAllMessages())
	case ReplayFromTime:
		b = b.WithMessageReplay(config.ReplayStrategyTimeBased(cfg.Replay.Time))
	case ReplayAfterMessageID:
		id, err := messaging.ReplicationGroupMessageIDOf(cfg.Replay.MessageID)
		if err != nil {
			return nil, fmt.Errorf("parsing replay message id %q: %w", cfg.Replay.MessageID, err)
		}
		b = b.WithMessageReplay(config.ReplayStrategyReplicationGroupMessageID(id))
	}
	// The access type in the resource only matters when the API provisions
	// the queue, which we never ask it to do.
	pr, err := b.Build(resource.QueueDurableNonExclusive(cfg.Queue))
	if err != nil {
		return nil, fmt.Errorf("building receiver: %w", err)
	}
	f := &flow{conv: &r.conv, id: id, pr: pr}
	pr.SetTerminationNotificationListener(func(ev solace.TerminationEvent) {
		r.markDown(fmt.Errorf("%w: flow %d on queue %q: %s: %w", ErrReceiverDown, id, r.queue, ev.GetMessage(), ev.GetCause()))
	})
	if err := pr.ReceiveAsync(func(msg message.InboundMessage) { r.onMessage(f, msg) }); err != nil {
		return nil, fmt.Errorf("registering message handler: %w", err)
	}

	started := pr.StartAsync()
	select {
	case err := <-started:
		if err != nil {
			return nil, err
		}
	case <-ctx.Done():
		// Start takes no context; stop the flow once it is up so that it
		// does not hold messages nobody reads.
		go func() {
			if err := <-started; err == nil {
				_ = pr.Terminate(0)
			}
		}()
		return nil, ctx.Err()
	}
	if r.conv.native != nil {
		// Before the first message can be settled: Settle reads it
		// unlocked. A message converted before this (none: the handler
		// queues it, and only a taken message is settled) would go
		// through the Go API.
		f.setHandle(ccsmp.FlowHandleOf(pr, cfg.Queue))
	}
	return f, nil
}

func (f *flow) setHandle(h uintptr, ok bool) {
	if ok {
		f.handle.Store(h)
	}
}

// onMessage runs on the API's dispatch goroutine for this flow. It only
// queues the message: the conversion happens when the caller reads it (see
// Inbound.Read), so that this goroutine keeps well ahead of the broker
// and the API's own buffer stays near empty. Were the handler slower than
// delivery, that buffer would hover at its watermarks, where v1.10.1's
// stopFlow and startFlow race (one on the context thread, one on the
// dispatch goroutine) and can leave the broker flow open with the stopped
// flag set: the buffer then overflows ("Unable to push message to buffer")
// and the dropped messages sit unacknowledged until the flow is bound again.
// (A reader faster than a converting handler made that happen within
// seconds.) For the same reason the handler never blocks: when the
// hand-off queue reaches its limit the flow is paused (the API then stops
// calling back, its buffer fills to its high-water mark and it stops the
// broker flow once, with no startFlow running), and take resumes it once
// the queue is down to half.
func (r *Receiver[T]) onMessage(f *flow, msg message.InboundMessage) {
	f.seen.Add(1)
	if r.isClosed() || f.retired.Load() {
		msg.Dispose()
		return
	}
	// Taken here, not when converted: a message is never stamped earlier
	// than CCSMP received it, so one stamped before a loss surely came
	// from the lost binding (see lostAt).
	now := time.Now()
	in := &Delivery[T]{Inbound: Inbound{msg: msg, flow: f, at: r.since(now), ReceiveTimestamp: now}}
	r.mu.Lock()
	if r.isClosed() {
		r.mu.Unlock()
		// Never settled: the broker redelivers it once the flow unbinds.
		msg.Dispose()
		return
	}
	if len(r.waiting) == cap(r.waiting) && r.head > 0 {
		// Reuse the space already handed out. With room for twice the
		// limit this happens at most once per limit messages.
		n := copy(r.waiting, r.waiting[r.head:])
		clear(r.waiting[n:])
		r.waiting, r.head = r.waiting[:n], 0
	}
	r.waiting = append(r.waiting, in)
	count := len(r.waiting) - r.head
	if count >= r.limit && !f.paused {
		// Under the lock, so that take's Resume cannot overtake it.
		// Pause only sets a flag for the API's loop; it does not block.
		f.paused = true
		r.paused = append(r.paused, f)
		_ = f.pr.Pause()
	}
	r.mu.Unlock()
	if count == 1 {
		signal(r.ready)
	}
}

// Read converts the received message into in: its payload, properties,
// timestamps and, in in.Meta, its attributes, appended to meta[:0]. meta is
// the caller's storage (nil: Read allocates it): a caller that is done with
// in.Meta may clear it and pass it to the next Read, so that attributes cost
// neither an allocation nor room in every message waiting for the pipeline.
// Read reads natively when it can, else through the Go API, counting the
// fallback.
func (in *Inbound) Read(meta []MetaField) {
	c := in.flow.conv
	in.Meta = meta[:0]
	c.mu.Lock()
	defer c.mu.Unlock()
	dc := &in.flow.dest
	if c.native == nil || !c.native.read(in, dc) {
		if c.native != nil && !c.fallbackLogged.Swap(true) {
			c.log.Warnf("Solace input: the native handle of a %T message is unreachable; such messages are read "+
				"through the Go client's API only, without TTL, expiration, delivery count and reply-to metadata", in.msg)
		}
		if c.onFallback != nil {
			c.onFallback()
		}
		readAPI(in, dc)
	}
}

// signal sets c (capacity 1) without blocking.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

func (r *Receiver[T]) markDown(err error) {
	r.downOnce.Do(func() {
		r.downErr = err
		close(r.down)
	})
}

// Receive returns the next message, waiting until one arrives, ctx ends, the
// receiver goes down (ErrReceiverDown) or it is closed.
func (r *Receiver[T]) Receive(ctx context.Context) (*Delivery[T], error) {
	ins, err := r.ReceiveBatch(ctx, nil, 1)
	if err != nil {
		return nil, err
	}
	return ins[0], nil
}

// ReceiveBatch appends to dst at least one and at most upTo messages (upTo
// below 1 means 1): those already waiting, or else the next to arrive. It
// waits until one arrives, ctx ends, the receiver goes down
// (ErrReceiverDown) or it is closed.
func (r *Receiver[T]) ReceiveBatch(ctx context.Context, dst []*Delivery[T], upTo int) ([]*Delivery[T], error) {
	n0 := len(dst)
	for {
		dst = r.take(dst, upTo)
		if len(dst) > n0 {
			return dst, nil
		}
		select {
		case <-r.ready:
		case <-ctx.Done():
			return dst, ctx.Err()
		case <-r.down:
			return dst, r.downErr
		case <-r.closed:
			return dst, ErrReceiverClosed
		}
	}
}

// TryReceive returns a message that is already waiting, without blocking.
func (r *Receiver[T]) TryReceive() (*Delivery[T], bool) {
	ins := r.take(nil, 1)
	if len(ins) == 0 {
		return nil, false
	}
	return ins[0], true
}

// take moves up to max waiting messages (at least 1) to dst, dropping
// stale ones.
func (r *Receiver[T]) take(dst []*Delivery[T], upTo int) []*Delivery[T] {
	upTo = max(upTo, 1)
	for {
		r.mu.Lock()
		n := min(upTo, len(r.waiting)-r.head)
		if n == 0 {
			r.mu.Unlock()
			return dst
		}
		start := len(dst)
		dst = append(dst, r.waiting[r.head:r.head+n]...)
		clear(r.waiting[r.head : r.head+n])
		r.head += n
		rest := len(r.waiting) - r.head
		if rest == 0 {
			r.waiting, r.head = r.waiting[:0], 0
		}
		if len(r.paused) > 0 && rest <= r.limit/2 {
			for _, f := range r.paused {
				f.paused = false
				// Fails only once the flow is terminating.
				_ = f.pr.Resume()
			}
			clear(r.paused)
			r.paused = r.paused[:0]
		}
		more := rest > 0
		r.mu.Unlock()
		if more {
			// Keep the signal up for the next call (or another reader).
			signal(r.ready)
		}
		kept := dst[:start]
		for _, in := range dst[start:] {
			if r.fresh(in) {
				kept = append(kept, in)
			}
		}
		dst = kept
		if len(dst) > start || !more {
			return dst
		}
	}
}

// fresh drops a message that was still waiting in the hand-off channel when
// the connection was lost: the broker redelivers every message of the dead
// flow, flagged, so handing out the old copy would only duplicate it.
func (r *Receiver[T]) fresh(in *Delivery[T]) bool {
	if !r.stale(&in.Inbound) {
		return true
	}
	if r.onStale != nil {
		r.onStale()
	}
	r.Release(in)
	return false
}

// stale reports whether in was dispatched before the latest connection
// loss. A message dispatched after the loss but before the listener ran is
// fresh, and so is, until then, an old copy: the listener's delay can only
// let a duplicate through, never strand a message of the new binding.
// A message of a flow rebound after a stall is stale too.
func (r *Receiver[T]) stale(in *Inbound) bool {
	return in.at < r.lostAt.Load() || (in.flow != nil && in.flow.retired.Load())
}

// noteLoss records a connection loss that the client reported at t.
func (r *Receiver[T]) noteLoss(t time.Time) {
	at := r.since(t)
	for {
		cur := r.lostAt.Load()
		if at <= cur || r.lostAt.CompareAndSwap(cur, at) {
			return
		}
	}
}

// since is t as a monotonic offset from the receiver's start.
func (r *Receiver[T]) since(t time.Time) int64 { return int64(t.Sub(r.base)) }

// Down is closed when a flow has been torn down for good.
func (r *Receiver[T]) Down() <-chan struct{} { return r.down }

// Settle settles in on the flow that delivered it and releases its native
// memory. A failure for a message delivered before a connection loss, or
// after Close, wraps ErrStaleFlow: the broker redelivers such a message.
func (r *Receiver[T]) Settle(in *Delivery[T], o Outcome) error {
	if errs := r.settle([]*Delivery[T]{in}, o, nil); len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// SettleBatch settles every message of ins with outcome o, as Settle does
// each, and returns the failures (none: nil), each wrapping ErrStaleFlow
// where Settle's would. The native path settles and frees up to settleChunk
// messages, across flows, in one cgo call: a batch from the pipeline costs
// one crossing into C rather than one per message.
func (r *Receiver[T]) SettleBatch(ins []*Delivery[T], o Outcome) []error {
	var errs []error
	for len(ins) > 0 {
		n := min(len(ins), settleChunk)
		errs = r.settle(ins[:n], o, errs)
		ins = ins[n:]
	}
	return errs
}

// settle settles ins, at most settleChunk messages, appending the failures
// to errs.
func (r *Receiver[T]) settle(ins []*Delivery[T], o Outcome, errs []error) []error {
	sc := settleScratches.Get().(*settleScratch)
	defer settleScratches.Put(sc)
	native := &sc.native
	n := 0
	closed := r.isClosed()
	for _, in := range ins {
		if in == nil || in.msg == nil {
			errs = append(errs, errors.New("settling a message that was not received"))
			continue
		}
		f := in.flow
		if f.handle.Load() != 0 && in.hasMsgID && !closed && f.pr.IsRunning() {
			// Through CCSMP directly (see settleNative). Only while the
			// flow runs, as the Go API checks too; a handle whose flow was
			// destroyed since is refused by CCSMP (its handles carry a
			// generation, so a new flow never answers to an old one's).
			native[n] = &in.Inbound
			n++
			continue
		}
		err := f.pr.Settle(in.msg, o.native())
		in.msg.Dispose()
		if err != nil {
			errs = append(errs, r.settleErr(&in.Inbound, o, err))
		}
	}
	if n > 0 {
		errs = r.settleNative(sc, n, o, errs)
		clear(native[:n])
	}
	return errs
}

// settleErr wraps the failure to settle in, with ErrStaleFlow for a message
// delivered before a connection loss or settled after Close.
func (r *Receiver[T]) settleErr(in *Inbound, o Outcome, err error) error {
	f := in.flow
	if r.stale(in) || r.isClosed() {
		return fmt.Errorf("settling %s on flow %d of queue %q: %w: %w", o, f.id, r.queue, ErrStaleFlow, err)
	}
	return fmt.Errorf("settling %s on flow %d of queue %q: %w", o, f.id, r.queue, err)
}

// Unread puts in, taken from r and not settled, back in front of the
// messages waiting to be received, so that the next Receive hands it out
// again (unless a connection loss made it stale meanwhile). The input's
// de-duplication holds back a copy of a message the pipeline is still
// processing and gives it back this way when that one fails. After Close the
// message is released instead.
func (r *Receiver[T]) Unread(in *Delivery[T]) {
	r.mu.Lock()
	if r.isClosed() {
		r.mu.Unlock()
		r.Release(in)
		return
	}
	if r.head > 0 {
		r.head--
		r.waiting[r.head] = in
	} else {
		r.waiting = slices.Insert(r.waiting, 0, in)
	}
	r.mu.Unlock()
	signal(r.ready)
}

// Release gives up a message without settling it, leaving it to the broker
// to redeliver when the flow unbinds.
func (r *Receiver[T]) Release(in *Delivery[T]) {
	if in != nil && in.msg != nil {
		in.msg.Dispose()
	}
}

func (r *Receiver[T]) isClosed() bool {
	select {
	case <-r.closed:
		return true
	default:
		return false
	}
}

// Close stops every flow without settling anything it still holds: messages
// waiting in the hand-off channel or the API's buffer, and messages the
// caller has not settled yet, are redelivered by the broker once the flows
// unbind. Settling a message after Close fails with ErrStaleFlow.
func (r *Receiver[T]) Close(ctx context.Context) error {
	r.closeOnce.Do(func() {
		close(r.closed)
		r.svc.RemoveReconnectionAttemptListener(r.listenerID)
		var errs []error
		if r.stopWatch != nil {
			r.stopWatch()
			select {
			case <-r.watchDone:
			case <-ctx.Done():
				errs = append(errs, ctx.Err())
			}
		}
		r.flowsMu.Lock()
		flows := slices.Clone(r.flows)
		r.flowsMu.Unlock()
		var wg sync.WaitGroup
		off := len(errs)
		errs = append(errs, make([]error, len(flows))...)
		for i, f := range flows {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Pausing first stops dispatch into our handler; a zero grace
				// period then drops (without acking) what the API buffered.
				_ = f.pr.Pause()
				if err := f.pr.Terminate(0); err != nil && !isIncompleteDelivery(err) && !isIllegalState(err) {
					errs[off+i] = fmt.Errorf("terminating flow %d: %w", f.id, err)
				}
			}()
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
			errs = append(errs, ctx.Err())
		}
		r.mu.Lock()
		left := r.waiting[r.head:]
		r.waiting, r.head = nil, 0
		r.mu.Unlock()
		for _, in := range left {
			r.Release(in)
		}
		r.closeErr = errors.Join(errs...)
	})
	return r.closeErr
}

func isIncompleteDelivery(err error) bool {
	var e *solace.IncompleteMessageDeliveryError
	return errors.As(err, &e)
}

func isIllegalState(err error) bool {
	var e *solace.IllegalStateError
	return errors.As(err, &e)
}
