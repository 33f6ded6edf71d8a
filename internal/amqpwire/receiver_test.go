package amqpwire

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sourcePeer is a scripted peer on 127.0.0.1 that plays a broker sending
// on one receiver link: the test reads the client's frames and writes the
// peer's in order, so every frame the receiver sends is checked.
type sourcePeer struct {
	t   *testing.T
	nc  net.Conn
	br  *bufio.Reader
	buf []byte
	fr  frame
}

// newSourcePeer opens a client Conn and session against a scripted peer and
// returns both, the peer having answered the handshake and begin.
func newSourcePeer(t *testing.T) (*sourcePeer, *Session) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	accepted := make(chan net.Conn, 1)
	go func() {
		nc, err := ln.Accept()
		if err == nil {
			accepted <- nc
		}
		close(accepted)
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	pc := <-accepted
	require.NotNil(t, pc)
	p := &sourcePeer{t: t, nc: pc, br: bufio.NewReader(pc)}
	p.fr.fields = make(fields, 0, maxFields)

	sasl, outcome, open, begin, _ := fuzzPeerScript()
	opened := make(chan error, 1)
	var c *Conn
	go func() {
		var err error
		c, err = Open(t.Context(), nc, Config{})
		opened <- err
	}()
	p.header()
	p.write(sasl)
	p.expect(codeSASLInit)
	p.write(outcome)
	p.header()
	p.expect(codeOpen)
	p.write(open)
	require.NoError(t, <-opened)
	// The peer's socket first: the client's Close then does not wait for a
	// close frame the script never sends.
	t.Cleanup(func() { _ = pc.Close(); _ = c.Close() })

	sessCh := make(chan *Session, 1)
	go func() {
		s, err := c.NewSession(t.Context())
		assert.NoError(t, err)
		sessCh <- s
	}()
	p.expect(codeBegin)
	p.write(begin)
	s := <-sessCh
	require.NotNil(t, s)
	return p, s
}

func (p *sourcePeer) header() {
	var h [8]byte
	_, err := io.ReadFull(p.br, h[:])
	require.NoError(p.t, err)
}

func (p *sourcePeer) write(b []byte) {
	_, err := p.nc.Write(b)
	require.NoError(p.t, err)
}

// expect reads the client's next frame (heartbeats skipped), which must be
// the performative code.
func (p *sourcePeer) expect(code uint64) fields {
	p.t.Helper()
	_ = p.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		var err error
		p.buf, err = readFrame(p.br, p.buf, &p.fr)
		require.NoError(p.t, err)
		if p.fr.code != 0 {
			break
		}
	}
	require.Equal(p.t, code, p.fr.code, "performative")
	return p.fr.fields
}

// attach answers the client's attach as the sending side; withSource false
// refuses it (no source), filters lists the filter keys echoed.
func (p *sourcePeer) attach(a fields, withSource bool, initialCount uint32, filters ...string) {
	var err error
	name := (&fieldReader{a, &err}).str(0)
	require.NoError(p.t, err)
	p.write(peerFrame(frameAMQP, 3, codeAttach, func(c *composite) {
		_ = c.str(name)
		c.uint(9) // the peer's handle
		c.bool(false)
		c.omit()
		c.omit()
		if withSource {
			c.raw(func(b []byte) []byte {
				s := beginComposite(b, codeSource)
				_ = s.str("q")
				for range 6 {
					s.omit()
				}
				if len(filters) > 0 {
					s.raw(func(b []byte) []byte {
						b, start := beginMap(b)
						for _, f := range filters {
							b = AppendSymbol(b, f)
							b = append(b, tNull)
						}
						return endMap(b, start, 2*len(filters))
					})
				}
				return s.end()
			})
		} else {
			c.omit()
		}
		c.raw(func(b []byte) []byte { t := beginComposite(b, codeTarget); return t.end() })
		c.omit()
		c.omit()
		c.uint(initialCount)
	}))
}

