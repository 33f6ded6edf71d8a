// Package amqpwiretest is a small in-process AMQP 1.0 peer for tests of
// amqpwire's clients: it speaks enough of the protocol (SASL, open, begin,
// attach, flow, transfer, disposition, detach, end, close) for amqpwire's
// sender and receiver links to talk to it over TCP on 127.0.0.1. It settles
// every delivery with the outcome a test chooses, or cuts the link, session
// or connection at a chosen message, and it can send messages to a
// receiver. Its encoding is its own, so it checks amqpwire's rather than
// sharing it.
package amqpwiretest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/connect-solace/connect-solace/internal/widen"
	"github.com/stretchr/testify/require"
)

type (
	sym       string
	described struct {
		code   uint64
		fields []any // a list value; value holds anything else
		value  any
	}
	amqpArray []any
	amqpMap   [][2]any
)

// Performative and section descriptor codes (AMQP 1.0 part 2.7, 3.2, 5.3).
const (
	pOpen        = 0x10
	pBegin       = 0x11
	pAttach      = 0x12
	pFlow        = 0x13
	pTransfer    = 0x14
	pDisposition = 0x15
	pDetach      = 0x16
	pEnd         = 0x17
	pClose       = 0x18
	pError       = 0x1d
	sAccepted    = 0x24
	sRejected    = 0x25
	sReleased    = 0x26
	sModified    = 0x27
	saslMechs    = 0x40
	saslInit     = 0x41
	saslOutcome  = 0x44
	secProps     = 0x73
	secData      = 0x75
	secValue     = 0x77
)

// ---- encoding ----

func enc(b []byte, v any) []byte {
	switch t := v.(type) {
	case nil:
		return append(b, 0x40)
	case bool:
		if t {
			return append(b, 0x41)
		}
		return append(b, 0x42)
	case uint8:
		return append(b, 0x50, t)
	case uint16:
		return binary.BigEndian.AppendUint16(append(b, 0x60), t)
	case uint32:
		return binary.BigEndian.AppendUint32(append(b, 0x70), t)
	case uint64:
		return binary.BigEndian.AppendUint64(append(b, 0x80), t)
	case int8:
		return append(b, 0x51, byte(t))
	case int32:
		return binary.BigEndian.AppendUint32(append(b, 0x71), uint32(t))
	case int64:
		return binary.BigEndian.AppendUint64(append(b, 0x81), uint64(t))
	case string:
		return append(binary.BigEndian.AppendUint32(append(b, 0xb1), uint32(len(t))), t...)
	case sym:
		return append(binary.BigEndian.AppendUint32(append(b, 0xb3), uint32(len(t))), t...)
	case []byte:
		return append(binary.BigEndian.AppendUint32(append(b, 0xb0), uint32(len(t))), t...)
	case []any:
		var body []byte
		for _, f := range t {
			body = enc(body, f)
		}
		b = binary.BigEndian.AppendUint32(append(b, 0xd0), uint32(4+len(body)))
		return append(binary.BigEndian.AppendUint32(b, uint32(len(t))), body...)
	case amqpMap:
		var body []byte
		for _, kv := range t {
			body = enc(enc(body, kv[0]), kv[1])
		}
		b = binary.BigEndian.AppendUint32(append(b, 0xd1), uint32(4+len(body)))
		return append(binary.BigEndian.AppendUint32(b, uint32(2*len(t))), body...)
	case amqpArray:
		// Arrays of symbols only, which is all the peer sends.
		body := []byte{0xb3}
		for _, e := range t {
			s := e.(sym)
			body = append(binary.BigEndian.AppendUint32(body, uint32(len(s))), s...)
		}
		b = binary.BigEndian.AppendUint32(append(b, 0xf0), uint32(4+len(body)))
		return append(binary.BigEndian.AppendUint32(b, uint32(len(t))), body...)
	case *described:
		b = append(b, 0x00, 0x53, byte(t.code)) // smallulong descriptors, as brokers write them
		if t.fields != nil || t.value == nil {
			return enc(b, t.fields)
		}
		return enc(b, t.value)
	}
	panic(fmt.Sprintf("peer cannot encode %T", v))
}

