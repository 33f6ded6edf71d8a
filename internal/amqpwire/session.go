package amqpwire

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync/atomic"
)

// Session windows we advertise: the incoming window is reopened whenever
// half of it is used, and we never limit our own outgoing window below the
// peer's incoming one.
const (
	ourIncomingWindow = 1 << 16
	ourOutgoingWindow = math.MaxUint32
	ourHandleMax      = 1<<16 - 1
)

// Session is one AMQP session of a Conn, for sender links.
type Session struct {
	c        *Conn
	ch       uint16
	remoteCh uint16
	begun    bool
	err      error       // why the session ended; nil while it is up
	ended    atomic.Bool // err is set; read without the connection's mutex
	endSent  bool

	nextOutgoingID uint32 // transfer-id of our next transfer frame
	nextIncomingID uint32 // transfer-id of the peer's next transfer frame
	incomingLeft   uint32 // transfer frames the peer may still send us
	remoteIncoming uint32 // transfer frames the peer still accepts
	nextDeliveryID uint32
	handleMax      uint32

	links       map[uint32]*Sender // by our handle
	remoteLinks map[uint32]*Sender // by the peer's handle
	byName      map[string]*Sender
	unsettled   map[uint32]*Delivery
	freeHandles []uint32
	nextHandle  uint32

	receivers       map[uint32]*Receiver // by our handle
	remoteReceivers map[uint32]*Receiver // by the peer's handle
	receiverByName  map[string]*Receiver
}

// NewSession begins a session.
func (c *Conn) NewSession(ctx context.Context) (*Session, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return nil, c.err
	}
	var ch uint16
	for ; ; ch++ {
		if _, used := c.sessions[ch]; !used {
			break
		}
		if ch == c.channelMax || ch == math.MaxUint16 {
			return nil, errors.New("no free channel for a new session")
		}
	}
	s := &Session{c: c, ch: ch, links: map[uint32]*Sender{}, remoteLinks: map[uint32]*Sender{},
		byName: map[string]*Sender{}, unsettled: make(map[uint32]*Delivery, 256),
		receivers: map[uint32]*Receiver{}, remoteReceivers: map[uint32]*Receiver{}, receiverByName: map[string]*Receiver{},
		incomingLeft: ourIncomingWindow}
	c.sessions[ch] = s
	c.wbuf = appendBegin(c.wbuf, ch, 0, ourIncomingWindow, ourOutgoingWindow, ourHandleMax)
	c.flushNowLocked()
	for !s.begun && s.err == nil {
		if err := c.waitLocked(ctx); err != nil {
			// Abandon it: end the session if it begins later.
			s.err = err
			if c.err == nil {
				s.endSent = true
				c.wbuf = appendEnd(c.wbuf, ch)
				c.kickLocked()
			}
			return nil, err
		}
	}
	if s.err != nil {
		return nil, s.err
	}
	return s, nil
}

// Err is why the session ended, nil while it is up.
func (s *Session) Err() error {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	return s.err
}

// Ended reports whether the session ended (Err is set) without taking the
// connection's mutex: a sender checks it before every batch.
func (s *Session) Ended() bool { return s.ended.Load() }

// endLocked marks the session ended with err and fails what it carried.
func (s *Session) endLocked(err error) {
	if s.err == nil {
		s.err = err
		s.ended.Store(true)
	}
	for _, l := range s.links {
		l.detachLocked(s.err)
	}
	for _, r := range s.receivers {
		r.detachLocked(s.err)
		r.markClosed()
	}
	s.failDeliveriesLocked(nil, s.err)
	s.c.notifyLocked()
}

// failDeliveriesLocked fails the unsettled deliveries of link l (of every
// link when l is nil).
func (s *Session) failDeliveriesLocked(l *Sender, err error) {
	for id, d := range s.unsettled {
		if l != nil && d.link != l {
			continue
		}
		delete(s.unsettled, id)
		d.Err = err
		d.complete()
	}
}