// transfer sends one transfer frame on the peer's link handle 9.
func (p *sourcePeer) transfer(id uint32, first, more, aborted bool, part []byte) {
	// peerFrame cannot append a payload: build the frame by hand.
	b, fs := beginFrameBuf(nil, frameAMQP, 3)
	c := beginComposite(b, codeTransfer)
	c.uint(9)
	if first {
		c.uint(id)
		c.binary([]byte{byte(id)})
		c.uint(0)
	} else {
		c.omit()
		c.omit()
		c.omit()
	}
	c.omit()
	c.bool(more)
	c.omit()
	c.omit()
	c.omit()
	c.bool(aborted)
	p.write(endFrameBuf(append(c.end(), part...), fs))
}

func (p *sourcePeer) detach(e *Error) {
	p.write(appendDetachError(nil, 3, 9, e))
}

// openReceiver attaches a receiver against the peer, which echoes filters.
func openReceiver(t *testing.T, p *sourcePeer, s *Session, o ReceiverOptions, initialCount uint32, filters ...string) (*Receiver, fields) {
	t.Helper()
	type res struct {
		r   *Receiver
		err error
	}
	ch := make(chan res, 1)
	go func() {
		r, err := s.NewReceiver(t.Context(), o)
		ch <- res{r, err}
	}()
	a := append(fields(nil), p.expect(codeAttach)...)
	for i := range a {
		a[i] = append([]byte(nil), a[i]...)
	}
	p.attach(a, true, initialCount, filters...)
	got := <-ch
	require.NoError(t, got.err)
	return got.r, a
}

func TestReceiverAttachFrame(t *testing.T) {
	p, s := newSourcePeer(t)
	r, a := openReceiver(t, p, s, ReceiverOptions{Name: "sub", Source: "topic://t", Durability: 2, ExpiryPolicy: "never",
		Capabilities: []string{"topic", "shared"}, Selector: "a = 1"}, 0, SelectorFilterName)
	var err error
	ar := fieldReader{a, &err}
	assert.Equal(t, "sub", ar.str(0))
	assert.True(t, ar.bool(2), "role receiver")
	require.NoError(t, err)
	code, v, err := described(a.get(5))
	require.NoError(t, err)
	require.EqualValues(t, codeSource, code)
	src := listReader(v, make([][]byte, 0, 11), &err)
	assert.Equal(t, "topic://t", src.str(0))
	assert.EqualValues(t, 2, src.uint(1, 0))
	assert.Equal(t, "never", src.str(2))
	assert.Equal(t, []string{"topic", "shared"}, src.symbols(10))
	require.NoError(t, err)
	filter, err := Value(src.get(7))
	require.NoError(t, err)
	assert.Equal(t, map[any]any{SelectorFilterName: "a = 1"}, filter)
	assert.NotNil(t, a.get(6), "a target is sent")
	assert.True(t, r.HasFilter(SelectorFilterName))
	assert.False(t, r.HasFilter("other"))
	assert.Equal(t, "sub", r.Name())
}