func perf(code uint64, fields ...any) *described {
	if fields == nil {
		fields = []any{}
	}
	return &described{code: code, fields: fields}
}

// ---- decoding ----

var errPeerShort = errors.New("truncated")

func need(b []byte, n int) error {
	if len(b) < n {
		return errPeerShort
	}
	return nil
}

func dec(b []byte) (any, int, error) {
	if err := need(b, 1); err != nil {
		return nil, 0, err
	}
	c, p := b[0], b[1:]
	fixed := func(n int) ([]byte, error) { return p[:n], need(p, n) }
	switch c {
	case 0x00:
		d, n1, err := dec(p)
		if err != nil {
			return nil, 0, err
		}
		v, n2, err := dec(p[n1:])
		if err != nil {
			return nil, 0, err
		}
		out := &described{value: v}
		switch dd := d.(type) {
		case uint64:
			out.code = dd
		case sym:
			out.code = math.MaxUint64
		}
		if l, ok := v.([]any); ok {
			out.fields = l
		}
		return out, 1 + n1 + n2, nil
	case 0x40:
		return nil, 1, nil
	case 0x41:
		return true, 1, nil
	case 0x42:
		return false, 1, nil
	case 0x43:
		return uint32(0), 1, nil
	case 0x44:
		return uint64(0), 1, nil
	case 0x45:
		return []any{}, 1, nil
	}
	width := map[byte]int{0x50: 1, 0x51: 1, 0x52: 1, 0x53: 1, 0x54: 1, 0x55: 1, 0x56: 1, 0x60: 2, 0x61: 2,
		0x70: 4, 0x71: 4, 0x72: 4, 0x73: 4, 0x80: 8, 0x81: 8, 0x82: 8, 0x83: 8, 0x98: 16}
	if n, ok := width[c]; ok {
		v, err := fixed(n)
		if err != nil {
			return nil, 0, err
		}
		switch c {
		case 0x50:
			return v[0], 2, nil
		case 0x51:
			return int8(v[0]), 2, nil
		case 0x52:
			return uint32(v[0]), 2, nil
		case 0x53:
			return uint64(v[0]), 2, nil
		case 0x56:
			return v[0] != 0, 2, nil
		case 0x60:
			return binary.BigEndian.Uint16(v), 3, nil
		case 0x70:
			return binary.BigEndian.Uint32(v), 5, nil
		case 0x80:
			return binary.BigEndian.Uint64(v), 9, nil
		case 0x81, 0x83:
			return int64(binary.BigEndian.Uint64(v)), 9, nil
		}
		return append([]byte(nil), v...), 1 + n, nil
	}
	var size, hdr int
	switch c >> 4 {
	case 0xa, 0xc, 0xe:
		if err := need(p, 1); err != nil {
			return nil, 0, err
		}
		size, hdr = int(p[0]), 1
	case 0xb, 0xd, 0xf:
		if err := need(p, 4); err != nil {
			return nil, 0, err
		}
		size, hdr = int(binary.BigEndian.Uint32(p)), 4
	default:
		return nil, 0, fmt.Errorf("constructor %#x", c)
	}
	if err := need(p, hdr+size); err != nil {
		return nil, 0, err
	}
	body, total := p[hdr:hdr+size], 1+hdr+size
	switch c {
	case 0xa0, 0xb0:
		return append([]byte(nil), body...), total, nil
	case 0xa1, 0xb1:
		return string(body), total, nil
	case 0xa3, 0xb3:
		return sym(body), total, nil
	}
	// Compound: a count, then the elements.
	var count int
	if hdr == 1 {
		count, body = int(body[0]), body[1:]
	} else {
		count, body = int(binary.BigEndian.Uint32(body)), body[4:]
	}
	switch c {
	case 0xc0, 0xd0, 0xc1, 0xd1:
		var items []any
		for range count {
			v, n, err := dec(body)
			if err != nil {
				return nil, 0, err
			}
			items, body = append(items, v), body[n:]
		}
		if c == 0xc1 || c == 0xd1 {
			m := amqpMap{}
			for i := 0; i+1 < len(items); i += 2 {
				m = append(m, [2]any{items[i], items[i+1]})
			}
			return m, total, nil
		}
		if items == nil {
			items = []any{}
		}
		return items, total, nil
	case 0xe0, 0xf0:
		ctor := body[0]
		body = body[1:]
		arr := amqpArray{}
		for range count {
			// Re-prefix each element with the shared constructor.
			v, n, err := dec(append([]byte{ctor}, body...))
			if err != nil {
				return nil, 0, err
			}
			arr, body = append(arr, v), body[n-1:]
		}
		return arr, total, nil
	}
	return nil, 0, fmt.Errorf("constructor %#x", c)
}

