package amqpwire

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"math"
	"net"
	"testing"
	"time"

	"github.com/Azure/go-amqp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzReadFrame feeds arbitrary bytes to the frame reader and to the
// decoders of every performative the reader acts on: a hostile peer must
// get an error, never a panic.
func FuzzReadFrame(f *testing.F) {
	seeds := [][]byte{
		appendFlow(nil, 0, 1, 100, 0, 100, &linkFlow{handle: 1, deliveryCount: 2, credit: 3, drain: true}),
		appendDetach(nil, 1, 2, true),
		appendClose(nil, &Error{Condition: "amqp:internal-error", Description: "x"}),
		appendTransfer(nil, 0, 1, 2, true, true, []byte("abc")),
		appendBegin(nil, 0, 0, 10, 10, 10),
		heartbeat,
	}
	if b, err := appendOpen(nil, openParams{containerID: "c", maxFrameSize: 512, idleTimeout: 10}); err == nil {
		seeds = append(seeds, b)
	}
	if b, err := appendAttach(nil, 0, attachParams{name: "n", target: "t", capabilities: []string{"queue"}, properties: map[string]any{"k": "v"}}); err == nil {
		seeds = append(seeds, b)
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		br := bufio.NewReader(bytes.NewReader(data))
		var fr frame
		var buf []byte
		for range 8 {
			var err error
			if buf, err = readFrame(br, buf, &fr); err != nil {
				return
			}
			_, _ = decodeOpen(fr.fields)
			_, _ = decodeBegin(fr.fields)
			_, _ = decodeAttach(fr.fields)
			_, _ = decodeFlow(fr.fields)
			_, _ = decodeDisposition(fr.fields)
			_, _ = decodeDetach(fr.fields)
			_, _ = decodeEndOrClose(fr.fields)
			_, _ = decodeTransfer(fr.fields)
			var m Received
			_ = ParseMessage(fr.payload, &m)
			var ferr error
			r := fieldReader{fr.fields, &ferr}
			for i := range fr.fields {
				_, _ = Value(fr.fields[i])
				_ = r.symbols(i)
			}
			_, _ = Value(fr.payload)
		}
	})
}

// FuzzParseMessage splits arbitrary bytes into message sections and decodes
// every value it found, as the jms decoder does: errors, never a panic.
func FuzzParseMessage(f *testing.F) {
	seq := uint32(3)
	for _, m := range []*amqp.Message{
		{Header: &amqp.MessageHeader{Durable: true, Priority: 7, TTL: time.Second, DeliveryCount: 2},
			Annotations: amqp.Annotations{"x-opt-jms-msg-type": int8(3)},
			Properties: &amqp.MessageProperties{MessageID: amqp.UUID{1}, CorrelationID: uint64(9), To: ptr("q"), ReplyTo: ptr("r"),
				ContentType: ptr("text/plain"), CreationTime: ptr(time.UnixMilli(5)), GroupSequence: &seq},
			ApplicationProperties: map[string]any{"k": int32(1), "s": "v"}, Data: [][]byte{[]byte("ab"), []byte("c")}},
		{Value: []any{int8(1), "s", map[string]any{"n": nil}, []int32{1, 2}}},
		{Sequence: [][]any{{1.5, "x"}, {}}},
	} {
		b, err := m.MarshalBinary()
		require.NoError(f, err)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var m Received
		if ParseMessage(data, &m) != nil {
			return
		}
		for _, v := range [][]byte{m.MessageID, m.CorrelationID, m.Value} {
			if v != nil {
				_, _ = Value(v)
			}
		}
		for _, mp := range [][]byte{m.Annotations, m.ApplicationProperties} {
			items, err := MapItems(mp, nil)
			if err != nil {
				continue
			}
			for _, it := range items {
				_, _ = Value(it)
				_, _ = BytesAt(it)
			}
			_, _, _ = MapLookup(mp, "x-opt-jms-msg-type")
		}
		for _, sq := range m.Sequences {
			_, _ = Value(sq)
		}
	})
}

