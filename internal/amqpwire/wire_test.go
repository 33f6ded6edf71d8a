package amqpwire

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/Azure/go-amqp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/amqpwire/amqpwiretest"
)

// TestMessageMatchesGoAMQP encodes messages here and with go-amqp's
// Message.MarshalBinary: byte-identical when no section holds a map of more
// than one entry (map order is Go's random iteration order in both), and
// equal after decoding otherwise.
func TestMessageMatchesGoAMQP(t *testing.T) {
	created := time.UnixMilli(1700000000123)
	seq := uint32(7)
	long := strings.Repeat("y", 300)
	str := func(s string) *string { return &s }
	tests := []struct {
		name  string
		ours  Message
		their amqp.Message
		exact bool
	}{
		{"bytes body, one annotation, default priority", Message{
			Durable: true, Priority: 4, Annotations: []Annotation{{"x-opt-jms-msg-type", int8(3)}},
			MessageID: "ID:1", To: "/queue/q", ContentType: "application/octet-stream", CreationTime: created,
			Data: bytes.Repeat([]byte("x"), 1024), HasData: true,
		}, amqp.Message{
			Header: &amqp.MessageHeader{Durable: true, Priority: 4}, Annotations: amqp.Annotations{amqp.Symbol("x-opt-jms-msg-type"): int8(3)},
			Properties: &amqp.MessageProperties{MessageID: "ID:1", To: str("/queue/q"), ContentType: str("application/octet-stream"), CreationTime: &created},
			Data:       [][]byte{bytes.Repeat([]byte("x"), 1024)},
		}, true},
		{"text body, every property, ttl, one app property", Message{
			Priority: 0, TTL: 30 * time.Second, MessageID: "ID:" + long, To: "queue://q", Subject: "type", ReplyTo: "topic://r",
			CorrelationID: "c", AbsoluteExpiryTime: created.Add(30 * time.Second), CreationTime: created, GroupID: "g", GroupSequence: &seq,
			ApplicationProperties: map[string]any{"k": int64(300)}, Text: "hello " + long, HasText: true,
		}, amqp.Message{
			Header: &amqp.MessageHeader{TTL: 30 * time.Second},
			Properties: &amqp.MessageProperties{MessageID: "ID:" + long, To: str("queue://q"), Subject: str("type"), ReplyTo: str("topic://r"),
				CorrelationID: "c", AbsoluteExpiryTime: ptr(created.Add(30 * time.Second)), CreationTime: &created, GroupID: str("g"), GroupSequence: &seq},
			ApplicationProperties: map[string]any{"k": int64(300)}, Value: "hello " + long,
		}, true},
		{"map body and several properties of each type", Message{
			Priority: 9, Annotations: []Annotation{{"x-opt-jms-msg-type", int8(2)}, {"x-opt-jms-dest", int8(1)}},
			MessageID: "ID:2", To: "t", CreationTime: created,
			ApplicationProperties: map[string]any{"s": "v", "b": true, "i8": int8(-1), "i16": int16(-300), "i32": int32(70000), "i64": int64(-5), "f32": float32(1.5), "f64": 2.25, "n": nil},
			Value:                 map[string]any{"a": int32(1), "b": []byte{1, 2}, "c": "s", "d": 1e9},
		}, amqp.Message{
			Header: &amqp.MessageHeader{Priority: 9}, Annotations: amqp.Annotations{amqp.Symbol("x-opt-jms-msg-type"): int8(2), amqp.Symbol("x-opt-jms-dest"): int8(1)},
			Properties:            &amqp.MessageProperties{MessageID: "ID:2", To: str("t"), CreationTime: &created},
			ApplicationProperties: map[string]any{"s": "v", "b": true, "i8": int8(-1), "i16": int16(-300), "i32": int32(70000), "i64": int64(-5), "f32": float32(1.5), "f64": 2.25, "n": nil},
			Value:                 map[string]any{"a": int32(1), "b": []byte{1, 2}, "c": "s", "d": 1e9},
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ours, err := AppendMessage(nil, &tc.ours)
			require.NoError(t, err)
			theirs, err := tc.their.MarshalBinary()
			require.NoError(t, err)
			if tc.exact {
				assert.Equal(t, theirs, ours)
			}
			var a, b amqp.Message
			require.NoError(t, a.UnmarshalBinary(ours))
			require.NoError(t, b.UnmarshalBinary(theirs))
			assert.Equal(t, b, a)
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestMessageRejectsInvalidUTF8(t *testing.T) {
	for _, m := range []Message{
		{To: "a\xff"},
		{ApplicationProperties: map[string]any{"k": "a\xffb"}},
		{Value: "\xff"},
		{ApplicationProperties: map[string]any{"k": struct{}{}}},
	} {
		b, err := AppendMessage([]byte("keep"), &m)
		require.Error(t, err)
		assert.Equal(t, []byte("keep"), b, "the buffer is left as it was")
	}
}

// TestValueFixedWidth decodes every fixed-width type, in each of its
// encodings, at the edges of its range: the Go type and value, and a
// truncated encoding is an error.
func TestValueFixedWidth(t *testing.T) {
	for _, tc := range []struct {
		enc  []byte
		want any
	}{
		{[]byte{tUbyte, 0xff}, uint8(255)},
		{[]byte{tByte, 0x80}, int8(-128)},
		{[]byte{tByte, 0x7f}, int8(127)},
		{[]byte{tBoolean, 0x01}, true},
		{[]byte{tBoolean, 0x00}, false},
		{[]byte{tUshort, 0xff, 0xfe}, uint16(0xfffe)},
		{[]byte{tShort, 0xff, 0xfe}, int16(-2)},
		{[]byte{tSmallUint, 0xff}, uint32(255)},
		{[]byte{tUint, 0xff, 0xff, 0xff, 0xff}, uint32(math.MaxUint32)},
		{[]byte{tSmallInt, 0xff}, int32(-1)},
		{[]byte{tSmallInt, 0x7f}, int32(127)},
		{[]byte{tInt, 0x80, 0, 0, 0}, int32(math.MinInt32)},
		{[]byte{tSmallUlong, 0xff}, uint64(255)},
		{[]byte{tUlong, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, uint64(math.MaxUint64)},
		{[]byte{tSmallLong, 0x80}, int64(-128)},
		{[]byte{tLong, 0x80, 0, 0, 0, 0, 0, 0, 0}, int64(math.MinInt64)},
		{[]byte{tLong, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe}, int64(-2)},
		{[]byte{tFloat, 0x3f, 0xc0, 0, 0}, float32(1.5)},
		{[]byte{tDouble, 0xc0, 0x04, 0, 0, 0, 0, 0, 0}, -2.5},
		{[]byte{tChar, 0, 0x01, 0xf6, 0x00}, Char('😀')},
		{[]byte{tTimestamp, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, time.UnixMilli(-1).UTC()},
		{[]byte{tTimestamp, 0, 0, 0x01, 0x8b, 0xcf, 0xe5, 0x68, 0x00}, time.UnixMilli(1700000000000).UTC()},
		{append([]byte{tUUID}, "0123456789abcdef"...), UUID([]byte("0123456789abcdef"))},
	} {
		t.Run(fmt.Sprintf("%#02x %v", tc.enc[0], tc.want), func(t *testing.T) {
			got, err := Value(tc.enc)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			_, err = Value(tc.enc[:len(tc.enc)-1])
			assert.ErrorIs(t, err, errShort)
		})
	}
	for _, enc := range [][]byte{{tDecimal32, 0, 0, 0, 0}, {tDecimal64, 0, 0, 0, 0, 0, 0, 0, 0}, {tDecimal128}} {
		_, err := Value(enc)
		assert.ErrorIs(t, err, errDecimal)
	}
	_, err := Value([]byte{tDecimal32, 0})
	assert.ErrorIs(t, err, errShort, "a truncated decimal32 is short before it is unsupported")
}

// TestAttachRejectsInvalidUTF8: an attach that cannot be encoded leaves
// the connection's buffer as it was, so that the frames around it still
// reach the peer whole.
func TestAttachRejectsInvalidUTF8(t *testing.T) {
	for _, a := range []attachParams{
		{name: "a\xff"},
		{name: "l", target: "q\xff"},
		{name: "l", properties: map[string]any{"k": "a\xffb"}},
	} {
		b, err := appendAttach([]byte("keep"), 1, a)
		require.Error(t, err)
		assert.Equal(t, []byte("keep"), b, "the buffer is left as it was")
	}
	for _, a := range []receiverAttachParams{
		{name: "a\xff"},
		{name: "l", source: "q\xff"},
		{name: "l", source: "q", selector: "a = '\xff'"},
	} {
		b, err := appendReceiverAttach([]byte("keep"), 1, a)
		require.Error(t, err)
		assert.Equal(t, []byte("keep"), b, "the buffer is left as it was")
	}
}

func dialPeer(t *testing.T, p *amqpwiretest.Peer, cfg Config) *Conn {
	t.Helper()
	nc, err := net.Dial("tcp", strings.TrimPrefix(p.URL, "amqp://"))
	require.NoError(t, err)
	c, err := Open(t.Context(), nc, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func payloads(n, size int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		body := fmt.Sprintf("%d", i)
		if size > len(body) {
			body += strings.Repeat("p", size-len(body))
		}
		b, err := AppendMessage(nil, &Message{To: "queue://q", MessageID: fmt.Sprint(i), Value: body})
		if err != nil {
			panic(err)
		}
		out[i] = b
	}
	return out
}

// TestTransferOutcomes sends a run against the test peer, which settles each
// delivery with a chosen outcome; a message larger than a frame is split
// into several with more=true, and reassembled by the peer.
func TestTransferOutcomes(t *testing.T) {
	actions := []amqpwiretest.Action{amqpwiretest.Accept, amqpwiretest.Reject, amqpwiretest.Release, amqpwiretest.Modify, amqpwiretest.Accept}
	p := amqpwiretest.New(t, func(p *amqpwiretest.Peer) {
		p.OfferRelay = true
		p.Decide = func(_ amqpwiretest.Delivery, n int) amqpwiretest.Action { return actions[n-1] }
	})
	c := dialPeer(t, p, Config{Username: "u", Password: "p", IdleTimeout: time.Minute})
	assert.Equal(t, []string{"ANONYMOUS-RELAY"}, c.OfferedCapabilities())
	s, err := c.NewSession(t.Context())
	require.NoError(t, err)
	l, err := s.NewSender(t.Context(), SenderOptions{Target: "queue://q", Capabilities: []string{"queue"}})
	require.NoError(t, err)

	ps := payloads(len(actions), 10)
	ps[4] = payloads(5, 200_000)[4] // the peer's max-frame-size is 64 KiB
	ds := make([]Delivery, len(ps))
	b := NewBatch()
	n, err := l.Transfer(t.Context(), ps, ds, b)
	require.NoError(t, err)
	require.Equal(t, len(ps), n)
	require.NoError(t, b.Wait(t.Context()))
	want := []StateKind{StateAccepted, StateRejected, StateReleased, StateModified, StateAccepted}
	for i, d := range ds {
		require.NoError(t, d.Err, "delivery %d", i)
		assert.Equal(t, want[i], d.State.Kind, "delivery %d", i)
	}
	assert.Equal(t, "amqp:precondition-failed", ds[1].State.Error.Condition)
	assert.True(t, ds[3].State.UndeliverableHere)
	got := p.Deliveries()
	require.Len(t, got, 5)
	assert.Equal(t, "0ppppppppp", got[0].Body)
	assert.Len(t, got[4].Body, 200_000)
}

// TestTransferLinkAndSessionLoss has the peer cut the link, then the
// session: the unsettled deliveries fail with a *LinkError or *SessionError
// carrying the peer's condition, and a new session works.
func TestTransferLinkAndSessionLoss(t *testing.T) {
	for _, cut := range []amqpwiretest.Action{amqpwiretest.DetachLink, amqpwiretest.EndSession} {
		t.Run(fmt.Sprint(cut), func(t *testing.T) {
			p := amqpwiretest.New(t, func(p *amqpwiretest.Peer) {
				p.Decide = func(_ amqpwiretest.Delivery, n int) amqpwiretest.Action {
					if n == 2 {
						return cut
					}
					return amqpwiretest.Accept
				}
			})
			c := dialPeer(t, p, Config{})
			s, err := c.NewSession(t.Context())
			require.NoError(t, err)
			l, err := s.NewSender(t.Context(), SenderOptions{Target: "q"})
			require.NoError(t, err)
			ds := make([]Delivery, 3)
			b := NewBatch()
			_, _ = l.Transfer(t.Context(), payloads(3, 1), ds, b)
			require.NoError(t, b.Wait(t.Context()))
			assert.NoError(t, ds[0].Err)
			for _, d := range ds[1:] {
				if cut == amqpwiretest.DetachLink {
					var le *LinkError
					require.ErrorAs(t, d.Err, &le)
					assert.Equal(t, "amqp:link:detach-forced", le.Remote.Condition)
				} else {
					var se *SessionError
					require.ErrorAs(t, d.Err, &se)
					assert.Equal(t, "amqp:internal-error", se.Remote.Condition)
				}
			}
			s2 := s
			if cut == amqpwiretest.EndSession {
				s2, err = c.NewSession(t.Context())
				require.NoError(t, err)
			}
			l2, err := s2.NewSender(t.Context(), SenderOptions{Target: "q"})
			require.NoError(t, err)
			ds = make([]Delivery, 1)
			b = NewBatch()
			_, err = l2.Transfer(t.Context(), payloads(1, 1), ds, b)
			require.NoError(t, err)
			require.NoError(t, b.Wait(t.Context()))
			assert.Equal(t, StateAccepted, ds[0].State.Kind)
		})
	}
}

func TestAttachRefused(t *testing.T) {
	p := amqpwiretest.New(t, func(p *amqpwiretest.Peer) { p.Refuse = func(target string) bool { return target == "bad" } })
	c := dialPeer(t, p, Config{})
	s, err := c.NewSession(t.Context())
	require.NoError(t, err)
	_, err = s.NewSender(t.Context(), SenderOptions{Target: "bad"})
	var le *LinkError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "amqp:not-found", le.Remote.Condition)
	_, err = s.NewSender(t.Context(), SenderOptions{Target: "good"})
	require.NoError(t, err)
}

func TestConnectionLossFailsDeliveries(t *testing.T) {
	p := amqpwiretest.New(t, func(p *amqpwiretest.Peer) {
		p.Decide = func(amqpwiretest.Delivery, int) amqpwiretest.Action { return amqpwiretest.DropConn }
	})
	c := dialPeer(t, p, Config{})
	s, err := c.NewSession(t.Context())
	require.NoError(t, err)
	l, err := s.NewSender(t.Context(), SenderOptions{Target: "q"})
	require.NoError(t, err)
	ds := make([]Delivery, 2)
	b := NewBatch()
	_, _ = l.Transfer(t.Context(), payloads(2, 1), ds, b)
	require.NoError(t, b.Wait(t.Context()))
	for _, d := range ds {
		var ce *ConnError
		require.ErrorAs(t, d.Err, &ce)
	}
	<-c.Done()
	_, err = l.Transfer(t.Context(), payloads(1, 1), make([]Delivery, 1), NewBatch())
	require.Error(t, err)
}

func TestSASLRefused(t *testing.T) {
	p := amqpwiretest.New(t, func(p *amqpwiretest.Peer) { p.RefuseAuth = true })
	nc, err := net.Dial("tcp", strings.TrimPrefix(p.URL, "amqp://"))
	require.NoError(t, err)
	defer nc.Close()
	_, err = Open(t.Context(), nc, Config{Username: "u", Password: "secret"})
	var se *SASLError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, uint8(1), se.Code)
	assert.NotContains(t, err.Error(), "secret")
}

// TestAttachAbandoned gives up on an attach before the peer answers: the
// peer's late attach and detach for it are handled, and the connection
// stays usable.
func TestAttachAbandoned(t *testing.T) {
	p := amqpwiretest.New(t, nil)
	c := dialPeer(t, p, Config{})
	s, err := c.NewSession(t.Context())
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = s.NewSender(ctx, SenderOptions{Target: "q"})
	require.ErrorIs(t, err, context.Canceled)
	l, err := s.NewSender(t.Context(), SenderOptions{Target: "q"})
	require.NoError(t, err)
	ds := make([]Delivery, 1)
	b := NewBatch()
	_, err = l.Transfer(t.Context(), payloads(1, 1), ds, b)
	require.NoError(t, err)
	require.NoError(t, b.Wait(t.Context()))
	assert.Equal(t, StateAccepted, ds[0].State.Kind)
	assert.NoError(t, c.Err())
}

// TestTransferWaitsForWindowAndCredit has a peer that grants a session
// window of 2 frames and 2 credits at a time: a run of 10 messages, one of
// them split in more frames than the window, waits for its flows and arrives whole and in
// order.
func TestTransferWaitsForWindowAndCredit(t *testing.T) {
	p := amqpwiretest.New(t, func(p *amqpwiretest.Peer) { p.Window = 2 })
	c := dialPeer(t, p, Config{})
	s, err := c.NewSession(t.Context())
	require.NoError(t, err)
	l, err := s.NewSender(t.Context(), SenderOptions{Target: "q"})
	require.NoError(t, err)
	ps := payloads(10, 10)
	ps[5] = payloads(6, 300_000)[5] // five frames of the peer's 64 KiB, more than its window
	ds := make([]Delivery, len(ps))
	b := NewBatch()
	n, err := l.Transfer(t.Context(), ps, ds, b)
	require.NoError(t, err)
	require.Equal(t, len(ps), n)
	require.NoError(t, b.Wait(t.Context()))
	for i, d := range ds {
		require.NoError(t, d.Err, "delivery %d", i)
		assert.Equal(t, StateAccepted, d.State.Kind, "delivery %d", i)
	}
	got := p.Bodies()
	require.Len(t, got, 10)
	for i, body := range got {
		assert.True(t, strings.HasPrefix(body, fmt.Sprint(i)), "message %d in order", i)
	}
	assert.Len(t, got[5], 300_000)
}
