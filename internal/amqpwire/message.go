package amqpwire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"
)

// Message section descriptors (AMQP 1.0 part 3.2).
const (
	codeHeader           = 0x70
	codeDeliveryAnns     = 0x71
	codeMessageAnns      = 0x72
	codeProperties       = 0x73
	codeApplicationProps = 0x74
	codeData             = 0x75
	codeAMQPValue        = 0x77
)

// Annotation is one message annotation: a symbol key and its value.
type Annotation struct {
	Key   string
	Value any
}

// Message is what a sender puts on the wire: the header, message
// annotations, properties, application properties and one body section.
// Zero fields are left out, as go-amqp leaves out nil ones; Priority is
// always sent unless it is the AMQP default 4.
type Message struct {
	Durable  bool
	Priority uint8
	TTL      time.Duration // milliseconds on the wire; 0 for none

	Annotations []Annotation

	MessageID          string
	To                 string
	Subject            string
	ReplyTo            string
	CorrelationID      string
	ContentType        string
	AbsoluteExpiryTime time.Time
	CreationTime       time.Time
	GroupID            string
	GroupSequence      *uint32

	ApplicationProperties map[string]any

	// Data, when HasData, is the body as one data section; Text, when
	// HasText, an amqp-value string (without boxing it in Value);
	// otherwise Value is the body as an amqp-value section (nil for none).
	Data    []byte
	HasData bool
	Text    string
	HasText bool
	Value   any
}

// AppendMessage appends the encoded message to b. On error b is returned
// truncated to its original length.
func AppendMessage(b []byte, m *Message) ([]byte, error) {
	orig := len(b)
	out, err := appendMessage(b, m)
	if err != nil {
		return b[:orig], err
	}
	return out, nil
}

func appendMessage(b []byte, m *Message) ([]byte, error) {
	h := beginComposite(b, codeHeader)
	h.bool(m.Durable)
	if m.Priority != 4 {
		h.ubyte(m.Priority)
	} else {
		h.omit()
	}
	if m.TTL != 0 {
		h.uint(uint32(m.TTL / time.Millisecond))
	}
	b = h.end()

	if len(m.Annotations) > 0 {
		b = append(b, 0x00, tSmallUlong, codeMessageAnns)
		var start int
		b, start = beginMap(b)
		for _, a := range m.Annotations {
			b = AppendSymbol(b, a.Key)
			var err error
			if b, err = AppendValue(b, a.Value); err != nil {
				return b, fmt.Errorf("message annotation %q: %w", a.Key, err)
			}
		}
		b = endMap(b, start, 2*len(m.Annotations))
	}
	b, err := appendProperties(b, m)
	if err != nil {
		return b, err
	}

	if m.ApplicationProperties != nil {
		b = append(b, 0x00, tSmallUlong, codeApplicationProps)
		if b, err = AppendStringMap(b, m.ApplicationProperties); err != nil {
			return b, fmt.Errorf("application property: %w", err)
		}
	}
	if m.HasData {
		b = AppendBinary(append(b, 0x00, tSmallUlong, codeData), m.Data)
	}
	if m.HasText {
		if b, err = AppendString(append(b, 0x00, tSmallUlong, codeAMQPValue), m.Text); err != nil {
			return b, fmt.Errorf("body: %w", err)
		}
	} else if m.Value != nil {
		if b, err = AppendValue(append(b, 0x00, tSmallUlong, codeAMQPValue), m.Value); err != nil {
			return b, fmt.Errorf("body: %w", err)
		}
	}
	return b, nil
}

// appendProperties writes the properties section, always (go-amqp writes
// it whenever its Properties pointer is set, which a JMS message always has).
func appendProperties(b []byte, m *Message) ([]byte, error) {
	p := beginComposite(b, codeProperties)
	if err := p.optStr(m.MessageID); err != nil {
		return p.b, fmt.Errorf("message-id: %w", err)
	}
	p.omit() // user-id
	if err := p.optStr(m.To); err != nil {
		return p.b, fmt.Errorf("to: %w", err)
	}
	if err := p.optStr(m.Subject); err != nil {
		return p.b, fmt.Errorf("subject: %w", err)
	}
	if err := p.optStr(m.ReplyTo); err != nil {
		return p.b, fmt.Errorf("reply-to: %w", err)
	}
	if err := p.optStr(m.CorrelationID); err != nil {
		return p.b, fmt.Errorf("correlation-id: %w", err)
	}
	if m.ContentType != "" {
		p.symbol(m.ContentType)
	} else {
		p.omit()
	}
	p.omit() // content-encoding
	if !m.AbsoluteExpiryTime.IsZero() {
		p.raw(func(b []byte) []byte { return AppendTimestamp(b, m.AbsoluteExpiryTime) })
	} else {
		p.omit()
	}
	if !m.CreationTime.IsZero() {
		p.raw(func(b []byte) []byte { return AppendTimestamp(b, m.CreationTime) })
	} else {
		p.omit()
	}
	if err := p.optStr(m.GroupID); err != nil {
		return p.b, fmt.Errorf("group-id: %w", err)
	}
	if m.GroupSequence != nil {
		p.uint(*m.GroupSequence)
	}
	return p.end(), nil
}