func (s *Session) handleLocked(fr *frame) error {
	c := s.c
	switch fr.code {
	case codeAttach:
		a, err := decodeAttach(fr.fields)
		if err != nil {
			return &Error{Condition: CondDecodeError, Description: "attach: " + err.Error()}
		}
		if !a.role {
			return s.receiverAttachedLocked(&a)
		}
		l := s.byName[a.name]
		if l == nil {
			return unknownAttach(&a)
		}
		s.remoteLinks[a.handle] = l
		if !l.peerAttachedLocked(&a, a.hasTarget) {
			return nil
		}
		l.maxMessageSize = a.maxMessageSize
		c.notifyLocked()
	case codeFlow:
		fl, err := decodeFlow(fr.fields)
		if err != nil {
			return &Error{Condition: CondDecodeError, Description: "flow: " + err.Error()}
		}
		next := uint32(0)
		if fl.nextIncomingID != nil {
			next = *fl.nextIncomingID
		}
		s.remoteIncoming = next + fl.incomingWindow - s.nextOutgoingID
		if int32(s.remoteIncoming) < 0 && fl.incomingWindow < 1<<31 {
			s.remoteIncoming = 0
		}
		var l *Sender
		if fl.handle != nil {
			if r := s.remoteReceivers[*fl.handle]; r != nil {
				// The sender's delivery-count is not adopted: it advances
				// it without sending only to answer a drain, which this
				// receiver never asks for, so the transfers counted are
				// its count exactly. A flow that crossed our detach is not answered: the
				// handle is unattached on our side.
				if fl.echo && !r.detachSent {
					s.appendReceiverFlowLocked(r)
					c.kickLocked()
				}
				c.notifyLocked()
				return nil
			}
			if l = s.remoteLinks[*fl.handle]; l == nil {
				return nil // a link we detached
			}
			if fl.linkCredit != nil {
				dc := uint32(0)
				if fl.deliveryCount != nil {
					dc = *fl.deliveryCount
				}
				credit := dc + *fl.linkCredit - l.deliveryCount
				if int32(credit) < 0 && *fl.linkCredit < 1<<31 {
					credit = 0
				}
				l.credit = credit
			}
			if fl.drain && !l.busy && l.credit > 0 {
				l.deliveryCount += l.credit
				l.credit = 0
				fl.echo = true
			}
		}
		if fl.echo {
			var lf *linkFlow
			if l != nil {
				lf = &linkFlow{handle: l.handle, deliveryCount: l.deliveryCount, credit: l.credit, drain: fl.drain}
			}
			c.wbuf = appendFlow(c.wbuf, s.ch, s.nextIncomingID, ourIncomingWindow, s.nextOutgoingID, ourOutgoingWindow, lf)
			s.incomingLeft = ourIncomingWindow
			c.kickLocked()
		}
		c.notifyLocked()
	case codeDisposition:
		d, err := decodeDisposition(fr.fields)
		if err != nil {
			return &Error{Condition: CondDecodeError, Description: "disposition: " + err.Error()}
		}
		if !d.role || !(d.settled || d.terminal) {
			return nil // not about our deliveries, or not final yet
		}
		span := d.last - d.first
		if uint64(span) < uint64(len(s.unsettled)) {
			for id := d.first; ; id++ {
				s.settleLocked(id, d.state)
				if id == d.last {
					break
				}
			}
		} else {
			for id := range s.unsettled {
				if id-d.first <= span {
					s.settleLocked(id, d.state)
				}
			}
		}
	case codeDetach:
		dt, err := decodeDetach(fr.fields)
		if err != nil {
			return &Error{Condition: CondDecodeError, Description: "detach: " + err.Error()}
		}
		if r := s.remoteReceivers[dt.handle]; r != nil {
			s.receiverDetachedLocked(r, &dt)
			return nil
		}
		l := s.remoteLinks[dt.handle]
		if l == nil {
			return nil
		}
		delete(s.remoteLinks, dt.handle)
		l.peerDetachedLocked(s, &dt, "target")
		l.detachLocked(&LinkError{Remote: dt.err})
		s.releaseHandleLocked(l)
		c.notifyLocked()
	case codeEnd:
		e, err := decodeEndOrClose(fr.fields)
		if err != nil {
			e.err = &Error{Condition: CondDecodeError, Description: err.Error()}
		}
		delete(c.remote, fr.channel)
		delete(c.sessions, s.ch)
		if !s.endSent {
			s.endSent = true
			c.wbuf = appendEnd(c.wbuf, s.ch)
			c.kickLocked()
		}
		s.endLocked(&SessionError{Remote: e.err})
	case codeTransfer:
		t, err := decodeTransfer(fr.fields)
		if err != nil {
			return &Error{Condition: CondDecodeError, Description: "transfer: " + err.Error()}
		}
		return s.transferLocked(&t, fr.payload)
	default:
		return &Error{Condition: CondFramingError, Description: fmt.Sprintf("unexpected performative %#x", fr.code)}
	}
	return nil
}

