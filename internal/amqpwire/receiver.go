package amqpwire

import (
	"context"
	"fmt"
	"sync"
)

// Receiving is written here rather than left to go-amqp for the same reason
// as sending: go-amqp hands every transfer from its connection reader to
// its session mux to the link's queue (three goroutines, a Message with
// its sections allocated piecemeal), and settles through the same chain in
// reverse. Here the reader copies a delivery's bytes once into the link's
// queue, the consumer decodes them itself, and a settlement or a credit
// grant is a frame appended under the connection's mutex. go-amqp's
// automatic credit renewal also overlaps deliveries in flight, which stalls
// links on RabbitMQ 3.10 (see jms.CreditWindow); this receiver grants only
// what its caller asks for.

// DefaultMaxMessageSize bounds a received message when ReceiverOptions sets
// no limit: a peer cannot make the client buffer without end.
const DefaultMaxMessageSize = 256 << 20

// creditOverrunMargin is how many deliveries past twice its largest grant
// a link takes before it detaches the peer for sending without credit
// (see Receiver.transferLocked).
const creditOverrunMargin = 64

// ReceiverOptions describe a receiver link.
type ReceiverOptions struct {
	Name   string // random when empty
	Source string // the source address
	// Durability is the source's terminus durability: 0 none, 1
	// configuration, 2 unsettled-state.
	Durability uint32
	// ExpiryPolicy is the source's expiry policy ("never", "link-detach",
	// ...); empty sends none, which means session-end.
	ExpiryPolicy string
	// Capabilities are the source's capabilities.
	Capabilities []string
	// Selector, when set, is sent as the apache.org:selector-filter:string
	// source filter; HasFilter tells whether the peer echoed it.
	Selector string
	// MaxMessageSize bounds a message's encoded size;
	// DefaultMaxMessageSize when 0.
	MaxMessageSize uint64
}

// Incoming is one delivery received on a link.
type Incoming struct {
	// Payload is the encoded message (its sections), owned by the caller.
	Payload []byte
	// ID is the delivery-id to settle it with.
	ID uint32
	// Settled says the sender settled it already (nothing to settle).
	Settled bool
	// Aborted says the sender aborted it: Payload is empty and the
	// delivery needs no settlement, but it used a credit.
	Aborted bool
}

// Receiver is a receiver link. The connection's reader puts deliveries on
// its queue; Receive takes them off. Credit is only what IssueCredit (or
// Settle) grants.
type Receiver struct {
	s *Session
	linkEnds
	remoteClosed bool          // the peer's detach closed the link
	closed       chan struct{} // closed once the peer's detach (or the session's end) arrived
	isClosed     bool
	remoteErr    *Error // the peer's detach error
	filterKeys   []string
	maxSize      uint64

	deliveryCount uint32 // the sender's, as we count it
	credit        int64  // credit left as we count it (below 0 when the peer sent past it)
	maxCredit     int64  // the largest link-credit we sent, which bounds how far past it the peer may go

	partial   []byte // the frames so far of a multi-frame delivery
	inPartial bool
	partialID uint32
	partialSt bool // settled flag of the partial delivery

	qmu   sync.Mutex
	queue []Incoming
	qhead int
	qerr  error
	wake  chan struct{}
}

// NewReceiver attaches a receiver link and waits for the peer's attach. A
// refusal is a *LinkError (or a *SessionError, when the broker ends the
// whole session) carrying the broker's condition. The link starts without
// credit.
func (s *Session) NewReceiver(ctx context.Context, o ReceiverOptions) (*Receiver, error) {
	return attachLink(ctx, s, o.Name, "receiver-", func(h uint32, name string) (*Receiver, error) {
		if _, dup := s.receiverByName[name]; dup {
			return nil, fmt.Errorf("a receiver link named %q is already attached on the session", name)
		}
		r := &Receiver{s: s, linkEnds: linkEnds{name: name, handle: h}, closed: make(chan struct{}), wake: make(chan struct{}, 1),
			maxSize: o.MaxMessageSize}
		if r.maxSize == 0 {
			r.maxSize = DefaultMaxMessageSize
		}
		var err error
		c := s.c
		if c.wbuf, err = appendReceiverAttach(c.wbuf, s.ch, receiverAttachParams{name: name, handle: h, source: o.Source,
			durability: o.Durability, expiryPolicy: o.ExpiryPolicy, selector: o.Selector, capabilities: o.Capabilities,
			maxMessageSize: r.maxSize}); err != nil {
			return nil, err
		}
		s.receivers[h], s.receiverByName[name] = r, r
		return r, nil
	}, func(r *Receiver) (bool, error) { return r.attached, r.err }, func(r *Receiver) {
		// Detached without closing: closing would delete a durable
		// subscription the caller only gave up attaching to.
		r.detachSelfLocked(false)
	})
}