// Received message sections beyond those a sender writes.
const (
	codeAMQPSequence = 0x76
	codeFooter       = 0x78
)

// Received is a received message split into its sections, read in place:
// every slice aliases the bytes given to ParseMessage. Absent fields are
// nil (or false/zero, with a Has flag where zero is a value).
type Received struct {
	HasHeader     bool
	Durable       bool
	Priority      uint8 // 4 when the header has none
	TTL           uint32
	FirstAcquirer bool
	DeliveryCount uint32

	// Annotations is the message-annotations map, encoded.
	Annotations []byte

	HasProperties bool
	// MessageID and CorrelationID are encoded values (any id type); the
	// string fields are the strings' bytes.
	MessageID, CorrelationID                        []byte
	UserID                                          []byte
	To, Subject, ReplyTo, ContentType, GroupID      []byte
	AbsoluteExpiryTime, CreationTime                int64 // ms since the epoch
	HasAbsoluteExpiryTime, HasCreationTime, HasGSeq bool
	GroupSequence                                   uint32

	// ApplicationProperties is the application-properties map, encoded.
	ApplicationProperties []byte

	// Data is the first data section's bytes (HasData says there is one),
	// MoreData the later ones: most messages have one, which then costs no
	// slice of sections. Sequences are the amqp-sequence sections' lists,
	// encoded; Value the amqp-value section's value, encoded (nil for
	// none).
	Data      []byte
	HasData   bool
	MoreData  [][]byte
	Sequences [][]byte
	Value     []byte
}

// Body returns the data sections' bytes joined (in place when there is
// one).
func (m *Received) Body() []byte {
	if len(m.MoreData) == 0 {
		return m.Data
	}
	n := len(m.Data)
	for _, d := range m.MoreData {
		n += len(d)
	}
	out := make([]byte, 0, n)
	out = append(out, m.Data...)
	for _, d := range m.MoreData {
		out = append(out, d...)
	}
	return out
}

// ParseMessage splits b, an encoded message, into m's sections. A section
// that cannot be read fails the whole message; the caller passes it on raw.
func ParseMessage(b []byte, m *Received) error {
	*m = Received{Priority: 4}
	var buf [13][]byte // a header's or properties' fields (the properties have 13)
	for len(b) > 0 {
		n, err := valueLen(b, 0)
		if err != nil {
			return fmt.Errorf("message section: %w", err)
		}
		sec := b[:n]
		b = b[n:]
		code, v, err := described(sec)
		if err != nil {
			return fmt.Errorf("message section: %w", err)
		}
		switch code {
		case codeHeader:
			m.parseHeader(listReader(v, buf[:0], &err))
		case codeDeliveryAnns, codeFooter:
		case codeMessageAnns:
			m.Annotations = v
		case codeProperties:
			m.parseProperties(listReader(v, buf[:0], &err))
		case codeApplicationProps:
			m.ApplicationProperties = v
		case codeData:
			var d []byte
			if d, err = bytesAt(v); err == nil {
				if !m.HasData {
					m.Data, m.HasData = d, true
				} else {
					m.MoreData = append(m.MoreData, d)
				}
			}
		case codeAMQPSequence:
			m.Sequences = append(m.Sequences, v)
		case codeAMQPValue:
			m.Value = v
		default:
			err = fmt.Errorf("unknown descriptor %#x", code)
		}
		if err != nil {
			return fmt.Errorf("message section %#x: %w", code, err)
		}
	}
	return nil
}

func (m *Received) parseHeader(r fieldReader) {
	m.HasHeader = true
	m.Durable = r.bool(0)
	m.Priority = 4
	if b := r.get(1); b != nil {
		p, _, perr := ulongAt(b)
		if perr != nil || p > math.MaxUint8 {
			r.fail(errors.New("priority is not a ubyte"))
		}
		m.Priority = uint8(p)
	}
	m.TTL = r.uint(2, 0)
	m.FirstAcquirer = r.bool(3)
	m.DeliveryCount = r.uint(4, 0)
}