func TestReceiverTransfersAndCredit(t *testing.T) {
	p, s := newSourcePeer(t)
	r, _ := openReceiver(t, p, s, ReceiverOptions{Source: "q"}, 5)

	require.NoError(t, r.IssueCredit(3))
	fl, err := decodeFlow(p.expect(codeFlow))
	require.NoError(t, err)
	require.NotNil(t, fl.handle)
	assert.EqualValues(t, 5, *fl.deliveryCount, "the peer's initial delivery-count")
	assert.EqualValues(t, 3, *fl.linkCredit)

	// A single-frame delivery, one in three frames, one aborted mid-way.
	p.transfer(0, true, false, false, []byte("one"))
	p.transfer(1, true, true, false, []byte("tw"))
	p.transfer(0, false, true, false, []byte("o-"))
	p.transfer(0, false, false, false, []byte("frames"))
	p.transfer(2, true, true, false, []byte("cut"))
	p.transfer(0, false, false, true, nil)

	ctx := t.Context()
	d, err := r.Receive(ctx)
	require.NoError(t, err)
	assert.Equal(t, Incoming{Payload: []byte("one"), ID: 0}, d)
	d, err = r.Receive(ctx)
	require.NoError(t, err)
	assert.Equal(t, Incoming{Payload: []byte("two-frames"), ID: 1}, d)
	d, err = r.Receive(ctx)
	require.NoError(t, err)
	assert.Equal(t, Incoming{ID: 2, Settled: true, Aborted: true}, d)
	_, ok, err := r.TryReceive()
	require.NoError(t, err)
	assert.False(t, ok)

	// Settling two with two more credits: one disposition, one flow.
	require.NoError(t, r.Settle(0, 1, State{Kind: StateAccepted}, 2))
	disp, err := decodeDisposition(p.expect(codeDisposition))
	require.NoError(t, err)
	assert.Equal(t, dispositionFrame{role: true, first: 0, last: 1, settled: true, state: State{Kind: StateAccepted}, terminal: true}, disp)
	fl, err = decodeFlow(p.expect(codeFlow))
	require.NoError(t, err)
	assert.EqualValues(t, 8, *fl.deliveryCount, "three deliveries counted, the aborted one included")
	assert.EqualValues(t, 2, *fl.linkCredit, "no credit was left, two granted")
	assert.EqualValues(t, 6, *fl.nextIncomingID, "six transfer frames received")
}

func TestReceiverDispositionOutcomes(t *testing.T) {
	p, s := newSourcePeer(t)
	r, _ := openReceiver(t, p, s, ReceiverOptions{Source: "q"}, 0)
	for i, st := range []State{
		{Kind: StateAccepted},
		{Kind: StateReleased},
		{Kind: StateModified, DeliveryFailed: true},
		{Kind: StateModified, DeliveryFailed: true, UndeliverableHere: true},
		{Kind: StateRejected},
		{Kind: StateRejected, Error: &Error{Condition: "x:pipeline", Description: "failed"}},
	} {
		id := uint32(10 + i)
		require.NoError(t, r.Settle(id, id, st, 0))
		disp, err := decodeDisposition(p.expect(codeDisposition))
		require.NoError(t, err)
		assert.Equal(t, dispositionFrame{role: true, first: id, last: id, settled: true, state: st, terminal: true}, disp, "state %+v", st)
	}
}

func TestReceiverRemoteDetachMidStream(t *testing.T) {
	p, s := newSourcePeer(t)
	r, _ := openReceiver(t, p, s, ReceiverOptions{Source: "q"}, 0)
	require.NoError(t, r.IssueCredit(10))
	p.expect(codeFlow)
	p.transfer(0, true, false, false, []byte("a"))
	d, err := r.Receive(t.Context())
	require.NoError(t, err)
	assert.Equal(t, "a", string(d.Payload))
	p.transfer(1, true, false, false, []byte("b"))
	p.detach(&Error{Condition: "amqp:link:detach-forced", Description: "gone"})

	// The client answers the detach; the queued message is not handed out
	// (it cannot be settled any more), nor is a settlement sent.
	dt, err := decodeDetach(p.expect(codeDetach))
	require.NoError(t, err)
	assert.EqualValues(t, 0, dt.handle)
	_, err = r.Receive(t.Context())
	var le *LinkError
	require.ErrorAs(t, err, &le)
	var we *Error
	require.ErrorAs(t, err, &we)
	assert.Equal(t, "amqp:link:detach-forced", we.Condition)
	require.ErrorAs(t, r.Settle(d.ID, d.ID, State{Kind: StateAccepted}, 1), &le, "a late settlement of the old link is stale")
	require.ErrorAs(t, r.IssueCredit(1), &le)
}

