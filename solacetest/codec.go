package solacetest

// This file is the codec layer: SMF frames and the payloads of the control
// sub-protocols (ClientCtrl, SMP, AssuredCtrl) to and from bytes. It holds no
// broker state, so it can be fuzzed on its own (FuzzDecode).

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"
)

// SMF protocol numbers (header word 1, byte 1 & 0x3f).
const (
	protoAssuredCtrl = 9
	protoKeepAliveV2 = 11
	protoClientCtrl  = 12
	protoTrMsg       = 13
	protoSMP         = 15
)

// Header flag bits in byte 0 of an SMF frame.
const (
	flagADF  = 0x10 // assured-delivery flag: guaranteed message
	flagDMQE = 0x08 // dead-message-queue eligible
)

// Standard SMF header parameter numbers.
const (
	pPublisherID     = 1
	pPriority        = 3
	pUsername        = 6
	pPassword        = 7
	pResponse        = 8
	pDeliveryMode    = 16
	pADMsgID         = 17
	pADPrevMsgID     = 18
	pADRedelivered   = 19
	pContentsSummary = 22
	pADFlowID        = 23
	pTopic           = 24
	pADFlowRedeliv   = 25
	pADTTL           = 28
	pExtendedStream  = 31
)

// Lightweight parameter types.
const (
	lightCorrelationTag = 0
	lightTopicOffset    = 1
	lightQueueOffset    = 2
	lightAckImmediately = 3
	lightHeaderExt      = 4
)

// Extended parameter stream (P31) entry types.
const (
	extAckMessageID   = 0x29
	extSpoolerUnique  = 0x2c
	extRedeliverCount = 0x2e
)

// maxFrameSize bounds the frames the broker reads into memory. It is a
// little above the 30 000 000-byte message size advertised at login. A
// well-formed larger frame is not an error: as PubSub+ does with a message
// above its maximum size, the broker reads its header, skips its payload
// without buffering it, and rejects the message (readFrame, session.go).
const maxFrameSize = 32 << 20

// maxHeaderSize bounds the header (parameters) of an oversized frame.
const maxHeaderSize = 1 << 20

// errBadFrame reports bytes that are not a well-formed SMF frame.
var errBadFrame = errors.New("malformed SMF frame")

// param is one SMF header parameter, standard or lightweight.
type param struct {
	Light bool
	UH    byte // the two "unknown parameter handling" bits (standard only)
	Type  byte
	Value []byte
}

// frame is one SMF message.
type frame struct {
	Flags    byte // byte 0 without the version bits: DI, EE, DTO, ADF, DMQE
	UH       byte // byte 1 top two bits
	Proto    byte
	Byte2    byte // priority, retain, ACF, SNI; forwarded as is
	TTL      byte
	Params   []param
	Payload  []byte
	rawBytes []byte // the frame as read, for verbatim forwarding
	// Oversize is the length of a payload above maxFrameSize that
	// readFrame skipped; such a frame has no Payload and no rawBytes.
	Oversize int
	// Wire is the frame's length on the wire, as read.
	Wire int
	// rawParams are already-encoded parameters written before Params.
	rawParams []byte
	// rxAt is when the read loop got the frame; zero for frames made or
	// decoded elsewhere.
	rxAt time.Time
}

// arrival is when the frame arrived, or now for a frame without rxAt.
func (f *frame) arrival() time.Time {
	if f.rxAt.IsZero() {
		return time.Now()
	}
	return f.rxAt
}

// param returns the first standard parameter of type t.
func (f *frame) param(t byte) ([]byte, bool) {
	for _, p := range f.Params {
		if !p.Light && p.Type == t {
			return p.Value, true
		}
	}
	return nil, false
}

// light returns the first lightweight parameter of type t.
func (f *frame) light(t byte) ([]byte, bool) {
	for _, p := range f.Params {
		if p.Light && p.Type == t {
			return p.Value, true
		}
	}
	return nil, false
}

// correlationTag returns the request's correlation tag, if it has one.
func (f *frame) correlationTag() ([]byte, bool) {
	return f.light(lightCorrelationTag)
}

// readFrame reads one frame from r.
func readFrame(r *bufio.Reader) (*frame, error) { return readFrameInto(r, nil, nil) }

