package amqpwire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Performative, SASL and delivery-state descriptor codes (AMQP 1.0 parts
// 2.7, 3.4, 5.3).
const (
	codeOpen        = 0x10
	codeBegin       = 0x11
	codeAttach      = 0x12
	codeFlow        = 0x13
	codeTransfer    = 0x14
	codeDisposition = 0x15
	codeDetach      = 0x16
	codeEnd         = 0x17
	codeClose       = 0x18
	codeError       = 0x1d
	codeReceived    = 0x23
	codeAccepted    = 0x24
	codeRejected    = 0x25
	codeReleased    = 0x26
	codeModified    = 0x27
	codeSource      = 0x28
	codeTarget      = 0x29

	codeSASLMechanisms = 0x40
	codeSASLInit       = 0x41
	codeSASLChallenge  = 0x42
	codeSASLResponse   = 0x43
	codeSASLOutcome    = 0x44
)

// Frame types.
const (
	frameAMQP = 0x00
	frameSASL = 0x01
)

// Error is an AMQP error: a condition symbol and a description.
type Error struct {
	Condition   string
	Description string
}

func (e *Error) Error() string {
	if e.Description == "" {
		return e.Condition
	}
	return e.Condition + ": " + e.Description
}

// The error conditions AMQP 1.0 defines (part 2.8.15 to 2.8.18).
const (
	CondDecodeError           = "amqp:decode-error"
	CondFrameSizeTooSmall     = "amqp:frame-size-too-small"
	CondIllegalState          = "amqp:illegal-state"
	CondInternalError         = "amqp:internal-error"
	CondInvalidField          = "amqp:invalid-field"
	CondNotAllowed            = "amqp:not-allowed"
	CondNotFound              = "amqp:not-found"
	CondNotImplemented        = "amqp:not-implemented"
	CondPreconditionFailed    = "amqp:precondition-failed"
	CondResourceDeleted       = "amqp:resource-deleted"
	CondResourceLimitExceeded = "amqp:resource-limit-exceeded"
	CondResourceLocked        = "amqp:resource-locked"
	CondUnauthorizedAccess    = "amqp:unauthorized-access"

	CondConnectionForced    = "amqp:connection:forced"
	CondConnectionRedirect  = "amqp:connection:redirect"
	CondFramingError        = "amqp:connection:framing-error"
	CondErrantLink          = "amqp:session:errant-link"
	CondHandleInUse         = "amqp:session:handle-in-use"
	CondUnattachedHandle    = "amqp:session:unattached-handle"
	CondWindowViolation     = "amqp:session:window-violation"
	CondDetachForced        = "amqp:link:detach-forced"
	CondLinkRedirect        = "amqp:link:redirect"
	CondMessageSizeExceeded = "amqp:link:message-size-exceeded"
	CondStolen              = "amqp:link:stolen"
	// CondTransferLimitExceeded: the peer sent far past the link's credit.
	CondTransferLimitExceeded = "amqp:link:transfer-limit-exceeded"
)

// StandardCondition reports whether cond is one of the conditions AMQP 1.0
// defines, rather than a broker's own symbol.
func StandardCondition(cond string) bool {
	switch cond {
	case CondDecodeError, CondFrameSizeTooSmall, CondIllegalState, CondInternalError, CondInvalidField,
		CondNotAllowed, CondNotFound, CondNotImplemented, CondPreconditionFailed, CondResourceDeleted,
		CondResourceLimitExceeded, CondResourceLocked, CondUnauthorizedAccess,
		CondConnectionForced, CondConnectionRedirect, CondFramingError,
		CondErrantLink, CondHandleInUse, CondUnattachedHandle, CondWindowViolation,
		CondDetachForced, CondLinkRedirect, CondMessageSizeExceeded, CondStolen, CondTransferLimitExceeded:
		return true
	}
	return false
}

// describedList reads b as the described list with descriptor code (what
// names it in the error) and returns up to cap(out) of its items in out.
func describedList(b []byte, code uint64, what string, out [][]byte) ([][]byte, error) {
	got, v, err := described(b)
	if err != nil {
		return nil, err
	}
	if got != code {
		return nil, fmt.Errorf("amqp: expected %s, got descriptor %#x", what, got)
	}
	return listItems(v, cap(out), out)
}

func decodeError(b []byte) (*Error, error) {
	if b == nil {
		return nil, nil
	}
	var buf [3][]byte
	f, err := describedList(b, codeError, "an error", buf[:0])
	if err != nil {
		return nil, err
	}
	r := fieldReader{f, &err}
	e := &Error{Condition: r.str(0), Description: r.str(1)}
	if err != nil {
		return nil, err
	}
	return e, nil
}

// StateKind is the outcome a delivery was settled with.
type StateKind uint8

// Outcomes.
const (
	StateNone StateKind = iota // settled without a terminal outcome
	StateAccepted
	StateRejected
	StateReleased
	StateModified
)

// State is a delivery's terminal state.
type State struct {
	Kind StateKind
	// Error is the rejected outcome's error, if it carried one.
	Error *Error
	// DeliveryFailed and UndeliverableHere are the modified outcome's flags.
	DeliveryFailed, UndeliverableHere bool
}

func decodeState(b []byte) (State, bool, error) {
	if b == nil {
		return State{}, false, nil
	}
	code, v, err := described(b)
	if err != nil {
		return State{}, false, err
	}
	var buf [3][]byte
	r := listReader(v, buf[:0], &err)
	if err != nil {
		return State{}, false, err
	}
	switch code {
	case codeAccepted:
		return State{Kind: StateAccepted}, true, nil
	case codeRejected:
		e, err := decodeError(r.get(0))
		return State{Kind: StateRejected, Error: e}, true, err
	case codeReleased:
		return State{Kind: StateReleased}, true, nil
	case codeModified:
		s := State{Kind: StateModified, DeliveryFailed: r.bool(0), UndeliverableHere: r.bool(1)}
		return s, true, err
	case codeReceived:
		return State{}, false, nil // not terminal
	}
	return State{}, false, nil // transactional or unknown states: not terminal here
}

// frame is one decoded frame: its type, channel and performative, and the
// payload after the performative (a transfer's message bytes).
type frame struct {
	typ     byte
	channel uint16
	code    uint64 // descriptor of the performative; 0 with body nil for a heartbeat
	fields  fields
	payload []byte
}

// maxFields is the most fields of a performative the decoder keeps (attach
// has 14).
const maxFields = 16

// parseFrame decodes a whole frame (size included) into fr, reusing its
// field slice. The returned slices alias buf.
func parseFrame(buf []byte, fr *frame) error {
	if len(buf) < 8 {
		return errShort
	}
	size := binary.BigEndian.Uint32(buf)
	doff := int(buf[4]) * 4
	if uint64(size) != uint64(len(buf)) || doff < 8 || doff > len(buf) {
		return errors.New("amqp: malformed frame header")
	}
	fr.typ, fr.channel = buf[5], binary.BigEndian.Uint16(buf[6:])
	body := buf[doff:]
	fr.code, fr.payload = 0, nil
	fr.fields = fr.fields[:0]
	if len(body) == 0 {
		return nil // heartbeat
	}
	code, v, err := described(body)
	if err != nil {
		return err
	}
	f, err := listItems(v, maxFields, fr.fields)
	if err != nil {
		return err
	}
	fr.code, fr.fields = code, f
	// What follows the performative (a transfer's payload) starts after
	// the 0x00, the descriptor and the list v.
	_, dn, _ := descriptorAt(body[1:])
	fr.payload = body[1+dn+len(v):]
	return nil
}

// ---- decoded performatives from the peer ----

type openFrame struct {
	containerID  string
	maxFrameSize uint32
	channelMax   uint16
	idleTimeout  uint32 // ms
	offeredCaps  []string
	properties   map[string]any
}

func decodeOpen(f fields) (o openFrame, err error) {
	r := fieldReader{f, &err}
	o = openFrame{
		containerID:  r.str(0),
		maxFrameSize: r.uint(2, math.MaxUint32),
		channelMax:   r.ushort(3, math.MaxUint16),
		idleTimeout:  r.uint(4, 0),
		offeredCaps:  r.symbols(7),
	}
	if err == nil {
		o.properties, err = StringMap(f.get(9))
	}
	return o, err
}

type beginFrame struct {
	remoteChannel  *uint16
	nextOutgoingID uint32
	incomingWindow uint32
	outgoingWindow uint32
	handleMax      uint32
}

func decodeBegin(f fields) (b beginFrame, err error) {
	r := fieldReader{f, &err}
	if f.get(0) != nil {
		ch := r.ushort(0, 0)
		b.remoteChannel = &ch
	}
	b.nextOutgoingID = r.uint(1, 0)
	b.incomingWindow = r.uint(2, 0)
	b.outgoingWindow = r.uint(3, 0)
	b.handleMax = r.uint(4, math.MaxUint32)
	return b, err
}

type attachFrame struct {
	name           string
	handle         uint32
	role           bool // true: receiver
	hasSource      bool
	hasTarget      bool
	maxMessageSize uint64
	// initialDeliveryCount is the sender's, when the peer is the sender.
	initialDeliveryCount uint32
	// filterKeys are the keys of the source's filter map.
	filterKeys []string
}

func decodeAttach(f fields) (a attachFrame, err error) {
	r := fieldReader{f, &err}
	a = attachFrame{
		name:      r.str(0),
		handle:    r.uint(1, 0),
		role:      r.bool(2),
		hasSource: f.get(5) != nil,
		hasTarget: f.get(6) != nil,
	}
	if a.hasSource && err == nil {
		a.filterKeys, err = sourceFilterKeys(f.get(5))
	}
	a.initialDeliveryCount = r.uint(9, 0)
	if b := f.get(10); b != nil {
		var uerr error
		if a.maxMessageSize, _, uerr = ulongAt(b); uerr != nil {
			r.fail(errors.New("amqp: attach max-message-size is not a ulong"))
		}
	}
	return a, err
}

// sourceFilterKeys returns the keys of a source's filter map (field 7).
func sourceFilterKeys(b []byte) ([]string, error) {
	var buf [11][]byte
	sf, err := describedList(b, codeSource, "a source", buf[:0])
	if err != nil {
		return nil, err
	}
	fm := fields(sf).get(7)
	if fm == nil {
		return nil, nil
	}
	items, err := listItems(fm, math.MaxInt, nil)
	if err != nil {
		return nil, fmt.Errorf("amqp: source filter: %w", err)
	}
	var keys []string
	for i := 0; i+1 < len(items); i += 2 {
		k, err := stringAt(items[i])
		if err != nil {
			return nil, fmt.Errorf("amqp: source filter key: %w", err)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

type transferFrame struct {
	handle     uint32
	deliveryID uint32
	hasID      bool
	settled    bool
	more       bool
	aborted    bool
}

func decodeTransfer(f fields) (t transferFrame, err error) {
	r := fieldReader{f, &err}
	t = transferFrame{
		handle:     r.uint(0, 0),
		deliveryID: r.uint(1, 0),
		hasID:      f.get(1) != nil,
		settled:    r.bool(4),
		more:       r.bool(5),
		aborted:    r.bool(9),
	}
	return t, err
}

type flowFrame struct {
	nextIncomingID *uint32
	incomingWindow uint32
	nextOutgoingID uint32
	outgoingWindow uint32
	handle         *uint32
	deliveryCount  *uint32
	linkCredit     *uint32
	drain, echo    bool
}

func decodeFlow(f fields) (fl flowFrame, err error) {
	r := fieldReader{f, &err}
	fl = flowFrame{
		nextIncomingID: r.optUint(0),
		incomingWindow: r.uint(1, 0),
		nextOutgoingID: r.uint(2, 0),
		outgoingWindow: r.uint(3, 0),
		handle:         r.optUint(4),
		deliveryCount:  r.optUint(5),
		linkCredit:     r.optUint(6),
		drain:          r.bool(8),
		echo:           r.bool(9),
	}
	return fl, err
}

type dispositionFrame struct {
	role        bool
	first, last uint32
	settled     bool
	state       State
	terminal    bool
}

func decodeDisposition(f fields) (d dispositionFrame, err error) {
	r := fieldReader{f, &err}
	d.role, d.first = r.bool(0), r.uint(1, 0)
	d.last, d.settled = r.uint(2, d.first), r.bool(3)
	if err == nil {
		d.state, d.terminal, err = decodeState(f.get(4))
	}
	return d, err
}

type closingFrame struct { // detach, end, close
	handle uint32
	closed bool
	err    *Error
}

func decodeDetach(f fields) (c closingFrame, err error) {
	r := fieldReader{f, &err}
	c.handle, c.closed = r.uint(0, 0), r.bool(1)
	if err == nil {
		c.err, err = decodeError(f.get(2))
	}
	return c, err
}

func decodeEndOrClose(f fields) (c closingFrame, err error) {
	c.err, err = decodeError(f.get(0))
	return
}

// ---- performatives we send ----

// beginFrameBuf starts a frame: the 8-byte header with the size filled in
// by endFrame.
func beginFrameBuf(b []byte, typ byte, channel uint16) ([]byte, int) {
	start := len(b)
	b = append(b, 0, 0, 0, 0, 2, typ, byte(channel>>8), byte(channel))
	return b, start
}

func endFrameBuf(b []byte, start int) []byte {
	binary.BigEndian.PutUint32(b[start:], uint32(len(b)-start))
	return b
}

// heartbeat is an empty frame.
var heartbeat = []byte{0, 0, 0, 8, 2, 0, 0, 0}

type openParams struct {
	containerID  string
	hostname     string
	maxFrameSize uint32
	channelMax   uint16
	idleTimeout  uint32 // ms; 0 for none
}

func appendOpen(b []byte, o openParams) ([]byte, error) {
	b, fs := beginFrameBuf(b, frameAMQP, 0)
	c := beginComposite(b, codeOpen)
	if err := c.str(o.containerID); err != nil {
		return b, fmt.Errorf("container ID: %w", err)
	}
	if err := c.optStr(o.hostname); err != nil {
		return b, fmt.Errorf("host name: %w", err)
	}
	c.uint(o.maxFrameSize)
	c.ushort(o.channelMax)
	if o.idleTimeout > 0 {
		c.uint(o.idleTimeout)
	}
	return endFrameBuf(c.end(), fs), nil
}

func appendBegin(b []byte, channel uint16, nextOutgoingID, incomingWindow, outgoingWindow, handleMax uint32) []byte {
	b, fs := beginFrameBuf(b, frameAMQP, channel)
	c := beginComposite(b, codeBegin)
	c.omit() // remote-channel: we begin
	c.uint(nextOutgoingID)
	c.uint(incomingWindow)
	c.uint(outgoingWindow)
	c.uint(handleMax)
	return endFrameBuf(c.end(), fs)
}

// attachParams is a sender link's attach.
type attachParams struct {
	name         string
	handle       uint32
	target       string // "" for no address (anonymous relay)
	durable      bool   // target durability: configuration
	capabilities []string
	properties   map[string]any
}

// beginAttach starts an attach frame with the fields that lead both
// roles' attaches: the link's name, handle and role, and the settle modes
// left at their defaults (mixed: a sender's deliveries are sent
// unsettled; first).
func beginAttach(b []byte, channel uint16, name string, handle uint32, receiver bool) (composite, int, error) {
	b, fs := beginFrameBuf(b, frameAMQP, channel)
	c := beginComposite(b, codeAttach)
	if err := c.str(name); err != nil {
		return c, fs, fmt.Errorf("link name: %w", err)
	}
	c.uint(handle)
	c.bool(receiver)
	c.omit() // snd-settle-mode
	c.omit() // rcv-settle-mode
	return c, fs, nil
}

func appendAttach(b []byte, channel uint16, a attachParams) ([]byte, error) {
	c, fs, err := beginAttach(b, channel, a.name, a.handle, false)
	if err != nil {
		return b, err
	}
	// source: an empty source, as go-amqp sends.
	c.raw(func(b []byte) []byte {
		s := beginComposite(b, codeSource)
		return s.end()
	})
	var terr error
	c.raw(func(b []byte) []byte {
		t := beginComposite(b, codeTarget)
		if a.target != "" {
			terr = t.str(a.target)
		} else {
			t.omit()
		}
		if a.durable {
			t.uint(1) // configuration
		} else {
			t.omit()
		}
		t.omit() // expiry-policy
		t.omit() // timeout
		t.omit() // dynamic
		t.omit() // dynamic-node-properties
		t.symbols(a.capabilities)
		return t.end()
	})
	if terr != nil {
		return b, fmt.Errorf("target address: %w", terr)
	}
	c.omit()  // unsettled
	c.omit()  // incomplete-unsettled
	c.uint(0) // initial-delivery-count
	c.omit()  // max-message-size
	c.omit()  // offered-capabilities
	c.omit()  // desired-capabilities
	if len(a.properties) > 0 {
		var perr error
		c.raw(func(b []byte) []byte {
			b, start := beginMap(b)
			for k, v := range a.properties {
				b = AppendSymbol(b, k)
				if b, perr = AppendValue(b, v); perr != nil {
					return b
				}
			}
			return endMap(b, start, 2*len(a.properties))
		})
		if perr != nil {
			return b, fmt.Errorf("link properties: %w", perr)
		}
	}
	return endFrameBuf(c.end(), fs), nil
}

// receiverAttachParams is a receiver link's attach.
type receiverAttachParams struct {
	name         string
	handle       uint32
	source       string
	durability   uint32 // terminus durability: 0 none, 1 configuration, 2 unsettled-state
	expiryPolicy string // "" for the default (session-end)
	selector     string // "" for none
	capabilities []string
	// maxMessageSize is the largest message the receiver takes: sent so
	// that the broker does not deliver a larger one, which the receiver
	// would detach the link for (and, redelivered, again after every
	// reconnect).
	maxMessageSize uint64
}

// Selector filter of the AMQP filter registry (what Qpid JMS sends).
const (
	SelectorFilterName = "apache.org:selector-filter:string"
	selectorFilterCode = 0x0000468C00000004
)

// appendReceiverAttach writes a receiver link's attach as go-amqp writes
// it: a source with address, durability, expiry policy, filter and
// capabilities, each left out when unset, and an empty target.
func appendReceiverAttach(b []byte, channel uint16, a receiverAttachParams) ([]byte, error) {
	c, fs, err := beginAttach(b, channel, a.name, a.handle, true)
	if err != nil {
		return b, err
	}
	var serr error
	c.raw(func(b []byte) []byte {
		s := beginComposite(b, codeSource)
		if a.source != "" {
			if serr = s.str(a.source); serr != nil {
				return s.end()
			}
		} else {
			s.omit()
		}
		if a.durability != 0 {
			s.uint(a.durability)
		} else {
			s.omit()
		}
		if a.expiryPolicy != "" {
			s.symbol(a.expiryPolicy)
		} else {
			s.omit()
		}
		s.omit() // timeout
		s.omit() // dynamic
		s.omit() // dynamic-node-properties
		s.omit() // distribution-mode
		if a.selector != "" {
			s.raw(func(b []byte) []byte {
				b, start := beginMap(b)
				b = AppendSymbol(b, SelectorFilterName)
				b = AppendUlong(append(b, 0x00), selectorFilterCode)
				b, serr = AppendString(b, a.selector)
				return endMap(b, start, 2)
			})
		} else {
			s.omit()
		}
		s.omit() // default-outcome
		s.omit() // outcomes
		s.symbols(a.capabilities)
		return s.end()
	})
	if serr != nil {
		return b, fmt.Errorf("source: %w", serr)
	}
	c.raw(func(b []byte) []byte {
		t := beginComposite(b, codeTarget)
		return t.end()
	})
	if a.maxMessageSize > 0 {
		c.omit() // unsettled
		c.omit() // incomplete-unsettled
		c.omit() // initial-delivery-count: the sender's
		c.ulong(a.maxMessageSize)
	}
	return endFrameBuf(c.end(), fs), nil
}

// appendDisposition settles the deliveries first..last as the receiver,
// with state st.
func appendDisposition(b []byte, channel uint16, first, last uint32, st State) []byte {
	b, fs := beginFrameBuf(b, frameAMQP, channel)
	c := beginComposite(b, codeDisposition)
	c.bool(true) // role receiver
	c.uint(first)
	if last != first {
		c.uint(last)
	} else {
		c.omit()
	}
	c.bool(true) // settled
	c.raw(func(b []byte) []byte { return appendState(b, st) })
	return endFrameBuf(c.end(), fs)
}

func appendState(b []byte, st State) []byte {
	switch st.Kind {
	case StateRejected:
		s := beginComposite(b, codeRejected)
		if st.Error != nil {
			s.raw(func(b []byte) []byte { return appendError(b, st.Error) })
		}
		return s.end()
	case StateReleased:
		s := beginComposite(b, codeReleased)
		return s.end()
	case StateModified:
		s := beginComposite(b, codeModified)
		s.bool(st.DeliveryFailed)
		s.bool(st.UndeliverableHere)
		return s.end()
	}
	s := beginComposite(b, codeAccepted)
	return s.end()
}

// appendFlow writes a session flow, or a link flow when handle is set.
func appendFlow(b []byte, channel uint16, nextIncomingID, incomingWindow, nextOutgoingID, outgoingWindow uint32, link *linkFlow) []byte {
	b, fs := beginFrameBuf(b, frameAMQP, channel)
	c := beginComposite(b, codeFlow)
	c.uint(nextIncomingID)
	c.uint(incomingWindow)
	c.uint(nextOutgoingID)
	c.uint(outgoingWindow)
	if link != nil {
		c.uint(link.handle)
		c.uint(link.deliveryCount)
		c.uint(link.credit)
		c.omit() // available
		c.bool(link.drain)
	}
	return endFrameBuf(c.end(), fs)
}

type linkFlow struct {
	handle, deliveryCount, credit uint32
	drain                         bool
}

// transferHeaderMax bounds the encoded size of a transfer performative
// with a 4-byte tag, so a payload's frame split can be computed up front.
const transferHeaderMax = 8 + 3 + 9 + 5*3 + 6 + 2 + 2 + 4

// appendTransfer writes one transfer frame carrying part. first says it is
// the delivery's first frame (with id, tag and format), more that frames
// follow.
func appendTransfer(b []byte, channel uint16, handle, deliveryID uint32, first, more bool, part []byte) []byte {
	b, fs := beginFrameBuf(b, frameAMQP, channel)
	c := beginComposite(b, codeTransfer)
	c.uint(handle)
	if first {
		c.uint(deliveryID)
		var tag [4]byte
		binary.BigEndian.PutUint32(tag[:], deliveryID)
		c.binary(tag[:])
		c.uint(0) // message-format
	} else {
		c.omit()
		c.omit()
		c.omit()
	}
	if more {
		c.omit() // settled
		c.bool(true)
	}
	b = c.end()
	return endFrameBuf(append(b, part...), fs)
}

func appendDetach(b []byte, channel uint16, handle uint32, closed bool) []byte {
	b, fs := beginFrameBuf(b, frameAMQP, channel)
	c := beginComposite(b, codeDetach)
	c.uint(handle)
	c.bool(closed)
	return endFrameBuf(c.end(), fs)
}

// appendDetachError writes a detach that carries e; not closing, so the
// terminus (a durable subscription) survives.
func appendDetachError(b []byte, channel uint16, handle uint32, e *Error) []byte {
	b, fs := beginFrameBuf(b, frameAMQP, channel)
	c := beginComposite(b, codeDetach)
	c.uint(handle)
	c.bool(false)
	c.raw(func(b []byte) []byte { return appendError(b, e) })
	return endFrameBuf(c.end(), fs)
}

func appendEnd(b []byte, channel uint16) []byte {
	b, fs := beginFrameBuf(b, frameAMQP, channel)
	c := beginComposite(b, codeEnd)
	return endFrameBuf(c.end(), fs)
}

// appendError writes e as an AMQP error: its condition, and its
// description when it has one. A description that is not UTF-8 is left
// out: the condition says enough.
func appendError(b []byte, e *Error) []byte {
	ec := beginComposite(b, codeError)
	ec.symbol(e.Condition)
	_ = ec.optStr(e.Description)
	return ec.end()
}

func appendClose(b []byte, e *Error) []byte {
	b, fs := beginFrameBuf(b, frameAMQP, 0)
	c := beginComposite(b, codeClose)
	if e != nil {
		c.raw(func(b []byte) []byte { return appendError(b, e) })
	}
	return endFrameBuf(c.end(), fs)
}

func appendSASLInit(b []byte, mechanism string, initial []byte, hostname string) ([]byte, error) {
	b, fs := beginFrameBuf(b, frameSASL, 0)
	c := beginComposite(b, codeSASLInit)
	c.symbol(mechanism)
	if initial != nil {
		c.binary(initial)
	} else {
		c.omit()
	}
	if err := c.optStr(hostname); err != nil {
		return b, err
	}
	return endFrameBuf(c.end(), fs), nil
}