func field(d *described, i int) any {
	if d == nil || i >= len(d.fields) {
		return nil
	}
	return d.fields[i]
}

// asUint reads a handle, count or other uint field; a field that is absent
// or not an integer reads 0.
func asUint(v any) uint32 {
	n, _ := widen.Int64(v)
	return uint32(n)
}

// ---- the peer ----

// Action is what the peer does with a message it received.
type Action int

// Actions.
const (
	Accept     Action = iota // settle accepted
	Reject                   // settle rejected with amqp:precondition-failed
	Release                  // settle released
	Modify                   // settle modified, undeliverable here
	Hold                     // do not settle (yet)
	DetachLink               // detach the message's link with an error, unsettled
	EndSession               // end the session with an error, unsettled
	DropConn                 // close the TCP connection, unsettled
	AcceptHeld               // settle every held delivery accepted, then this one
)

// Delivery is one complete message the peer received (whatever it did
// with it).
type Delivery struct {
	Target string // the link's target address ("" for the anonymous relay)
	To     string
	Body   string
	Conn   int // which connection (1-based) carried it
}

// Peer listens on 127.0.0.1. Set its fields in New's configure func.
type Peer struct {
	ln         net.Listener
	URL        string
	OfferRelay bool
	RefuseAuth bool
	// URL is amqp://127.0.0.1:port. OfferRelay offers ANONYMOUS-RELAY;
	// RefuseAuth fails every SASL login with code auth. Decide chooses what
	// to do with the n-th message received (1-based, over all connections);
	// Refuse whether to refuse a link's target address (amqp:not-found).
	Decide func(d Delivery, n int) Action
	Refuse func(target string) bool
	// RefuseCondition is the condition of a refusal; amqp:not-found when
	// empty.
	RefuseCondition string
	// Window, when set, is both the session's incoming window (transfer
	// frames) and each link's credit (messages): the peer grants them at
	// begin and attach, the window again after each frame and the credit
	// after each message it received, so a sender has to wait for the
	// peer's flows.
	Window uint32
	// Send, when set, are the bodies (amqp-value strings) the peer sends,
	// unsettled and as its credit allows, on a link the client attaches as
	// receiver; SourceEnd is what it does at the client's first flow after
	// it sent them all: DetachLink, EndSession or DropConn (anything else:
	// nothing), so a test can receive them before the link is lost.
	Send      []string
	SourceEnd Action
	// Presettle sends Send's messages settled.
	Presettle bool

	mu       sync.Mutex
	got      []Delivery
	attaches []string
	conns    int
}

// New starts a peer that the test's cleanup stops.
func New(t testing.TB, configure func(p *Peer)) *Peer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &Peer{ln: ln, URL: "amqp://" + ln.Addr().String(),
		Decide: func(Delivery, int) Action { return Accept },
		Refuse: func(string) bool { return false }}
	if configure != nil {
		configure(p)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			p.conns++
			n := p.conns
			p.mu.Unlock()
			go func() {
				defer c.Close()
				(&peerConn{p: p, c: c, n: n, links: map[uint32]*peerLink{}, ending: map[uint16]bool{}, detaching: map[uint32]bool{}, frames: map[uint16]uint32{}, sources: map[uint32]*peerSource{}}).serve()
			}()
		}
	}()
	return p
}