// readFrameInto reads one frame from r into reuse, whose parameter slice it
// reuses, or into a new frame when reuse is nil. The read loop passes the
// same frame for every frame of a connection: handlers keep parts of the
// frame's bytes (which are new for every frame) but never the frame itself
// or its Params, so reusing them spares the collector a frame and a
// parameter slice on every publish.
//
// With sl set, a small frame's bytes are carved out of sl's chunk rather
// than allocated on their own (see slab).
func readFrameInto(r *bufio.Reader, reuse *frame, sl *slab) (*frame, error) {
	var hdr [12]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	if hdr[0]&7 != 3 {
		return nil, fmt.Errorf("%w: SMF version %d, want 3", errBadFrame, hdr[0]&7)
	}
	total := binary.BigEndian.Uint32(hdr[8:12])
	if total < 12 {
		return nil, fmt.Errorf("%w: total length %d", errBadFrame, total)
	}
	if total > maxFrameSize {
		return readOversizeFrame(r, hdr, total)
	}
	buf := sl.alloc(int(total))
	copy(buf, hdr[:])
	if _, err := io.ReadFull(r, buf[12:]); err != nil {
		return nil, err
	}
	f := reuse
	if f == nil {
		f = new(frame)
	}
	n, err := decodeFrameInto(f, buf)
	if err != nil {
		return nil, err
	}
	if n != len(buf) {
		return nil, fmt.Errorf("%w: trailing bytes", errBadFrame)
	}
	f.Wire = len(buf)
	return f, nil
}

// slab hands out the byte slices of small frames from larger chunks, so
// that a publish costs one allocation in slabChunk bytes' worth of frames
// rather than one each: the spool keeps the frame's bytes (payload and
// parameters), and allocating them one by one was a tenth of the broker's
// CPU per persistent publish. A kept message keeps its chunk alive, so at
// most slabChunk bytes per spooled message in the worst case (a queue that
// keeps one message of every chunk). Only the read loop uses a slab. A nil
// slab allocates every slice on its own.
type slab struct {
	free []byte
}

const (
	slabChunk = 16 << 10
	slabMax   = slabChunk / 8 // larger frames get slices of their own
)

func (s *slab) alloc(n int) []byte {
	if s == nil || n > slabMax {
		return make([]byte, n)
	}
	if len(s.free) < n {
		s.free = make([]byte, slabChunk)
	}
	b := s.free[:n:n]
	s.free = s.free[n:]
	return b
}

// readOversizeFrame reads the header of a frame too large to hold, skips its
// payload, and returns the frame without it, Oversize set to the payload's
// length.
func readOversizeFrame(r *bufio.Reader, hdr [12]byte, total uint32) (*frame, error) {
	hlen := binary.BigEndian.Uint32(hdr[4:8])
	if hlen < 12 || hlen > total || hlen > maxHeaderSize {
		return nil, fmt.Errorf("%w: header length %d of a %d-byte frame", errBadFrame, hlen, total)
	}
	buf := make([]byte, hlen)
	copy(buf, hdr[:])
	if _, err := io.ReadFull(r, buf[12:]); err != nil {
		return nil, err
	}
	binary.BigEndian.PutUint32(buf[8:12], hlen) // the header alone, as a frame without payload
	f, _, err := decodeFrame(buf)
	if err != nil {
		return nil, err
	}
	skipped, err := io.CopyN(io.Discard, r, int64(total-hlen))
	if err != nil {
		return nil, err
	}
	f.Oversize = int(skipped)
	f.Wire = int(total)
	f.rawBytes = nil // never forwarded
	return f, nil
}

// decodeFrame parses the frame at the start of b and returns the number of
// bytes it took up.
func decodeFrame(b []byte) (*frame, int, error) {
	f := new(frame)
	n, err := decodeFrameInto(f, b)
	if err != nil {
		return nil, 0, err
	}
	return f, n, nil
}