// allocHandleLocked returns a free link handle.
func (s *Session) allocHandleLocked() (uint32, error) {
	if n := len(s.freeHandles); n > 0 {
		h := s.freeHandles[n-1]
		s.freeHandles = s.freeHandles[:n-1]
		return h, nil
	}
	if s.nextHandle > s.handleMax || s.nextHandle > ourHandleMax {
		return 0, errors.New("no free link handle on the session")
	}
	s.nextHandle++
	return s.nextHandle - 1, nil
}

func (s *Session) settleLocked(id uint32, st State) {
	d := s.unsettled[id]
	if d == nil {
		return
	}
	delete(s.unsettled, id)
	d.State = st
	d.complete()
}

func (s *Session) releaseHandleLocked(l *Sender) {
	forgetLinkLocked(s, &l.linkEnds, l, s.links, s.byName)
}

// linkEnds is what sender and receiver links alike keep of their two ends:
// the handles and name that stand for the link, and how far each side's
// attach and detach have come.
type linkEnds struct {
	name           string
	handle         uint32
	remoteHandle   uint32
	hasRemote      bool
	remoteDetached bool
	attached       bool
	refused        bool
	detachSent     bool
	err            error // why the link ended
}

// peerAttachedLocked takes the peer's attach of the link. An attach without
// the link's terminus (hasTerminus false) refuses it: the detach that
// follows says why. It reports whether the link is attached.
func (e *linkEnds) peerAttachedLocked(a *attachFrame, hasTerminus bool) bool {
	e.remoteHandle, e.hasRemote = a.handle, true
	if !hasTerminus {
		e.refused = true
		return false
	}
	e.attached = true
	return true
}

// unknownAttach is the error for a peer's attach that answers no attach of
// ours.
func unknownAttach(a *attachFrame) *Error {
	return &Error{Condition: CondNotAllowed, Description: fmt.Sprintf("attach of unknown link %q", a.name)}
}

// sendDetachLocked writes our detach of the link, once.
func (e *linkEnds) sendDetachLocked(s *Session, closed bool) {
	if !e.detachSent {
		e.detachSent = true
		s.c.wbuf = appendDetach(s.c.wbuf, s.ch, e.handle, closed)
		s.c.kickLocked()
	}
}

// peerDetachedLocked takes the peer's detach of the link and answers it
// with ours, unless ours went first. A link the peer refused (attached
// without its terminus, named by missing) gets a not-found error when the
// detach says no more.
func (e *linkEnds) peerDetachedLocked(s *Session, dt *closingFrame, missing string) {
	e.hasRemote, e.remoteDetached = false, true
	if dt.err == nil && e.refused {
		dt.err = &Error{Condition: "amqp:not-found", Description: "the broker attached the link without a " + missing}
	}
	e.sendDetachLocked(s, dt.closed)
}

// forgetLinkLocked frees the handle and name of link l once both sides
// detached it: until the peer's detach, its attach or flow may still name
// them.
func forgetLinkLocked[L comparable](s *Session, e *linkEnds, l L, byHandle map[uint32]L, byName map[string]L) {
	if byHandle[e.handle] == l && e.remoteDetached && e.detachSent {
		delete(byHandle, e.handle)
		if byName[e.name] == l {
			delete(byName, e.name)
		}
		s.freeHandles = append(s.freeHandles, e.handle)
	}
}

// SenderOptions describe a sender link.
type SenderOptions struct {
	Name         string // random when empty
	Target       string // "" for no target address (anonymous relay)
	Durable      bool   // target durability configuration
	Capabilities []string
	Properties   map[string]any
}

// Sender is a sender link.
type Sender struct {
	s *Session
	linkEnds
	deliveryCount  uint32
	credit         uint32
	maxMessageSize uint64
	busy           bool // a Transfer run holds the link
}