// Deliveries returns the messages received so far, in order.
func (p *Peer) Deliveries() []Delivery {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Delivery(nil), p.got...)
}

// Bodies returns the bodies of Deliveries.
func (p *Peer) Bodies() []string {
	var out []string
	for _, d := range p.Deliveries() {
		out = append(out, d.Body)
	}
	return out
}

// Connections returns how many connections were accepted.
func (p *Peer) Connections() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.conns
}

type peerLink struct {
	target  string
	partial []byte
	id      uint32
	count   uint32 // messages received
}

type peerConn struct {
	p     *Peer
	c     net.Conn
	n     int
	links map[uint32]*peerLink
	held  []uint32
	wmu   sync.Mutex
	// The peer's own end or detach is acknowledged by the client's; those
	// acknowledgements must not be answered.
	ending    map[uint16]bool
	detaching map[uint32]bool
	frames    map[uint16]uint32 // transfer frames received per channel
	sources   map[uint32]*peerSource
	nextID    uint32 // delivery-id of the peer's next transfer
}

// peerSource is a link on which the peer sends (the client's receiver).
type peerSource struct {
	sent  uint32 // deliveries sent, the link's delivery-count
	limit uint32 // delivery-count up to which the client gave credit
}

func (pc *peerConn) write(ftype byte, ch uint16, body *described, payload []byte) error {
	b := enc(nil, body)
	b = append(b, payload...)
	hdr := make([]byte, 8, 8+len(b))
	binary.BigEndian.PutUint32(hdr, uint32(8+len(b)))
	hdr[4], hdr[5] = 2, ftype
	binary.BigEndian.PutUint16(hdr[6:], ch)
	pc.wmu.Lock()
	defer pc.wmu.Unlock()
	_, err := pc.c.Write(append(hdr, b...))
	return err
}

func (pc *peerConn) read() (ch uint16, body *described, payload []byte, err error) {
	for {
		var hdr [8]byte
		if _, err = io.ReadFull(pc.c, hdr[:]); err != nil {
			return
		}
		size := binary.BigEndian.Uint32(hdr[:])
		rest := make([]byte, size-8)
		if _, err = io.ReadFull(pc.c, rest); err != nil {
			return
		}
		rest = rest[int(hdr[4])*4-8:]
		if len(rest) == 0 {
			continue // heartbeat
		}
		v, n, derr := dec(rest)
		if derr != nil {
			return 0, nil, nil, derr
		}
		d, _ := v.(*described)
		return binary.BigEndian.Uint16(hdr[6:]), d, rest[n:], nil
	}
}

func (pc *peerConn) protoHeader() ([]byte, error) {
	h := make([]byte, 8)
	_, err := io.ReadFull(pc.c, h)
	return h, err
}