// decodeFrameInto is decodeFrame into f, overwriting all of it but reusing
// the room of its parameter slice.
func decodeFrameInto(f *frame, b []byte) (int, error) {
	if len(b) < 12 {
		return 0, fmt.Errorf("%w: short header", errBadFrame)
	}
	if b[0]&7 != 3 {
		return 0, fmt.Errorf("%w: SMF version %d, want 3", errBadFrame, b[0]&7)
	}
	hlen := binary.BigEndian.Uint32(b[4:8])
	total := binary.BigEndian.Uint32(b[8:12])
	if hlen < 12 || total < hlen || uint64(total) > uint64(len(b)) {
		return 0, fmt.Errorf("%w: header length %d, total %d, have %d", errBadFrame, hlen, total, len(b))
	}
	params := f.Params[:0]
	if params == nil {
		// Room for a typical publish's parameters in one allocation.
		params = make([]param, 0, 12)
	}
	clear(params[:cap(params)]) // drop the last frame's values for the collector
	*f = frame{
		Flags:    b[0] &^ 7,
		UH:       b[1] >> 6,
		Proto:    b[1] & 0x3f,
		Byte2:    b[2],
		TTL:      b[3],
		Payload:  b[hlen:total],
		rawBytes: b[:total],
		Params:   params,
	}
	ps := b[12:hlen]
	for len(ps) > 0 {
		c := ps[0]
		switch {
		case c == 0: // padding
			ps = ps[1:]
		case c&0x20 != 0: // lightweight
			n := int(c & 3)
			if len(ps) < 1+n {
				return 0, fmt.Errorf("%w: short lightweight parameter", errBadFrame)
			}
			f.Params = append(f.Params, param{Light: true, Type: (c >> 2) & 7, Value: ps[1 : 1+n]})
			ps = ps[1+n:]
		default:
			if len(ps) < 2 {
				return 0, fmt.Errorf("%w: short parameter", errBadFrame)
			}
			l, hdr := int(ps[1]), 2
			if l == 0 {
				if len(ps) < 6 {
					return 0, fmt.Errorf("%w: short long-form parameter", errBadFrame)
				}
				l64 := uint64(binary.BigEndian.Uint32(ps[2:6]))
				if l64 < 6 || l64 > uint64(len(ps)) {
					return 0, fmt.Errorf("%w: long parameter length %d", errBadFrame, l64)
				}
				l, hdr = int(l64), 6
			}
			if l < hdr || l > len(ps) {
				return 0, fmt.Errorf("%w: parameter length %d", errBadFrame, l)
			}
			f.Params = append(f.Params, param{UH: c >> 6, Type: c & 0x1f, Value: ps[hdr:l]})
			ps = ps[l:]
		}
	}
	return int(total), nil
}

// encode appends the wire form of f to dst. Lengths are computed here, so
// callers only fill in fields.
func (f *frame) encode(dst []byte) []byte {
	start := len(dst)
	dst = append(dst, f.Flags&^7|3, f.UH<<6|f.Proto&0x3f, f.Byte2, f.TTL, 0, 0, 0, 0, 0, 0, 0, 0)
	dst = append(dst, f.rawParams...)
	for _, p := range f.Params {
		dst = appendParam(dst, p)
	}
	hlen := len(dst) - start
	dst = append(dst, f.Payload...)
	binary.BigEndian.PutUint32(dst[start+4:], uint32(hlen))
	binary.BigEndian.PutUint32(dst[start+8:], uint32(len(dst)-start))
	return dst
}

// appendParam appends one header parameter, choosing the long form when the
// value does not fit a one-byte length.
func appendParam(dst []byte, p param) []byte {
	if p.Light {
		return append(append(dst, 0x20|(p.Type&7)<<2|byte(len(p.Value))&3), p.Value...)
	}
	c := p.UH<<6 | p.Type&0x1f
	if len(p.Value)+2 <= 255 {
		return append(append(dst, c, byte(len(p.Value)+2)), p.Value...)
	}
	dst = append(dst, c, 0)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(p.Value)+6))
	return append(dst, p.Value...)
}

// Parameter value helpers.

func u8(v byte) []byte { return []byte{v} }

func u32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

func u64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

func cstr(s string) []byte { return append([]byte(s), 0) }

// beUint reads a big-endian unsigned integer of 1 to 8 bytes.
func beUint(b []byte) uint64 {
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	return v
}

// trimNUL drops a trailing NUL from a C string value.
func trimNUL(b []byte) string {
	if n := len(b); n > 0 && b[n-1] == 0 {
		b = b[:n-1]
	}
	return string(b)
}

// responseParam builds P8: a u32 status code followed by the text.
func responseParam(code uint32, text string) param {
	return param{Type: pResponse, Value: append(u32(code), text...)}
}

// parseResponse splits a P8 value into code and text.
func parseResponse(v []byte) (uint32, string, bool) {
	if len(v) < 4 {
		return 0, "", false
	}
	return binary.BigEndian.Uint32(v), string(v[4:]), true
}

// ---- ClientCtrl (proto 12) ----

// ClientCtrl message types.
const (
	ccLogin  = 0
	ccUpdate = 1
)