// TestParseMessageReadsGoAMQP checks every section field against a message
// go-amqp encoded.
func TestParseMessageReadsGoAMQP(t *testing.T) {
	seq := uint32(3)
	am := &amqp.Message{
		Header:      &amqp.MessageHeader{Durable: true, Priority: 7, TTL: 1500 * time.Millisecond, FirstAcquirer: true, DeliveryCount: 2},
		Annotations: amqp.Annotations{amqp.Symbol("x-opt-jms-msg-type"): int8(3)},
		Properties: &amqp.MessageProperties{MessageID: amqp.UUID{1, 2}, UserID: []byte("u"), To: ptr("q"), Subject: ptr("s"), ReplyTo: ptr("r"),
			CorrelationID: uint64(9), ContentType: ptr("text/plain"), AbsoluteExpiryTime: ptr(time.UnixMilli(9000)),
			CreationTime: ptr(time.UnixMilli(5000)), GroupID: ptr("g"), GroupSequence: &seq},
		ApplicationProperties: map[string]any{"k": int32(-1)},
		Data:                  [][]byte{[]byte("ab"), []byte("c")},
	}
	b, err := am.MarshalBinary()
	require.NoError(t, err)
	var m Received
	require.NoError(t, ParseMessage(b, &m))
	assert.True(t, m.HasHeader && m.Durable && m.FirstAcquirer)
	assert.EqualValues(t, 7, m.Priority)
	assert.EqualValues(t, 1500, m.TTL)
	assert.EqualValues(t, 2, m.DeliveryCount)
	ann, err := Value(m.Annotations)
	require.NoError(t, err)
	assert.Equal(t, map[any]any{"x-opt-jms-msg-type": int8(3)}, ann)
	raw, found, err := MapLookup(m.Annotations, "x-opt-jms-msg-type")
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, []byte{tByte, 3}, raw)
	_, found, err = MapLookup(m.Annotations, "x-opt-jms-dest")
	assert.False(t, found)
	assert.NoError(t, err)
	_, _, err = MapLookup(m.Annotations[:len(m.Annotations)-1], "x")
	assert.Error(t, err, "a truncated map")
	id, err := Value(m.MessageID)
	require.NoError(t, err)
	assert.Equal(t, UUID{1, 2}, id)
	cid, err := Value(m.CorrelationID)
	require.NoError(t, err)
	assert.Equal(t, uint64(9), cid)
	for want, got := range map[string][]byte{"u": m.UserID, "q": m.To, "s": m.Subject, "r": m.ReplyTo, "text/plain": m.ContentType, "g": m.GroupID} {
		assert.Equal(t, want, string(got))
	}
	assert.True(t, m.HasAbsoluteExpiryTime && m.HasCreationTime && m.HasGSeq)
	assert.EqualValues(t, 9000, m.AbsoluteExpiryTime)
	assert.EqualValues(t, 5000, m.CreationTime)
	assert.EqualValues(t, 3, m.GroupSequence)
	props, err := Value(m.ApplicationProperties)
	require.NoError(t, err)
	assert.Equal(t, map[any]any{"k": int32(-1)}, props)
	assert.True(t, m.HasData)
	assert.Equal(t, "ab", string(m.Data))
	assert.Equal(t, [][]byte{[]byte("c")}, m.MoreData)
	assert.Equal(t, "abc", string(m.Body()))
	assert.Nil(t, m.Value)

	// An array body and a char decode; a decimal is an error.
	arr, err := (&amqp.Message{Value: []int64{1, -2}}).MarshalBinary()
	require.NoError(t, err)
	require.NoError(t, ParseMessage(arr, &m))
	v, err := Value(m.Value)
	require.NoError(t, err)
	assert.Equal(t, []any{int64(1), int64(-2)}, v)
	v, err = Value([]byte{tChar, 0, 0, 0, 'A'})
	require.NoError(t, err)
	assert.Equal(t, Char('A'), v)
	_, err = Value([]byte{tDecimal64, 0, 0, 0, 0, 0, 0, 0, 0})
	assert.Error(t, err)
}

