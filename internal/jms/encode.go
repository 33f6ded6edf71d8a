package jms

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/connect-solace/connect-solace/internal/amqpwire"
)

// BodyType is the JMS message class a message is encoded as.
type BodyType string

// The message types the output produces.
const (
	BodyText  BodyType = "text"
	BodyBytes BodyType = "bytes"
	BodyMap   BodyType = "map"
)

// JMS message type codes for the x-opt-jms-msg-type annotation (mapping 3.2.4).
const (
	MsgTypeMessage int8 = 0
	MsgTypeObject  int8 = 1
	MsgTypeMap     int8 = 2
	MsgTypeBytes   int8 = 3
	MsgTypeStream  int8 = 4
	MsgTypeText    int8 = 5
)

// Message annotation keys defined by the mapping.
const (
	AnnMsgType   = "x-opt-jms-msg-type"
	AnnDest      = "x-opt-jms-dest"
	AnnReplyType = "x-opt-jms-reply-type"
)

// ContentTypeOctetStream marks a data section as a BytesMessage body.
const ContentTypeOctetStream = "application/octet-stream"

// DefaultPriority is JMS's default priority. The encoder always writes the
// priority, so a Message left at 0 would be sent with priority 0: producers
// set this one.
const DefaultPriority uint8 = 4

// Message is what a JMS producer would set on a message before send. The
// encoder derives every AMQP field from it.
type Message struct {
	Type BodyType
	// Body is the payload for text and bytes messages.
	Body []byte
	// Map is the body of a map message, as returned by MapBody.
	Map map[string]any

	Destination Destination
	// Persistent is JMSDeliveryMode PERSISTENT (header durable=true).
	Persistent bool
	// Priority 0-9; values above 9 are rejected.
	Priority uint8
	// TTL is the time to live; zero means the message never expires.
	TTL time.Duration

	// MessageID becomes JMSMessageID; an "ID:" prefix is added when missing.
	// Empty means generate one.
	MessageID     string
	CorrelationID string
	// JMSType is carried in properties.subject.
	JMSType string
	// ReplyTo, when non-nil, becomes properties.reply-to and the
	// x-opt-jms-reply-type annotation.
	ReplyTo       *Destination
	GroupID       string
	GroupSequence *uint32

	// Properties are application properties, already JMS-legal (see
	// Properties).
	Properties map[string]any

	// CreationTime is JMSTimestamp; zero means now.
	CreationTime time.Time
}

// derived is what every encoding of a Message computes from it.
type derived struct {
	msgType         int8
	id              string
	created, expiry time.Time
	replyKind       int8 // -1 without reply-to
}

// derive checks m and computes the values its encodings share.
func derive(m *Message) (derived, error) {
	var d derived
	if m.Priority > 9 {
		return d, fmt.Errorf("JMS priority %d is out of range 0-9", m.Priority)
	}
	if m.Destination.Address == "" {
		return d, errors.New("message has no destination address")
	}
	switch m.Type {
	case BodyText, "":
		if !utf8.Valid(m.Body) {
			return d, errors.New("payload is not valid UTF-8, so it cannot be a JMS TextMessage: use message_type: bytes")
		}
		d.msgType = MsgTypeText
	case BodyBytes:
		d.msgType = MsgTypeBytes
	case BodyMap:
		d.msgType = MsgTypeMap
	default:
		return d, fmt.Errorf("unknown message type %q", m.Type)
	}
	for _, f := range [...]struct{ name, v string }{
		{"message_id", m.MessageID}, {"correlation_id", m.CorrelationID}, {"jms_type", m.JMSType}, {"group_id", m.GroupID},
	} {
		if !utf8.ValidString(f.v) {
			return d, fmt.Errorf("%s is not valid UTF-8, which AMQP strings must be", f.name)
		}
	}
	d.id = m.MessageID
	if d.id == "" {
		d.id = NewMessageID()
	} else if !strings.HasPrefix(d.id, "ID:") {
		d.id = "ID:" + d.id
	}
	created := m.CreationTime
	if created.IsZero() {
		created = time.Now()
	}
	// AMQP timestamps have millisecond precision.
	d.created = created.Truncate(time.Millisecond)
	if m.TTL > 0 {
		d.expiry = d.created.Add(m.TTL)
	}
	d.replyKind = -1
	if m.ReplyTo != nil {
		d.replyKind = int8(m.ReplyTo.Kind)
	}
	return d, nil
}