// receiverAttachedLocked handles the peer's attach (as sender) of one of
// our receiver links.
func (s *Session) receiverAttachedLocked(a *attachFrame) error {
	r := s.receiverByName[a.name]
	if r == nil || r.hasRemote {
		return unknownAttach(a)
	}
	s.remoteReceivers[a.handle] = r
	if !r.peerAttachedLocked(a, a.hasSource) {
		return nil
	}
	r.deliveryCount = a.initialDeliveryCount
	r.filterKeys = a.filterKeys
	s.c.notifyLocked()
	return nil
}

func (s *Session) receiverDetachedLocked(r *Receiver, dt *closingFrame) {
	c := s.c
	delete(s.remoteReceivers, dt.handle)
	r.remoteClosed = dt.closed
	r.peerDetachedLocked(s, dt, "source")
	r.remoteErr = dt.err
	r.detachLocked(&LinkError{Remote: dt.err})
	r.markClosed()
	s.releaseReceiverLocked(r)
	c.notifyLocked()
}

func (s *Session) releaseReceiverLocked(r *Receiver) {
	forgetLinkLocked(s, &r.linkEnds, r, s.receivers, s.receiverByName)
}

// transferLocked takes one transfer frame of the peer.
func (s *Session) transferLocked(t *transferFrame, payload []byte) error {
	c := s.c
	s.nextIncomingID++
	if s.incomingLeft == 0 {
		return &Error{Condition: "amqp:session:window-violation", Description: "transfer beyond the session's incoming window"}
	}
	s.incomingLeft--
	if s.incomingLeft < ourIncomingWindow/2 {
		c.wbuf = appendFlow(c.wbuf, s.ch, s.nextIncomingID, ourIncomingWindow, s.nextOutgoingID, ourOutgoingWindow, nil)
		s.incomingLeft = ourIncomingWindow
		c.kickLocked()
	}
	r := s.remoteReceivers[t.handle]
	if r == nil || r.err != nil {
		if s.remoteLinks[t.handle] != nil {
			return &Error{Condition: CondNotAllowed, Description: "transfer on a sender link"}
		}
		return nil // a link we detached
	}
	return r.transferLocked(t, payload)
}

func (r *Receiver) transferLocked(t *transferFrame, payload []byte) error {
	if !r.inPartial {
		if !t.hasID {
			return &Error{Condition: CondNotAllowed, Description: "first transfer of a delivery without a delivery-id"}
		}
		r.partialID, r.partialSt = t.deliveryID, t.settled
		r.deliveryCount++
		r.credit--
		if -r.credit > 2*r.maxCredit+creditOverrunMargin {
			// Sending past the credit is tolerated a little: RabbitMQ 3.x
			// sends up to the deliveries in flight too many (see
			// jms.CreditWindow). Far past it the queue would grow without
			// end.
			r.partial, r.inPartial = nil, false
			r.failLocked(&Error{Condition: CondTransferLimitExceeded,
				Description: fmt.Sprintf("%d deliveries past the link's credit", -r.credit)})
			return nil
		}
	} else if t.settled {
		r.partialSt = true
	}
	if t.aborted {
		r.partial, r.inPartial = nil, false
		r.push(Incoming{ID: r.partialID, Settled: true, Aborted: true})
		return nil
	}
	if uint64(len(r.partial))+uint64(len(payload)) > r.maxSize {
		r.partial, r.inPartial = nil, false
		r.failLocked(&Error{Condition: CondMessageSizeExceeded,
			Description: fmt.Sprintf("a message of more than %d bytes", r.maxSize)})
		return nil
	}
	if t.more {
		if !r.inPartial {
			r.partial = make([]byte, 0, 2*len(payload))
		}
		r.partial = append(r.partial, payload...)
		r.inPartial = true
		return nil
	}
	var msg []byte
	if r.inPartial {
		msg = append(r.partial, payload...)
		r.partial, r.inPartial = nil, false
	} else {
		msg = make([]byte, len(payload))
		copy(msg, payload)
	}
	r.push(Incoming{Payload: msg, ID: r.partialID, Settled: r.partialSt})
	return nil
}