// servePeerScript plays the fuzz peer on server: it answers the client's
// protocol headers, sasl-init, open, begin and attach with the scripted
// frames (attach last), then writes data and discards what the client
// sends.
func servePeerScript(server net.Conn, attach, data []byte) {
	sasl, outcome, open, begin, _ := fuzzPeerScript()
	br := bufio.NewReader(server)
	var fr frame
	var buf []byte
	step := func(n int, reply []byte) bool {
		if n == 8 {
			var h [8]byte
			if _, err := io.ReadFull(br, h[:]); err != nil {
				return false
			}
		}
		for range max(0, n-8) {
			var err error
			if buf, err = readFrame(br, buf, &fr); err != nil {
				return false
			}
		}
		_, err := server.Write(reply)
		return err == nil
	}
	// header; sasl-init; header+open; begin; attach.
	if !step(8, sasl) || !step(9, outcome) || !step(8, nil) || !step(9, open) || !step(9, begin) || !step(9, attach) {
		_ = server.Close()
		return
	}
	go func() { _, _ = io.Copy(io.Discard, server) }()
	_, _ = server.Write(data)
}

// peerFrame builds a frame of the peer's side for the fuzz peer.
func peerFrame(typ byte, ch uint16, code byte, fill func(c *composite)) []byte {
	b, fs := beginFrameBuf(nil, typ, ch)
	c := beginComposite(b, code)
	fill(&c)
	return endFrameBuf(c.end(), fs)
}

// fuzzPeerSession opens a connection and a session to servePeerScript
// playing attach and then data over server, the peer's end of the pipe; the
// session is nil when the script ends it before it begins. Everything is
// closed when t ends.
func fuzzPeerSession(t *testing.T, attach, data []byte) (ctx context.Context, server net.Conn, c *Conn, s *Session) {
	client, server := net.Pipe()
	t.Cleanup(func() { client.Close() })
	go servePeerScript(server, attach, data)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	c, err := Open(ctx, client, Config{})
	if err != nil {
		t.Fatalf("handshake: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	if s, err = c.NewSession(ctx); err != nil {
		return ctx, server, c, nil
	}
	return ctx, server, c, s
}

// fuzzPeerScript is what a peer sends a sender up to a granted link: SASL
// mechanisms, outcome, open, begin, attach and flow.
func fuzzPeerScript() (sasl, outcome, open, begin, attach []byte) {
	sasl = append(append([]byte(nil), saslHeader...), peerFrame(frameSASL, 0, codeSASLMechanisms, func(c *composite) { c.symbols([]string{"ANONYMOUS"}) })...)
	outcome = peerFrame(frameSASL, 0, codeSASLOutcome, func(c *composite) { c.ubyte(0) })
	open = append(append([]byte(nil), amqpHeader...), peerFrame(frameAMQP, 0, codeOpen, func(c *composite) {
		_ = c.str("peer")
		c.omit()
		c.uint(512) // small frames: transfers are split
	})...)
	begin = peerFrame(frameAMQP, 3, codeBegin, func(c *composite) {
		c.ushort(0)
		c.uint(0)
		c.uint(100)
		c.uint(100)
	})
	attach = append(peerFrame(frameAMQP, 3, codeAttach, func(c *composite) {
		_ = c.str("l")
		c.uint(7)
		c.bool(true)
		c.omit()
		c.omit()
		c.raw(func(b []byte) []byte { s := beginComposite(b, codeSource); return s.end() })
		c.raw(func(b []byte) []byte { s := beginComposite(b, codeTarget); _ = s.str("q"); return s.end() })
	}), peerFrame(frameAMQP, 3, codeFlow, func(c *composite) {
		c.uint(0)
		c.uint(100)
		c.uint(0)
		c.uint(100)
		c.uint(7)
		c.uint(0)
		c.uint(100)
	})...)
	return
}

// FuzzConnHostilePeer runs a real Conn against a peer that completes the
// handshake, grants credit, and then sends arbitrary bytes while the client
// transfers: whatever arrives, the client must not panic or hang, and every
// delivery must end with an outcome or an error.
func FuzzConnHostilePeer(f *testing.F) {
	ch3 := func(code byte, fill func(c *composite)) []byte { return peerFrame(frameAMQP, 3, code, fill) }
	f.Add(ch3(codeDisposition, func(c *composite) {
		c.bool(true)
		c.uint(0)
		c.uint(math.MaxUint32)
		c.bool(true)
		c.raw(func(b []byte) []byte { s := beginComposite(b, codeAccepted); return s.end() })
	}))
	f.Add(ch3(codeDetach, func(c *composite) { c.uint(7); c.bool(true) }))
	f.Add(ch3(codeEnd, func(c *composite) {}))
	f.Add(append(ch3(codeFlow, func(c *composite) {
		c.uint(0)
		c.uint(0)
		c.uint(0)
		c.uint(0)
		c.uint(7)
		c.uint(0)
		c.uint(0)
		c.omit()
		c.bool(true)
		c.bool(true)
	}), heartbeat...))
	f.Add(peerFrame(frameAMQP, 0, codeClose, func(c *composite) {}))
	f.Add([]byte{0, 0, 0, 9, 2, 0, 0, 3, 0})
	f.Add([]byte{})
	_, _, _, _, attach := fuzzPeerScript()
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx, server, c, s := fuzzPeerSession(t, attach, data)
		if s == nil {
			return
		}
		l, err := s.NewSender(ctx, SenderOptions{Name: "l", Target: "q"})
		if err != nil {
			if len(data) == 0 {
				t.Fatalf("the scripted peer must reach an attached link: %v", err)
			}
			return
		}
		ds := make([]Delivery, 3)
		b := NewBatch()
		// A peer that grants no credit or window holds the transfer: bound it.
		tctx, tcancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer tcancel()
		n, _ := l.Transfer(tctx, [][]byte{[]byte("a"), bytes.Repeat([]byte("b"), 2000), nil}, ds, b)
		_ = server.Close() // end the peer's stream: every delivery must now finish
		if err := b.Wait(ctx); err != nil {
			t.Fatalf("deliveries still pending after the connection ended: %v", err)
		}
		c.Abandon(ds)
		for i, d := range ds[:n] {
			if !d.Finished() {
				t.Fatalf("delivery %d has neither outcome nor error", i)
			}
		}
	})
}