// ClientCtrl parameter numbers (login request and response).
const (
	ccSoftwareVersion = 0
	ccClientName      = 5
	ccVPNName         = 6
	ccP2PTopic        = 8
	ccRouterCaps      = 9
	ccVRIDName        = 10
	ccExtendedCaps    = 19
	ccKeepAlive       = 24
)

// clientCtrl is a decoded ClientCtrl payload.
type clientCtrl struct {
	Type   byte
	Params map[byte][]byte
}

// ctrlPayloadLen reads the length of a 6-byte-headed control payload (what,
// for errors), the 4 bytes at off, and checks it against b.
func ctrlPayloadLen(b []byte, off int, what string) (int, error) {
	if len(b) < 6 {
		return 0, fmt.Errorf("%w: short %s payload", errBadFrame, what)
	}
	l := binary.BigEndian.Uint32(b[off : off+4])
	if l < 6 || uint64(l) > uint64(len(b)) {
		return 0, fmt.Errorf("%w: %s length %d", errBadFrame, what, l)
	}
	return int(l), nil
}

func decodeClientCtrl(b []byte) (*clientCtrl, error) {
	l, err := ctrlPayloadLen(b, 2, "ClientCtrl")
	if err != nil {
		return nil, err
	}
	cc := &clientCtrl{Type: b[1], Params: map[byte][]byte{}}
	ps := b[6:l]
	for len(ps) > 0 {
		if len(ps) < 5 {
			return nil, fmt.Errorf("%w: short ClientCtrl parameter", errBadFrame)
		}
		pl := binary.BigEndian.Uint32(ps[1:5])
		if pl < 5 || uint64(pl) > uint64(len(ps)) {
			return nil, fmt.Errorf("%w: ClientCtrl parameter length %d", errBadFrame, pl)
		}
		cc.Params[ps[0]&0x7f] = ps[5:pl]
		ps = ps[pl:]
	}
	return cc, nil
}

// ccParam is one ClientCtrl parameter for encoding, kept in order.
type ccParam struct {
	Type  byte
	Value []byte
}

func encodeClientCtrl(typ byte, params []ccParam) []byte {
	b := []byte{0x81, typ, 0, 0, 0, 0}
	for _, p := range params {
		b = append(b, p.Type)
		b = binary.BigEndian.AppendUint32(b, uint32(len(p.Value)+5))
		b = append(b, p.Value...)
	}
	binary.BigEndian.PutUint32(b[2:6], uint32(len(b)))
	return b
}

// ---- SMP (proto 15) ----

// SMP message types.
const (
	smpAddSubscription      = 0
	smpRemoveSubscription   = 1
	smpAddQueueSubscription = 2
	smpRemoveQueueSub       = 3
)

// SMP flag bits.
const smpFlagResponseRequired = 0x08

// smpMsg is a decoded SMP payload.
type smpMsg struct {
	Type  byte
	Flags byte
	Queue string // queue subscriptions only
	Topic string
}

func decodeSMP(b []byte) (*smpMsg, error) {
	l, err := ctrlPayloadLen(b, 1, "SMP")
	if err != nil {
		return nil, err
	}
	m := &smpMsg{Type: b[0] & 0x7f, Flags: b[5]}
	rest := b[6:l]
	switch m.Type {
	case smpAddQueueSubscription, smpRemoveQueueSub:
		if len(rest) < 1 || int(rest[0])+1 > len(rest) {
			return nil, fmt.Errorf("%w: SMP queue name", errBadFrame)
		}
		m.Queue = trimNUL(rest[1 : 1+int(rest[0])])
		rest = rest[1+int(rest[0]):]
		if len(rest) < 1 || int(rest[0])+1 > len(rest) {
			return nil, fmt.Errorf("%w: SMP topic", errBadFrame)
		}
		m.Topic = trimNUL(rest[1 : 1+int(rest[0])])
	default:
		m.Topic = trimNUL(rest)
	}
	return m, nil
}

// ---- AssuredCtrl (proto 9) ----

// AssuredCtrl message types.
const (
	adOpenFlow   = 0
	adAck        = 3
	adBind       = 4
	adUnbind     = 5
	adCloseFlow  = 7
	adCreate     = 8
	adDelete     = 9
	adFlowUpdate = 12
)