// NewSender attaches a sender link and waits for the peer's attach. A
// refusal is a *LinkError (or a *SessionError, when the broker ends the
// whole session) carrying the broker's condition.
func (s *Session) NewSender(ctx context.Context, o SenderOptions) (*Sender, error) {
	return attachLink(ctx, s, o.Name, "sender-", func(h uint32, name string) (*Sender, error) {
		l := &Sender{s: s, linkEnds: linkEnds{name: name, handle: h}}
		var err error
		c := s.c
		if c.wbuf, err = appendAttach(c.wbuf, s.ch, attachParams{name: name, handle: h, target: o.Target,
			durable: o.Durable, capabilities: o.Capabilities, properties: o.Properties}); err != nil {
			return nil, err
		}
		s.links[h], s.byName[name] = l, l
		return l, nil
	}, func(l *Sender) (bool, error) { return l.attached, l.err }, func(l *Sender) {
		// A caller that gave up gets no link, even one attached meanwhile:
		// it is detached, and forgotten once the peer answers.
		l.closeLocked()
	})
}

// attachLink attaches a link the way both kinds attach, with the
// connection's lock held: it takes a handle and a name (prefix and a random
// suffix when name is ""), has newLink write the attach frame and register
// the link (the handle is freed again when newLink fails), and waits for the
// peer's attach or refusal, which state reports. A caller that gives up
// meanwhile gets nothing, and abandon undoes the link.
func attachLink[L any](ctx context.Context, s *Session, name, prefix string,
	newLink func(h uint32, name string) (L, error), state func(L) (attached bool, err error), abandon func(L),
) (L, error) {
	var none L
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.err != nil {
		return none, s.err
	}
	h, err := s.allocHandleLocked()
	if err != nil {
		return none, err
	}
	if name == "" {
		name = randomName(prefix)
	}
	l, err := newLink(h, name)
	if err != nil {
		s.freeHandles = append(s.freeHandles, h)
		return none, err
	}
	c.flushNowLocked()
	for {
		if err := ctx.Err(); err != nil {
			abandon(l)
			return none, err
		}
		attached, err := state(l)
		if err != nil {
			return none, err
		}
		if attached {
			return l, nil
		}
		_ = c.waitLocked(ctx)
	}
}

// Err is why the link ended, nil while it is attached.
func (l *Sender) Err() error {
	l.s.c.mu.Lock()
	defer l.s.c.mu.Unlock()
	return l.err
}

// MaxMessageSize is the largest message the peer takes on the link, 0 for
// no limit.
func (l *Sender) MaxMessageSize() uint64 { return l.maxMessageSize }

// Close detaches the link (closed) without waiting for the peer. Deliveries
// still unsettled on it fail.
func (l *Sender) Close() {
	l.s.c.mu.Lock()
	defer l.s.c.mu.Unlock()
	l.closeLocked()
}

func (l *Sender) closeLocked() {
	if l.s.err == nil && l.s.c.err == nil {
		l.sendDetachLocked(l.s, true)
	}
	l.detachLocked(&LinkError{Local: true})
	l.s.releaseHandleLocked(l)
}

func (l *Sender) detachLocked(err error) {
	if l.err == nil {
		l.err = err
	}
	l.s.failDeliveriesLocked(l, l.err)
	l.s.c.notifyLocked()
}

// Batch counts the outstanding deliveries of one Transfer call or several,
// so their sender waits once for all of them.
type Batch struct {
	pending atomic.Int32
	done    chan struct{}
}

// NewBatch returns an empty batch.
func NewBatch() *Batch {
	b := &Batch{done: make(chan struct{}, 1)}
	b.pending.Store(1) // the sender's own hold, dropped by Wait
	return b
}

// Reset makes a finished batch reusable.
func (b *Batch) Reset() {
	select {
	case <-b.done:
	default:
	}
	b.pending.Store(1)
}