func (pc *peerConn) serve() {
	// SASL layer.
	h, err := pc.protoHeader()
	if err != nil || !bytes.Equal(h, []byte("AMQP\x03\x01\x00\x00")) {
		return
	}
	_, _ = pc.c.Write(h)
	_ = pc.write(1, 0, perf(saslMechs, amqpArray{sym("PLAIN"), sym("ANONYMOUS")}), nil)
	if _, _, _, err := pc.read(); err != nil {
		return
	}
	code := uint8(0)
	if pc.p.RefuseAuth {
		code = 1
	}
	_ = pc.write(1, 0, perf(saslOutcome, code), nil)
	if code != 0 {
		return
	}
	if h, err = pc.protoHeader(); err != nil {
		return
	}
	_, _ = pc.c.Write(h)

	var caps any
	if pc.p.OfferRelay {
		caps = amqpArray{sym("ANONYMOUS-RELAY")}
	}
	for {
		ch, d, payload, err := pc.read()
		if err != nil || d == nil {
			return
		}
		switch d.code {
		case pOpen:
			_ = pc.write(0, 0, perf(pOpen, "test-peer", nil, uint32(65536), uint16(255), nil, nil, nil, caps), nil)
		case pBegin:
			_ = pc.write(0, ch, perf(pBegin, ch, uint32(0), pc.window(), uint32(math.MaxUint32), uint32(1023)), nil)
		case pAttach:
			pc.attach(ch, d)
		case pFlow:
			if !pc.flow(ch, d) {
				pc.drop()
				return
			}
		case pTransfer:
			if !pc.transfer(ch, d, payload) {
				pc.drop()
				return
			}
		case pDetach:
			h := asUint(field(d, 0))
			delete(pc.links, h)
			delete(pc.sources, h)
			if pc.detaching[h] {
				delete(pc.detaching, h)
				continue
			}
			_ = pc.write(0, ch, perf(pDetach, h, true), nil)
		case pEnd:
			if pc.ending[ch] {
				delete(pc.ending, ch)
				continue
			}
			_ = pc.write(0, ch, perf(pEnd), nil)
		case pClose:
			_ = pc.write(0, 0, perf(pClose), nil)
			return
		}
	}
}

// drop ends the connection as a vanished broker would, but with a FIN
// after everything already written rather than a reset that would discard
// it: the client sees the settlements sent so far, then end of stream.
func (pc *peerConn) drop() {
	if tc, ok := pc.c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
		_ = tc.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, _ = io.Copy(io.Discard, tc)
	}
}

func (pc *peerConn) attach(ch uint16, d *described) {
	name, handle := field(d, 0), asUint(field(d, 1))
	target := ""
	if td, ok := field(d, 6).(*described); ok {
		target, _ = field(td, 0).(string)
	}
	pc.p.mu.Lock()
	pc.p.attaches = append(pc.p.attaches, target)
	pc.p.mu.Unlock()
	if role, _ := field(d, 2).(bool); role {
		// The client receives: the peer sends, from delivery-count 0.
		pc.sources[handle] = &peerSource{}
		_ = pc.write(0, ch, perf(pAttach, name, handle, false, field(d, 3), field(d, 4), field(d, 5), field(d, 6),
			nil, nil, uint32(0)), nil)
		return
	}
	if pc.p.Refuse(target) {
		_ = pc.write(0, ch, perf(pAttach, name, handle, true, field(d, 3), field(d, 4), field(d, 5), nil), nil)
		cond := pc.p.RefuseCondition
		if cond == "" {
			cond = "amqp:not-found"
		}
		pc.detaching[handle] = true
		_ = pc.write(0, ch, perf(pDetach, handle, true, perf(pError, sym(cond), "no such address "+target)), nil)
		return
	}
	pc.links[handle] = &peerLink{target: target}
	_ = pc.write(0, ch, perf(pAttach, name, handle, true, field(d, 3), field(d, 4), field(d, 5), field(d, 6)), nil)
	_ = pc.write(0, ch, perf(pFlow, uint32(0), uint32(math.MaxUint32), uint32(0), uint32(math.MaxUint32),
		handle, asUint(field(d, 9)), pc.credit()), nil)
}

// flow sends on a source link what the client's credit allows of Send,
// or, once all was sent, does SourceEnd; false ends the connection.
func (pc *peerConn) flow(ch uint16, d *described) bool {
	h := asUint(field(d, 4))
	src := pc.sources[h]
	if field(d, 4) == nil || src == nil {
		return true
	}
	if int(src.sent) >= len(pc.p.Send) {
		switch pc.p.SourceEnd {
		case DetachLink:
			pc.detaching[h] = true
			delete(pc.sources, h)
			_ = pc.write(0, ch, perf(pDetach, h, true, perf(pError, sym("amqp:link:detach-forced"), "detached by the test peer")), nil)
		case EndSession:
			pc.ending[ch] = true
			pc.sources = map[uint32]*peerSource{}
			_ = pc.write(0, ch, perf(pEnd, perf(pError, sym("amqp:internal-error"), "session ended by the test peer")), nil)
		case DropConn:
			return false
		}
		return true
	}
	src.limit = asUint(field(d, 5)) + asUint(field(d, 6))
	for src.sent != src.limit && int(src.sent) < len(pc.p.Send) {
		tag := binary.BigEndian.AppendUint32(nil, pc.nextID)
		body := enc(nil, &described{code: secValue, value: pc.p.Send[src.sent]})
		_ = pc.write(0, ch, perf(pTransfer, h, pc.nextID, tag, uint32(0), pc.p.Presettle), body)
		pc.nextID++
		src.sent++
	}
	return true
}