// AssuredCtrl parameter numbers.
const (
	apLastMsgIDSent   = 1
	apLastMsgIDAcked  = 2
	apWindow          = 3
	apAppAck          = 5
	apFlowID          = 6
	apQueueName       = 7
	apDTEName         = 8
	apFlowName        = 10
	apDurability      = 11
	apAccessType      = 12
	apSelector        = 13
	apLastMsgIDRecved = 16
	apFlowType        = 18
	apGrantedPerms    = 21
	apRespectTTL      = 22
	apActiveFlow      = 32
	apWantFlowUpdate  = 33
	apEPBehaviour     = 34
	apPublisherID     = 35
	apMaxRedelivery   = 42
	apEndpointID      = 44
	apMaxUnacked      = 49
	apStartReplay     = 51
	apSpoolerUniqueID = 54
)

// epDeliveryCountEnabled is the endpoint-behaviour (p34) bit that tells the
// client the endpoint reports delivery counts.
const epDeliveryCountEnabled = 0x08

// adctrlVersion is the AssuredCtrl version the broker speaks; p19 of the login
// response advertises 2..4, and the client then uses 4 (the v3+ layout).
const adctrlVersion = 4

// adParam is one AssuredCtrl parameter.
type adParam struct {
	Type  byte
	Value []byte
}

// adctrl is a decoded AssuredCtrl payload.
type adctrl struct {
	Type   byte
	Params []adParam
}

func (a *adctrl) get(t byte) ([]byte, bool) {
	for _, p := range a.Params {
		if p.Type == t {
			return p.Value, true
		}
	}
	return nil, false
}

func (a *adctrl) uint(t byte) (uint64, bool) {
	v, ok := a.get(t)
	if !ok || len(v) == 0 || len(v) > 8 {
		return 0, false
	}
	return beUint(v), true
}

func decodeAdCtrl(b []byte) (*adctrl, error) {
	if len(b) < 6 {
		return nil, fmt.Errorf("%w: short AssuredCtrl payload", errBadFrame)
	}
	if v := b[0] & 0x3f; v < 3 {
		return nil, fmt.Errorf("%w: AssuredCtrl version %d is not supported", errBadFrame, v)
	}
	l := binary.BigEndian.Uint32(b[2:6])
	if l < 6 || uint64(l) > uint64(len(b)) {
		return nil, fmt.Errorf("%w: AssuredCtrl length %d", errBadFrame, l)
	}
	a := &adctrl{Type: b[1]}
	ps := b[6:l]
	for len(ps) > 0 {
		if ps[0] == 0 { // pad byte
			ps = ps[1:]
			continue
		}
		if len(ps) < 2 {
			return nil, fmt.Errorf("%w: short AssuredCtrl parameter", errBadFrame)
		}
		pl, hdr := int(ps[1]), 2
		if pl == 0 {
			if len(ps) < 6 {
				return nil, fmt.Errorf("%w: short AssuredCtrl long parameter", errBadFrame)
			}
			l64 := uint64(binary.BigEndian.Uint32(ps[2:6]))
			if l64 > uint64(len(ps)) {
				return nil, fmt.Errorf("%w: AssuredCtrl parameter length %d", errBadFrame, l64)
			}
			pl, hdr = int(l64), 6
		}
		if pl < hdr || pl > len(ps) {
			return nil, fmt.Errorf("%w: AssuredCtrl parameter length %d", errBadFrame, pl)
		}
		a.Params = append(a.Params, adParam{Type: ps[0] & 0x3f, Value: ps[hdr:pl]})
		ps = ps[pl:]
	}
	return a, nil
}

func encodeAdCtrl(typ byte, params []adParam) []byte {
	b := []byte{adctrlVersion, typ, 0, 0, 0, 0}
	for _, p := range params {
		if len(p.Value)+2 <= 255 {
			b = append(b, p.Type, byte(len(p.Value)+2))
		} else {
			b = append(b, p.Type, 0)
			b = binary.BigEndian.AppendUint32(b, uint32(len(p.Value)+6))
		}
		b = append(b, p.Value...)
	}
	binary.BigEndian.PutUint32(b[2:6], uint32(len(b)))
	return b
}

// appAck is one application-ack range of a client ack (p5).
type appAck struct {
	Min, Max uint64
	Outcome  byte
}

// Settlement outcomes carried in p5.
const (
	outcomeAccepted = 0
	outcomeFailed   = 1
	outcomeReleased = 2
	outcomeRejected = 3
)

func decodeAppAck(v []byte) (appAck, bool) {
	if len(v) != 16 && len(v) != 17 {
		return appAck{}, false
	}
	a := appAck{Min: binary.BigEndian.Uint64(v[0:8]), Max: binary.BigEndian.Uint64(v[8:16])}
	if len(v) == 17 {
		a.Outcome = v[16]
	}
	return a, true
}