func TestReceiverStaleSettleAfterReconnect(t *testing.T) {
	p, s := newSourcePeer(t)
	r, _ := openReceiver(t, p, s, ReceiverOptions{Source: "q"}, 0)
	require.NoError(t, r.IssueCredit(1))
	p.expect(codeFlow)
	p.transfer(0, true, false, false, []byte("a"))
	d, err := r.Receive(t.Context())
	require.NoError(t, err)
	_ = p.nc.Close()
	<-s.c.Done()
	var ce *ConnError
	_, err = r.Receive(t.Context())
	require.ErrorAs(t, err, &ce)

	// Reconnected: the new link gets the message again (same delivery-id
	// on its own session); the late settlement of the old one fails as
	// stale and sends nothing, the new one settles.
	p2, s2 := newSourcePeer(t)
	r2, _ := openReceiver(t, p2, s2, ReceiverOptions{Source: "q"}, 0)
	require.NoError(t, r2.IssueCredit(1))
	p2.expect(codeFlow)
	p2.transfer(0, true, false, false, []byte("a"))
	d2, err := r2.Receive(t.Context())
	require.NoError(t, err)
	require.ErrorAs(t, r.Settle(d.ID, d.ID, State{Kind: StateAccepted}, 0), &ce, "settling after the connection ended")
	require.NoError(t, r2.Settle(d2.ID, d2.ID, State{Kind: StateAccepted}, 0))
	disp, err := decodeDisposition(p2.expect(codeDisposition))
	require.NoError(t, err)
	assert.Equal(t, dispositionFrame{role: true, first: 0, last: 0, settled: true, state: State{Kind: StateAccepted}, terminal: true}, disp)
}

func TestReceiverAttachRefused(t *testing.T) {
	p, s := newSourcePeer(t)
	ch := make(chan error, 1)
	go func() {
		_, err := s.NewReceiver(t.Context(), ReceiverOptions{Source: "nope"})
		ch <- err
	}()
	a := p.expect(codeAttach)
	p.attach(a, false, 0)
	p.detach(&Error{Condition: "amqp:not-found", Description: "no queue nope"})
	err := <-ch
	var we *Error
	require.ErrorAs(t, err, &we)
	assert.Equal(t, "amqp:not-found", we.Condition)
	p.expect(codeDetach)
}

func TestReceiverMessageTooLarge(t *testing.T) {
	p, s := newSourcePeer(t)
	r, _ := openReceiver(t, p, s, ReceiverOptions{Source: "q", MaxMessageSize: 8}, 0)
	require.NoError(t, r.IssueCredit(1))
	p.expect(codeFlow)
	p.transfer(0, true, true, false, []byte("12345"))
	p.transfer(0, false, false, false, []byte("6789"))
	dt, err := decodeDetach(p.expect(codeDetach))
	require.NoError(t, err)
	require.NotNil(t, dt.err)
	assert.Equal(t, CondMessageSizeExceeded, dt.err.Condition)
	assert.False(t, dt.closed, "a durable subscription survives")
	_, err = r.Receive(t.Context())
	var we *Error
	require.ErrorAs(t, err, &we)
	assert.Equal(t, CondMessageSizeExceeded, we.Condition)
}

func TestReceiverReopensSessionWindow(t *testing.T) {
	p, s := newSourcePeer(t)
	r, _ := openReceiver(t, p, s, ReceiverOptions{Source: "q"}, 0)
	require.NoError(t, r.IssueCredit(ourIncomingWindow))
	p.expect(codeFlow)
	// Past half the window the client reopens it with a session flow.
	var all bytes.Buffer
	for i := range uint32(ourIncomingWindow/2 + 1) {
		b, fs := beginFrameBuf(nil, frameAMQP, 3)
		c := beginComposite(b, codeTransfer)
		c.uint(9)
		c.uint(i)
		c.binary(nil)
		all.Write(endFrameBuf(append(c.end(), 'x'), fs))
	}
	go func() { _, _ = p.nc.Write(all.Bytes()) }()
	fl, err := decodeFlow(p.expect(codeFlow))
	require.NoError(t, err)
	assert.Nil(t, fl.handle, "a session flow")
	assert.EqualValues(t, ourIncomingWindow, fl.incomingWindow)
	assert.EqualValues(t, ourIncomingWindow/2+1, *fl.nextIncomingID)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for range ourIncomingWindow/2 + 1 {
		_, err := r.Receive(ctx)
		require.NoError(t, err)
	}
}