// failLocked detaches the link with a local error, which Receive reports.
func (r *Receiver) failLocked(e *Error) {
	c := r.s.c
	if !r.detachSent && r.s.err == nil && c.err == nil {
		r.detachSent = true
		c.wbuf = appendDetachError(c.wbuf, r.s.ch, r.handle, e)
		c.kickLocked()
	}
	r.detachLocked(&LinkError{Local: true, Cause: e})
}

func (r *Receiver) markClosed() {
	if !r.isClosed {
		r.isClosed = true
		close(r.closed)
	}
}

func (r *Receiver) push(in Incoming) {
	r.qmu.Lock()
	if r.qhead > 0 && r.qhead == len(r.queue) {
		r.queue, r.qhead = r.queue[:0], 0
	}
	r.queue = append(r.queue, in)
	r.qmu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *Receiver) detachLocked(err error) {
	if r.err == nil {
		r.err = err
	}
	r.qmu.Lock()
	if r.qerr == nil {
		r.qerr = r.err
	}
	r.qmu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
	r.s.c.notifyLocked()
}

// Name is the link's name.
func (r *Receiver) Name() string { return r.name }

// HasFilter reports whether the peer's attach echoed the source filter
// named name.
func (r *Receiver) HasFilter(name string) bool {
	for _, k := range r.filterKeys {
		if k == name {
			return true
		}
	}
	return false
}

// Err is why the link ended, nil while it is attached.
func (r *Receiver) Err() error {
	r.s.c.mu.Lock()
	defer r.s.c.mu.Unlock()
	return r.err
}

// Receive waits for the next delivery. Once the link has ended it returns
// why (a *LinkError, *SessionError or *ConnError), even with unsettled
// deliveries still queued: they cannot be settled any more, and the peer
// redelivers them. Queued deliveries the peer sent settled are still
// returned first: it never sends those again. One goroutine receives at
// a time: a wake-up is one token, which a second waiter could miss.
func (r *Receiver) Receive(ctx context.Context) (Incoming, error) {
	for {
		in, ok, err := r.TryReceive()
		if ok || err != nil {
			return in, err
		}
		select {
		case <-r.wake:
		case <-ctx.Done():
			return Incoming{}, ctx.Err()
		}
	}
}

// TryReceive returns a queued delivery without waiting; ok is false when
// none is queued.
func (r *Receiver) TryReceive() (in Incoming, ok bool, err error) {
	r.qmu.Lock()
	defer r.qmu.Unlock()
	if r.qerr != nil {
		// Deliveries the broker settled on sending are ours alone: it
		// never redelivers them, so they are still handed out. The
		// unsettled ones are dropped (it redelivers those).
		for r.qhead < len(r.queue) {
			in = r.queue[r.qhead]
			r.queue[r.qhead] = Incoming{}
			r.qhead++
			if in.Settled && !in.Aborted {
				return in, true, nil
			}
		}
		r.queue, r.qhead = nil, 0
		return Incoming{}, false, r.qerr
	}
	if r.qhead == len(r.queue) {
		return Incoming{}, false, nil
	}
	in = r.queue[r.qhead]
	r.queue[r.qhead] = Incoming{}
	r.qhead++
	if r.qhead == len(r.queue) {
		r.queue, r.qhead = r.queue[:0], 0
	}
	return in, true, nil
}