// ---- Extended parameter stream (P31) ----

// extParam is one entry of the extended parameter stream.
type extParam struct {
	Type  uint16
	Value []byte
}

// decodeExtStream splits a P31 value into entries.
func decodeExtStream(b []byte) ([]extParam, error) {
	var out []extParam
	for len(b) > 0 {
		if len(b) < 2 {
			return nil, fmt.Errorf("%w: short extended parameter", errBadFrame)
		}
		h := binary.BigEndian.Uint16(b)
		format, typ := (h>>12)&7, h&0xfff
		hdr, n := 2, 0
		switch format {
		case 0:
		case 1, 2:
			n = int(format)
		case 3:
			n = 4
		case 4:
			n = 8
		case 5:
			if len(b) < 3 {
				return nil, fmt.Errorf("%w: short extended parameter", errBadFrame)
			}
			hdr, n = 3, int(b[2])-3
		case 6:
			if len(b) < 4 {
				return nil, fmt.Errorf("%w: short extended parameter", errBadFrame)
			}
			hdr, n = 4, int(binary.BigEndian.Uint16(b[2:4]))-4
		default:
			return nil, fmt.Errorf("%w: extended parameter format %d", errBadFrame, format)
		}
		if n < 0 || hdr+n > len(b) {
			return nil, fmt.Errorf("%w: extended parameter length", errBadFrame)
		}
		out = append(out, extParam{Type: typ, Value: b[hdr : hdr+n]})
		b = b[hdr+n:]
	}
	return out, nil
}

// encodeExtStream builds a P31 value, picking the fixed-size formats for
// 0/1/2/4/8-byte values and the length-prefixed ones otherwise.
func encodeExtStream(ps []extParam) []byte {
	var b []byte
	for _, p := range ps {
		var format uint16
		switch n := len(p.Value); {
		case n == 0:
			format = 0
		case n == 1, n == 2:
			format = uint16(n)
		case n == 4:
			format = 3
		case n == 8:
			format = 4
		case n+3 <= 255:
			format = 5
		default:
			format = 6
		}
		b = binary.BigEndian.AppendUint16(b, format<<12|p.Type&0xfff)
		switch format {
		case 5:
			b = append(b, byte(len(p.Value)+3))
		case 6:
			b = binary.BigEndian.AppendUint16(b, uint16(len(p.Value)+4))
		}
		b = append(b, p.Value...)
	}
	return b
}

// ---- Message contents summary (P22) ----

// Contents-summary section types.
const (
	sectionXMLMeta     = 0
	sectionXMLPayload  = 1
	sectionBinary      = 2
	sectionConsumerIDs = 3
	sectionBinaryMeta  = 4
)

// section is one part of a message payload described by P22.
type section struct {
	Type byte
	Len  int
}

func decodeContentsSummary(v []byte) ([]section, error) {
	var out []section
	for len(v) > 0 {
		typ, size := v[0]>>4, int(v[0]&0x0f)
		if size < 2 || size > len(v) || size > 5 {
			return nil, fmt.Errorf("%w: contents summary element size %d", errBadFrame, size)
		}
		out = append(out, section{Type: typ, Len: int(beUint(v[1:size]))})
		v = v[size:]
	}
	return out, nil
}

// applicationPayload returns the binary attachment of a message, i.e. what a
// publisher handed to the API: without P22 the whole payload, otherwise the
// binary-attachment section, with an SDT string wrapper (type 7) removed.
func applicationPayload(summary []byte, payload []byte) []byte {
	if summary == nil {
		return payload
	}
	secs, err := decodeContentsSummary(summary)
	if err != nil {
		return payload
	}
	off := 0
	for _, s := range secs {
		if off+s.Len > len(payload) {
			return payload
		}
		if s.Type == sectionBinary {
			return unwrapSDTString(payload[off : off+s.Len])
		}
		off += s.Len
	}
	return nil
}

// unwrapSDTString strips the SDT string header (type 7, 1-4 length bytes
// counting the header) and the trailing NUL the client adds to string
// payloads; anything else is returned unchanged.
func unwrapSDTString(b []byte) []byte {
	if len(b) < 2 || b[0]>>2 != 7 {
		return b
	}
	n := int(b[0]&3) + 1
	if len(b) < 1+n {
		return b
	}
	l := int(beUint(b[1 : 1+n]))
	if l != len(b) || b[l-1] != 0 {
		return b
	}
	return b[1+n : l-1]
}