func TestReceiverAbandonedAttachKeepsTheTerminus(t *testing.T) {
	p, s := newSourcePeer(t)
	ctx, cancel := context.WithCancel(t.Context())
	ch := make(chan error, 1)
	go func() {
		_, err := s.NewReceiver(ctx, ReceiverOptions{Name: "durable-sub", Source: "t", Durability: 2})
		ch <- err
	}()
	p.expect(codeAttach)
	cancel()
	require.ErrorIs(t, <-ch, context.Canceled)
	dt, err := decodeDetach(p.expect(codeDetach))
	require.NoError(t, err)
	assert.False(t, dt.closed, "giving up an attach must not delete a durable subscription")
}

func TestReceiverCloseDetachesClosed(t *testing.T) {
	p, s := newSourcePeer(t)
	r, _ := openReceiver(t, p, s, ReceiverOptions{Source: "q"}, 0)
	done := make(chan error, 1)
	go func() { done <- r.Close(t.Context()) }()
	dt, err := decodeDetach(p.expect(codeDetach))
	require.NoError(t, err)
	assert.True(t, dt.closed, "closed=true deletes a durable subscription")
	p.write(appendDetach(nil, 3, 9, true))
	require.NoError(t, <-done)
	_, err = r.Receive(t.Context())
	assert.True(t, errors.As(err, new(*LinkError)))
}

func TestReceiverMergesBufferedSettlements(t *testing.T) {
	p, s := newSourcePeer(t)
	r, _ := openReceiver(t, p, s, ReceiverOptions{Source: "q"}, 0)
	c := s.c
	// Hold the writer, as a flush in progress does: the settlements made
	// meanwhile are buffered.
	c.mu.Lock()
	c.flushing = true
	c.mu.Unlock()
	acc := State{Kind: StateAccepted}
	for id := uint32(20); id < 23; id++ {
		require.NoError(t, r.Settle(id, id, acc, 0))
	}
	require.NoError(t, r.Settle(23, 23, State{Kind: StateReleased}, 0))
	require.NoError(t, r.Settle(25, 25, State{Kind: StateReleased}, 0))
	c.mu.Lock()
	c.flushing = false
	c.flushNowLocked()
	c.mu.Unlock()
	for _, want := range []dispositionFrame{
		{role: true, first: 20, last: 22, settled: true, state: acc, terminal: true},
		{role: true, first: 23, last: 23, settled: true, state: State{Kind: StateReleased}, terminal: true},
		{role: true, first: 25, last: 25, settled: true, state: State{Kind: StateReleased}, terminal: true},
	} {
		d, err := decodeDisposition(p.expect(codeDisposition))
		require.NoError(t, err)
		assert.Equal(t, want, d)
	}
}

// transferSettled sends a single-frame delivery the peer settled already.
func (p *sourcePeer) transferSettled(id uint32, payload []byte) {
	b, fs := beginFrameBuf(nil, frameAMQP, 3)
	c := beginComposite(b, codeTransfer)
	c.uint(9)
	c.uint(id)
	c.binary([]byte{byte(id)})
	c.uint(0)
	c.bool(true) // settled
	p.write(endFrameBuf(append(c.end(), payload...), fs))
}

// flow sends the peer's flow on the session, or on its link handle 9 when
// link is set, asking for the client's state when echo is set.
func (p *sourcePeer) flow(link, echo bool) {
	p.write(peerFrame(frameAMQP, 3, codeFlow, func(c *composite) {
		c.uint(0)
		c.uint(100)
		c.uint(0)
		c.uint(100)
		if link {
			c.uint(9)
			c.uint(0)
			c.uint(0)
		} else {
			c.omit()
			c.omit()
			c.omit()
		}
		c.omit()
		c.bool(false)
		c.bool(echo)
	}))
}