// Wait waits until every delivery transferred in the batch has an outcome
// (State or Err), or ctx ends; then the caller must Abandon the batch's
// deliveries before reusing their memory.
func (b *Batch) Wait(ctx context.Context) error {
	if b.pending.Add(-1) == 0 {
		return nil
	}
	select {
	case <-b.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Delivery is one transferred message and, once settled, its outcome.
type Delivery struct {
	// State is the outcome when Err is nil.
	State State
	// Err is set when the delivery has no outcome: the link, session or
	// connection ended first, or the message itself could not be sent.
	Err      error
	link     *Sender
	batch    *Batch
	id       uint32
	live     bool // registered as unsettled
	finished bool
}

// Finished reports whether the delivery has its outcome (State or Err); it
// is false for one abandoned before it had one.
func (d *Delivery) Finished() bool { return d.finished }

func (d *Delivery) complete() {
	d.live, d.finished = false, true
	if d.batch.pending.Add(-1) == 0 {
		select {
		case d.batch.done <- struct{}{}:
		default:
		}
	}
}

// Abandon forgets deliveries still unsettled (after Wait returned early),
// so nothing writes to them any more.
func (c *Conn) Abandon(ds []Delivery) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range ds {
		d := &ds[i]
		if d.live {
			d.live = false
			if d.link != nil && d.link.s.unsettled[d.id] == d {
				delete(d.link.s.unsettled, d.id)
			}
		}
	}
}

// Transfer sends payloads, each an encoded message, as unsettled deliveries
// in order and back to back on the link: concurrent Transfers on one link
// do not interleave. ds[i] receives payloads[i]'s outcome, counted in b;
// a payload larger than the link's max-message-size gets its own error at
// once (an *Error with CondMessageSizeExceeded) and the rest are sent.
// Transfer waits for link credit and session window, and returns how many
// payloads it handled before an error (the link's, session's or
// connection's, or ctx's) stopped it.
func (l *Sender) Transfer(ctx context.Context, payloads [][]byte, ds []Delivery, b *Batch) (int, error) {
	s := l.s
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	for l.busy && l.err == nil {
		if err := c.waitLocked(ctx); err != nil {
			return 0, err
		}
	}
	if l.err != nil {
		return 0, l.err
	}
	l.busy = true
	defer func() {
		l.busy = false
		c.notifyLocked()
		if c.err == nil && !c.flushing && len(c.wbuf) > 0 {
			// Let the other senders that are about to transfer run first:
			// their frames then share this write (one syscall, one
			// packet), which under load takes several frames per write.
			c.flushing = true
			c.mu.Unlock()
			runtime.Gosched()
			c.mu.Lock()
			c.flushLocked()
		}
	}()
	maxPart := int(c.remoteMaxFrame) - transferHeaderMax
	for i, p := range payloads {
		if l.err != nil {
			return i, l.err
		}
		if l.maxMessageSize > 0 && uint64(len(p)) > l.maxMessageSize {
			ds[i] = Delivery{finished: true, Err: &Error{Condition: CondMessageSizeExceeded,
				Description: fmt.Sprintf("message of %d bytes exceeds the link's max-message-size of %d", len(p), l.maxMessageSize)}}
			continue
		}
		frames := uint32(1)
		if len(p) > maxPart {
			frames = uint32((len(p) + maxPart - 1) / maxPart)
		}
		// The first frame needs credit and window; later frames of a split
		// message need window only, and are sent as the peer opens it.
		if err := l.awaitLocked(ctx, true); err != nil {
			return i, err
		}
		id := s.nextDeliveryID
		s.nextDeliveryID++
		d := &ds[i]
		*d = Delivery{link: l, batch: b, id: id, live: true}
		b.pending.Add(1)
		s.unsettled[id] = d
		l.deliveryCount++
		l.credit--
		for k := uint32(0); k < frames; k++ {
			if k > 0 {
				if err := l.awaitLocked(ctx, false); err != nil {
					// A delivery cut off between its frames cannot be
					// finished: detaching the link discards it at the
					// peer, and fails it here.
					l.closeLocked()
					return i + 1, err
				}
			}
			part := p
			if len(part) > maxPart {
				part = p[:maxPart]
			}
			p = p[len(part):]
			c.wbuf = appendTransfer(c.wbuf, s.ch, l.handle, id, k == 0, k+1 < frames, part)
			s.nextOutgoingID++
			s.remoteIncoming--
		}
		for len(c.wbuf) >= maxPendingWrite && c.err == nil {
			if c.takeFlushLocked() {
				c.flushLocked()
				continue
			}
			if err := c.waitLocked(ctx); err != nil {
				return i + 1, err
			}
		}
	}
	return len(payloads), nil
}

// awaitLocked waits until the session window takes a transfer frame and,
// for a delivery's first frame, the link has credit, flushing what is
// buffered first: the peer grants more only for what it received.
func (l *Sender) awaitLocked(ctx context.Context, first bool) error {
	s, c := l.s, l.s.c
	for l.err == nil && ((first && l.credit == 0) || s.remoteIncoming == 0) {
		if len(c.wbuf) > 0 && c.takeFlushLocked() {
			c.flushLocked()
			continue
		}
		if err := c.waitLocked(ctx); err != nil {
			return err
		}
	}
	return l.err
}