func (pc *peerConn) window() uint32 {
	if pc.p.Window > 0 {
		return pc.p.Window
	}
	return math.MaxUint32
}

func (pc *peerConn) credit() uint32 {
	if pc.p.Window > 0 {
		return pc.p.Window
	}
	return 100000
}

// transfer handles one transfer frame; false ends the connection.
func (pc *peerConn) transfer(ch uint16, d *described, payload []byte) bool {
	l := pc.links[asUint(field(d, 0))]
	if l == nil {
		return true
	}
	if id := field(d, 1); id != nil {
		l.id = asUint(id)
	}
	pc.frames[ch]++
	l.partial = append(l.partial, payload...)
	if more, _ := field(d, 5).(bool); more {
		if pc.p.Window > 0 { // reopen the session window frame by frame
			_ = pc.write(0, ch, perf(pFlow, pc.frames[ch], pc.p.Window, uint32(0), uint32(math.MaxUint32)), nil)
		}
		return true
	}
	l.count++
	if pc.p.Window > 0 {
		_ = pc.write(0, ch, perf(pFlow, pc.frames[ch], pc.p.Window, uint32(0), uint32(math.MaxUint32),
			asUint(field(d, 0)), l.count, pc.p.Window), nil)
	}
	msg := Delivery{Target: l.target, Conn: pc.n}
	for b := l.partial; len(b) > 0; {
		v, n, err := dec(b)
		if err != nil {
			break
		}
		b = b[n:]
		sec, _ := v.(*described)
		if sec == nil {
			continue
		}
		switch sec.code {
		case secProps:
			msg.To, _ = field(sec, 2).(string)
		case secValue:
			msg.Body, _ = sec.value.(string)
		case secData:
			body, _ := sec.value.([]byte)
			msg.Body = string(body)
		}
	}
	l.partial = nil
	pc.p.mu.Lock()
	pc.p.got = append(pc.p.got, msg)
	n := len(pc.p.got)
	pc.p.mu.Unlock()

	settle := func(id uint32, state *described) {
		_ = pc.write(0, ch, perf(pDisposition, true, id, nil, true, state), nil)
	}
	switch pc.p.Decide(msg, n) {
	case Accept:
		settle(l.id, perf(sAccepted))
	case AcceptHeld:
		for _, id := range pc.held {
			settle(id, perf(sAccepted))
		}
		pc.held = nil
		settle(l.id, perf(sAccepted))
	case Reject:
		settle(l.id, perf(sRejected, perf(pError, sym("amqp:precondition-failed"), "refused by the test peer")))
	case Release:
		settle(l.id, perf(sReleased))
	case Modify:
		settle(l.id, perf(sModified, true, true))
	case Hold:
		pc.held = append(pc.held, l.id)
	case DetachLink:
		pc.detaching[asUint(field(d, 0))] = true
		_ = pc.write(0, ch, perf(pDetach, asUint(field(d, 0)), true, perf(pError, sym("amqp:link:detach-forced"), "detached by the test peer")), nil)
		delete(pc.links, asUint(field(d, 0)))
	case EndSession:
		pc.ending[ch] = true
		_ = pc.write(0, ch, perf(pEnd, perf(pError, sym("amqp:internal-error"), "session ended by the test peer")), nil)
		pc.links = map[uint32]*peerLink{}
	case DropConn:
		return false
	}
	return true
}