// TestReceiverAttachAdvertisesMaxMessageSize: the limit the receiver
// enforces is sent in its attach, so a broker does not send a larger
// message that the receiver would detach the link for, again at every
// redelivery.
func TestReceiverAttachAdvertisesMaxMessageSize(t *testing.T) {
	for _, tc := range []struct {
		set, want uint64
	}{{set: 4096, want: 4096}, {set: 0, want: DefaultMaxMessageSize}} {
		p, s := newSourcePeer(t)
		_, a := openReceiver(t, p, s, ReceiverOptions{Source: "q", MaxMessageSize: tc.set}, 0)
		b := a.get(10)
		require.NotNil(t, b, "max-message-size is sent")
		v, _, err := ulongAt(b)
		require.NoError(t, err)
		assert.Equal(t, tc.want, v)
	}
}

// TestReceiverKeepsPresettledDeliveriesAfterDetach: deliveries the broker
// settled on sending are the client's alone once received, so a link that
// ends with them queued still hands them out (before its error); the
// unsettled ones in between are dropped (the broker redelivers them).
func TestReceiverKeepsPresettledDeliveriesAfterDetach(t *testing.T) {
	p, s := newSourcePeer(t)
	r, _ := openReceiver(t, p, s, ReceiverOptions{Source: "q"}, 0)
	require.NoError(t, r.IssueCredit(3))
	p.expect(codeFlow)
	p.transferSettled(0, []byte("a"))
	p.transfer(1, true, false, false, []byte("b"))
	p.transferSettled(2, []byte("c"))
	p.detach(&Error{Condition: "amqp:link:detach-forced", Description: "gone"})
	p.expect(codeDetach) // the client took the detach

	for _, want := range []string{"a", "c"} {
		d, err := r.Receive(t.Context())
		require.NoError(t, err)
		assert.True(t, d.Settled)
		assert.Equal(t, want, string(d.Payload))
	}
	_, err := r.Receive(t.Context())
	require.ErrorAs(t, err, new(*LinkError))
	_, ok, err := r.TryReceive()
	assert.False(t, ok)
	require.ErrorAs(t, err, new(*LinkError))
}

// TestReceiverSendsNoFlowAfterItsDetach: a link flow of the peer asking for
// an echo can cross the client's detach; the handle is detached on the
// client's side then, so it answers nothing (a flow on it would be an
// unattached-handle error that ends the session).
func TestReceiverSendsNoFlowAfterItsDetach(t *testing.T) {
	p, s := newSourcePeer(t)
	r, _ := openReceiver(t, p, s, ReceiverOptions{Source: "q", MaxMessageSize: 4}, 0)
	require.NoError(t, r.IssueCredit(1))
	p.expect(codeFlow)
	p.transfer(0, true, false, false, []byte("12345"))
	p.expect(codeDetach) // over the size limit: the client detached
	p.flow(true, true)
	p.flow(false, true)
	fl, err := decodeFlow(p.expect(codeFlow))
	require.NoError(t, err)
	assert.Nil(t, fl.handle, "only the session flow is answered")
}

// TestReceiverCloseReportsSessionEnd: a peer that ends the session instead
// of answering the closing detach has not confirmed it (a durable
// subscription may survive), so Close fails with the session's error rather
// than reporting the link closed.
func TestReceiverCloseReportsSessionEnd(t *testing.T) {
	p, s := newSourcePeer(t)
	r, _ := openReceiver(t, p, s, ReceiverOptions{Source: "q"}, 0)
	done := make(chan error, 1)
	go func() { done <- r.Close(t.Context()) }()
	p.expect(codeDetach)
	p.write(peerFrame(frameAMQP, 3, codeEnd, func(c *composite) {
		c.raw(func(b []byte) []byte {
			ec := beginComposite(b, codeError)
			ec.symbol("amqp:internal-error")
			return ec.end()
		})
	}))
	err := <-done
	var se *SessionError
	require.ErrorAs(t, err, &se)
	require.NotNil(t, se.Remote)
	assert.Equal(t, "amqp:internal-error", se.Remote.Condition)
}