func (m *Received) parseProperties(r fieldReader) {
	m.HasProperties = true
	m.MessageID, m.CorrelationID = r.get(0), r.get(5)
	str := func(i int) []byte {
		b := r.get(i)
		if b == nil {
			return nil
		}
		s, err := bytesAt(b)
		if err != nil {
			r.fail(fmt.Errorf("property %d: %w", i, err))
		}
		return s
	}
	m.UserID, m.To, m.Subject, m.ReplyTo = str(1), str(2), str(3), str(4)
	m.ContentType, m.GroupID = str(6), str(10)
	ts := func(i int) (int64, bool) {
		b := r.get(i)
		if b == nil {
			return 0, false
		}
		if b[0] != tTimestamp || len(b) < 9 {
			r.fail(fmt.Errorf("property %d is not a timestamp", i))
			return 0, false
		}
		return int64(binary.BigEndian.Uint64(b[1:])), true
	}
	m.AbsoluteExpiryTime, m.HasAbsoluteExpiryTime = ts(8)
	m.CreationTime, m.HasCreationTime = ts(9)
	m.HasGSeq = r.get(11) != nil
	m.GroupSequence = r.uint(11, 0)
}

// bytesAt returns the content of a binary, string or symbol value, in
// place.
func bytesAt(b []byte) ([]byte, error) {
	if len(b) == 0 {
		return nil, errShort
	}
	switch b[0] {
	case tStr8, tSym8, tVbin8:
		if len(b) < 2 || len(b) < 2+int(b[1]) {
			return nil, errShort
		}
		return b[2 : 2+int(b[1]) : 2+int(b[1])], nil
	case tStr32, tSym32, tVbin32:
		if len(b) < 5 {
			return nil, errShort
		}
		n := binary.BigEndian.Uint32(b[1:])
		if uint64(n) > uint64(len(b)-5) {
			return nil, errShort
		}
		return b[5 : 5+n : 5+n], nil
	}
	return nil, fmt.Errorf("amqp: expected a string or binary, got constructor %#02x", b[0])
}

// BytesAt returns the content of an encoded binary, string or symbol
// value, in place; ok is false for another type.
func BytesAt(b []byte) (content []byte, ok bool) {
	if len(b) == 0 {
		return nil, false
	}
	switch b[0] {
	case tStr8, tSym8, tVbin8, tStr32, tSym32, tVbin32:
		c, err := bytesAt(b)
		return c, err == nil
	}
	return nil, false
}

// IsString reports whether an encoded value is a string; IsBinary whether
// it is a binary.
func IsString(b []byte) bool { return len(b) > 0 && (b[0] == tStr8 || b[0] == tStr32) }

// IsBinary reports whether an encoded value is a binary.
func IsBinary(b []byte) bool { return len(b) > 0 && (b[0] == tVbin8 || b[0] == tVbin32) }

// IsNull reports whether an encoded value is null.
func IsNull(b []byte) bool { return len(b) > 0 && b[0] == tNull }

// MapItems splits an encoded map into its keys and values, alternating,
// appended to out[:0].
func MapItems(b []byte, out [][]byte) ([][]byte, error) {
	if len(b) == 0 {
		return out[:0], nil
	}
	if b[0] != tMap8 && b[0] != tMap32 && b[0] != tNull {
		return nil, fmt.Errorf("amqp: expected a map, got constructor %#02x", b[0])
	}
	return listItems(b, math.MaxInt, out)
}

// MapLookup returns the encoded value under the string or symbol key in an
// encoded map, without decoding the rest: found is false when the key is
// absent (or b is no map).
func MapLookup(b []byte, key string) (v []byte, found bool, err error) {
	if len(b) == 0 || b[0] == tNull {
		return nil, false, nil
	}
	if b[0] != tMap8 && b[0] != tMap32 {
		return nil, false, fmt.Errorf("amqp: expected a map, got constructor %#02x", b[0])
	}
	count, b, err := compoundBody(b)
	if err != nil {
		return nil, false, err
	}
	for i := 0; i+1 < count; i += 2 {
		kn, err := valueLen(b, 0)
		if err != nil {
			return nil, false, err
		}
		k := b[:kn]
		b = b[kn:]
		vn, err := valueLen(b, 0)
		if err != nil {
			return nil, false, err
		}
		if (k[0] == tSym8 || k[0] == tSym32 || k[0] == tStr8 || k[0] == tStr32) && len(k) > 1 {
			if c, err := bytesAt(k); err == nil && string(c) == key {
				return b[:vn], true, nil
			}
		}
		b = b[vn:]
	}
	return nil, false, nil
}