// FuzzReceiverHostilePeer runs a receiver link against a peer that attaches
// it and then sends arbitrary bytes: the client must neither panic nor
// hang, and Receive must end with deliveries or an error.
func FuzzReceiverHostilePeer(f *testing.F) {
	ch3 := func(code byte, fill func(c *composite)) []byte { return peerFrame(frameAMQP, 3, code, fill) }
	transfer := func(id uint32, more bool, part string) []byte {
		b, fs := beginFrameBuf(nil, frameAMQP, 3)
		c := beginComposite(b, codeTransfer)
		c.uint(9)
		c.uint(id)
		c.binary(nil)
		c.uint(0)
		c.omit()
		c.bool(more)
		return endFrameBuf(append(c.end(), part...), fs)
	}
	f.Add(transfer(0, false, "\x00\x53\x75\xa0\x01x"))
	f.Add(append(transfer(0, true, "ab"), transfer(0, false, "c")...))
	f.Add(append(transfer(1, false, "x"), ch3(codeDetach, func(c *composite) { c.uint(9); c.bool(true) })...))
	f.Add(ch3(codeEnd, func(c *composite) {}))
	f.Add(ch3(codeFlow, func(c *composite) {
		c.uint(0)
		c.uint(10)
		c.uint(0)
		c.uint(10)
		c.uint(9)
		c.uint(0)
		c.uint(0)
		c.omit()
		c.omit()
		c.bool(true)
	}))
	f.Add([]byte{})
	attach := ch3(codeAttach, func(c *composite) {
		_ = c.str("r")
		c.uint(9)
		c.bool(false)
		c.omit()
		c.omit()
		c.raw(func(b []byte) []byte { s := beginComposite(b, codeSource); _ = s.str("q"); return s.end() })
		c.raw(func(b []byte) []byte { s := beginComposite(b, codeTarget); return s.end() })
	})
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx, server, c, s := fuzzPeerSession(t, attach, data)
		if s == nil {
			return
		}
		r, err := s.NewReceiver(ctx, ReceiverOptions{Name: "r", Source: "q"})
		if err != nil {
			if len(data) == 0 {
				t.Fatalf("the scripted peer must reach an attached link: %v", err)
			}
			return
		}
		_ = r.IssueCredit(10)
		// A peer that sends nothing more holds Receive: bound it.
		rctx, rcancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer rcancel()
		for {
			d, err := r.Receive(rctx)
			if err != nil {
				break
			}
			_ = r.Settle(d.ID, d.ID, State{Kind: StateAccepted}, 1)
		}
		_ = server.Close()
		<-c.Done()
		if _, err := r.Receive(ctx); err == nil || ctx.Err() != nil {
			t.Fatalf("Receive after the connection ended: %v", err)
		}
	})
}