// TestReceiverCloseReportsNonClosingDetach: a peer whose detach crossed the
// closing one (closed=false) has not closed the link, so a durable
// subscription survives; Close says so instead of reporting success.
func TestReceiverCloseReportsNonClosingDetach(t *testing.T) {
	p, s := newSourcePeer(t)
	r, _ := openReceiver(t, p, s, ReceiverOptions{Source: "q"}, 0)
	done := make(chan error, 1)
	go func() { done <- r.Close(t.Context()) }()
	dt, err := decodeDetach(p.expect(codeDetach))
	require.NoError(t, err)
	require.True(t, dt.closed)
	p.write(appendDetach(nil, 3, 9, false))
	err = <-done
	var le *LinkError
	require.ErrorAs(t, err, &le)
	assert.Contains(t, err.Error(), "without closing")
}

// TestReceiverDetachesAPeerFarPastItsCredit: a peer that keeps sending
// without credit would fill the link's queue without end; past twice the
// largest credit granted (plus a margin for a broker that miscounts
// deliveries in flight, as RabbitMQ 3.x can) the receiver detaches the
// link with transfer-limit-exceeded, keeping it (not closing).
func TestReceiverDetachesAPeerFarPastItsCredit(t *testing.T) {
	p, s := newSourcePeer(t)
	r, _ := openReceiver(t, p, s, ReceiverOptions{Source: "q"}, 0)
	require.NoError(t, r.IssueCredit(2))
	p.expect(codeFlow)
	var all bytes.Buffer
	for i := range uint32(2 + 2*2 + creditOverrunMargin + 1) {
		b, fs := beginFrameBuf(nil, frameAMQP, 3)
		c := beginComposite(b, codeTransfer)
		c.uint(9)
		c.uint(i)
		c.binary(nil)
		all.Write(endFrameBuf(append(c.end(), 'x'), fs))
	}
	go func() { _, _ = p.nc.Write(all.Bytes()) }()
	dt, err := decodeDetach(p.expect(codeDetach))
	require.NoError(t, err)
	require.NotNil(t, dt.err)
	assert.Equal(t, CondTransferLimitExceeded, dt.err.Condition)
	assert.False(t, dt.closed)
	_, err = r.Receive(t.Context())
	var we *Error
	require.ErrorAs(t, err, &we)
	assert.Equal(t, CondTransferLimitExceeded, we.Condition)
}

// TestReceiverSettleThenCloseSendsTheSettlement: a settlement still
// buffered (its flush kicked off, not yet run) when the connection closes
// goes out before the close frame, so an ack made just before shutdown is
// not lost.
func TestReceiverSettleThenCloseSendsTheSettlement(t *testing.T) {
	p, s := newSourcePeer(t)
	r, _ := openReceiver(t, p, s, ReceiverOptions{Source: "q"}, 0)
	require.NoError(t, r.Settle(7, 9, State{Kind: StateAccepted}, 0))
	closed := make(chan error, 1)
	go func() { closed <- s.c.Close() }()
	d, err := decodeDisposition(p.expect(codeDisposition))
	require.NoError(t, err)
	assert.Equal(t, dispositionFrame{role: true, first: 7, last: 9, settled: true, state: State{Kind: StateAccepted}, terminal: true}, d)
	p.expect(codeClose)
	p.write(appendClose(nil, nil))
	require.NoError(t, <-closed)
}

// TestReceiverDeliveryCountWraps: the delivery-count is a serial number;
// past 2^32-1 it wraps to 0, and the credit sent is counted from there.
func TestReceiverDeliveryCountWraps(t *testing.T) {
	p, s := newSourcePeer(t)
	r, _ := openReceiver(t, p, s, ReceiverOptions{Source: "q"}, 1<<32-2)
	require.NoError(t, r.IssueCredit(3))
	p.expect(codeFlow)
	for i := range uint32(3) {
		p.transfer(i, true, false, false, []byte("m"))
	}
	for range 3 {
		_, err := r.Receive(t.Context())
		require.NoError(t, err)
	}
	require.NoError(t, r.IssueCredit(2))
	fl, err := decodeFlow(p.expect(codeFlow))
	require.NoError(t, err)
	assert.EqualValues(t, 1, *fl.deliveryCount, "2^32-2 + 3, wrapped")
	assert.EqualValues(t, 2, *fl.linkCredit)
}