func mapBody(m *Message) map[string]any {
	if m.Map == nil {
		return map[string]any{}
	}
	return m.Map
}

// AppendEncoded appends to b the bytes of the AMQP message a JMS consumer
// reads as m (maps in iteration order). It sets properties.to, so the same
// message works on an anonymous-relay link and on a link to the
// destination. On error b is unchanged.
func AppendEncoded(b []byte, m *Message) ([]byte, error) {
	d, err := derive(m)
	if err != nil {
		return b, err
	}
	w := amqpwire.Message{
		Durable: m.Persistent, Priority: m.Priority, TTL: m.TTL,
		MessageID: d.id, To: m.Destination.Address, Subject: m.JMSType, CorrelationID: m.CorrelationID,
		CreationTime: d.created, AbsoluteExpiryTime: d.expiry, GroupID: m.GroupID, GroupSequence: m.GroupSequence,
	}
	w.Annotations = wireAnnotations(d.msgType, int8(m.Destination.Kind), d.replyKind)
	if m.ReplyTo != nil {
		w.ReplyTo = m.ReplyTo.Address
	}
	switch d.msgType {
	case MsgTypeText:
		w.Text, w.HasText = unsafeString(m.Body), true
	case MsgTypeBytes:
		w.Data, w.HasData, w.ContentType = m.Body, true, ContentTypeOctetStream
	case MsgTypeMap:
		w.Value = mapBody(m)
	}
	if len(m.Properties) > 0 {
		w.ApplicationProperties = m.Properties
	}
	return amqpwire.AppendMessage(b, &w)
}

// unsafeString views b as a string for the encoder, which only copies it.
func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// NewMessageID returns a random JMS message ID, "ID:" and a UUID, as JMS
// providers generate them. An ID must be unique, not secret: its 122 random
// bits come from math/rand/v2 (ChaCha8, seeded by the runtime from the
// system's entropy), a tenth of the cost of crypto/rand per message.
func NewMessageID() string {
	var u [16]byte
	binary.LittleEndian.PutUint64(u[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(u[8:], rand.Uint64())
	u[6] = (u[6] & 0x0f) | 0x40
	u[8] = (u[8] & 0x3f) | 0x80
	// "ID:" and the UUID's text in one allocation.
	var buf [39]byte
	copy(buf[:], "ID:")
	putUUID(buf[3:], u)
	return string(buf[:])
}

// wireAnnotationSets caches the message annotations, which depend only on
// the message class and the destination kinds: a handful of distinct lists,
// in a fixed order, shared read-only by every message instead of built per
// message.
var wireAnnotationSets sync.Map // [3]int8 -> []amqpwire.Annotation

func wireAnnotations(msgType, destKind, replyKind int8) []amqpwire.Annotation {
	key := [3]int8{msgType, destKind, replyKind}
	if a, ok := wireAnnotationSets.Load(key); ok {
		return a.([]amqpwire.Annotation)
	}
	a := []amqpwire.Annotation{{Key: AnnMsgType, Value: msgType}, {Key: AnnDest, Value: destKind}}
	if replyKind >= 0 {
		a = append(a, amqpwire.Annotation{Key: AnnReplyType, Value: replyKind})
	}
	v, _ := wireAnnotationSets.LoadOrStore(key, a)
	return v.([]amqpwire.Annotation)
}
