package amqpwire

import (
	"fmt"
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