// IssueCredit grants n more credits (none for 0).
func (r *Receiver) IssueCredit(n uint32) error {
	c := r.s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if r.err != nil {
		return r.err
	}
	if n == 0 {
		return nil
	}
	r.credit += int64(n)
	r.s.appendReceiverFlowLocked(r)
	c.flushNowLocked()
	return nil
}

func (s *Session) appendReceiverFlowLocked(r *Receiver) {
	credit := uint32(min(max(r.credit, 0), 1<<32-1))
	r.maxCredit = max(r.maxCredit, int64(credit))
	s.c.wbuf = appendFlow(s.c.wbuf, s.ch, s.nextIncomingID, ourIncomingWindow, s.nextOutgoingID, ourOutgoingWindow,
		&linkFlow{handle: r.handle, deliveryCount: r.deliveryCount, credit: credit})
	s.incomingLeft = ourIncomingWindow
}

// Settle settles the deliveries first..last (delivery-ids, inclusive, in
// the session's serial order) with st, and grants credit more credits in
// the same write. A link that ended fails with why it did: the peer
// redelivers those messages.
func (r *Receiver) Settle(first, last uint32, st State, credit uint32) error {
	c := r.s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if r.err != nil {
		return r.err
	}
	ld := &c.lastDisp
	if ld.end == len(c.wbuf) && ld.r == r && ld.st.Error == nil && st.Error == nil && ld.st == st && first == ld.last+1 {
		// The buffered disposition of the deliveries just before: one
		// frame for both, which the broker handles once.
		first = ld.first
		c.wbuf = c.wbuf[:ld.start]
	}
	start := len(c.wbuf)
	c.wbuf = appendDisposition(c.wbuf, r.s.ch, first, last, st)
	*ld = bufferedDisposition{end: len(c.wbuf), r: r, start: start, first: first, last: last, st: st}
	if credit > 0 {
		r.credit += int64(credit)
		r.s.appendReceiverFlowLocked(r)
		c.flushNowLocked() // the broker waits for the credit
		return nil
	}
	// The settlement alone is written by a flusher of its own, so that
	// settlements made meanwhile join it (in one frame when consecutive)
	// rather than each costing a write and a packet the broker wakes for.
	c.kickLocked()
	return nil
}

// bufferedDisposition is where in the write buffer a disposition frame
// lies, and what it settles.
type bufferedDisposition struct {
	start, end  int // its bytes in wbuf; end -1 for none
	r           *Receiver
	first, last uint32
	st          State
}

// Close detaches the link with closed=true (which deletes a durable
// subscription) and waits for the peer's detach, or ctx. A detach of the
// peer with an error is returned, and so is the session's end or the
// connection's loss before the peer's detach (the closing is unconfirmed).
func (r *Receiver) Close(ctx context.Context) error {
	c := r.s.c
	c.mu.Lock()
	if r.err != nil {
		err := r.err
		c.mu.Unlock()
		if le, ok := err.(*LinkError); ok && le.Local && le.Cause == nil {
			return nil // closed already
		}
		return err
	}
	r.detachSelfLocked(true)
	c.mu.Unlock()
	select {
	case <-r.closed:
	case <-c.done:
		return c.Err()
	case <-ctx.Done():
		return ctx.Err()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if r.remoteErr != nil {
		return &LinkError{Remote: r.remoteErr}
	}
	if r.remoteDetached && !r.remoteClosed {
		// Its detach crossed ours: the link is detached, not closed.
		return &LinkError{Local: true, Cause: &Error{Condition: "amqp:link:detach-forced",
			Description: "the peer detached the link without closing it: its terminus (a durable subscription) may remain"}}
	}
	if !r.remoteDetached && r.s.err != nil {
		// The session ended before the peer answered the detach: the
		// closing is unconfirmed (a durable subscription may remain).
		return r.s.err
	}
	return nil
}

// detachSelfLocked sends a detach (closing with closed) and fails the link
// at once.
func (r *Receiver) detachSelfLocked(closed bool) {
	if r.s.err == nil && r.s.c.err == nil {
		r.sendDetachLocked(r.s, closed)
	}
	r.detachLocked(&LinkError{Local: true})
	r.s.releaseReceiverLocked(r)
}
