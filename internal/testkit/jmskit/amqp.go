package jmskit

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/go-amqp"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/jms"
)

// Encode builds, with go-amqp's types, the AMQP message a JMS consumer
// reads as m: the same sections and values jms.AppendEncoded writes, read
// from the mapping a second time. Tests hold AppendEncoded against it, and
// benchmarks send it over a bare go-amqp sender, so it allocates once per
// message, and the message annotations (a handful of distinct maps) are
// shared: nothing may write to a map Encode returns.
func Encode(m *jms.Message) (*amqp.Message, error) {
	if m.Priority > 9 {
		return nil, fmt.Errorf("JMS priority %d is out of range 0-9", m.Priority)
	}
	if m.Destination.Address == "" {
		return nil, errors.New("message has no destination address")
	}
	e := &encoded{}
	out := &e.msg
	e.header = amqp.MessageHeader{Durable: m.Persistent, Priority: m.Priority, TTL: m.TTL}
	out.Header, out.Properties = &e.header, &e.props
	var msgType int8
	switch m.Type {
	case jms.BodyText, "":
		// A TextMessage is an amqp-value holding a string, as Qpid JMS sends it.
		msgType, out.Value = jms.MsgTypeText, string(m.Body)
	case jms.BodyBytes:
		msgType = jms.MsgTypeBytes
		e.data[0] = m.Body
		out.Data = e.data[:]
		e.ct = jms.ContentTypeOctetStream
		out.Properties.ContentType = &e.ct
	case jms.BodyMap:
		msgType = jms.MsgTypeMap
		out.Value = m.Map
		if m.Map == nil {
			out.Value = map[string]any{}
		}
	default:
		return nil, fmt.Errorf("unknown message type %q", m.Type)
	}
	p := out.Properties
	switch {
	case m.MessageID == "":
		p.MessageID = jms.NewMessageID()
	case strings.HasPrefix(m.MessageID, "ID:"):
		p.MessageID = m.MessageID
	default:
		p.MessageID = "ID:" + m.MessageID
	}
	e.to = m.Destination.Address
	p.To = &e.to
	e.created = m.CreationTime
	if e.created.IsZero() {
		e.created = time.Now()
	}
	e.created = e.created.Truncate(time.Millisecond)
	p.CreationTime = &e.created
	if m.TTL > 0 {
		e.expiry = e.created.Add(m.TTL)
		p.AbsoluteExpiryTime = &e.expiry
	}
	if m.CorrelationID != "" {
		p.CorrelationID = m.CorrelationID
	}
	if m.JMSType != "" {
		e.subject = m.JMSType
		p.Subject = &e.subject
	}
	replyKind := int8(-1)
	if m.ReplyTo != nil {
		e.replyTo = m.ReplyTo.Address
		p.ReplyTo = &e.replyTo
		replyKind = int8(m.ReplyTo.Kind)
	}
	out.Annotations = annotations(msgType, int8(m.Destination.Kind), replyKind)
	if m.GroupID != "" {
		e.groupID = m.GroupID
		p.GroupID = &e.groupID
	}
	if m.GroupSequence != nil {
		e.groupSeq = *m.GroupSequence
		p.GroupSequence = &e.groupSeq
	}
	if len(m.Properties) > 0 {
		out.ApplicationProperties = m.Properties
	}
	return out, nil
}

// encoded holds a message and everything its sections point to.
type encoded struct {
	msg                               amqp.Message
	header                            amqp.MessageHeader
	props                             amqp.MessageProperties
	data                              [1][]byte
	to, ct, subject, replyTo, groupID string
	created, expiry                   time.Time
	groupSeq                          uint32
}

var annotationSets sync.Map // [3]int8 -> amqp.Annotations

func annotations(msgType, destKind, replyKind int8) amqp.Annotations {
	key := [3]int8{msgType, destKind, replyKind}
	if a, ok := annotationSets.Load(key); ok {
		return a.(amqp.Annotations)
	}
	a := amqp.Annotations{amqp.Symbol(jms.AnnMsgType): msgType, amqp.Symbol(jms.AnnDest): destKind}
	if replyKind >= 0 {
		a[amqp.Symbol(jms.AnnReplyType)] = replyKind
	}
	v, _ := annotationSets.LoadOrStore(key, a)
	return v.(amqp.Annotations)
}

// TextMessage is a JMS TextMessage as the jms output encodes it, without
// properties.to, with annotations of its own that a test may edit.
func TextMessage(t testing.TB, body string, props map[string]any) *amqp.Message {
	t.Helper()
	m, err := Encode(&jms.Message{
		Type: jms.BodyText, Body: []byte(body), Priority: jms.DefaultPriority, Persistent: true,
		Destination: jms.Destination{Address: "unused"}, Properties: props,
	})
	require.NoError(t, err)
	m.Properties.To = nil
	m.Annotations = maps.Clone(m.Annotations)
	return m
}

// Dial connects to the broker with go-amqp and begins a session; the test's
// cleanup closes the connection.
func (b Broker) Dial(t testing.TB) (*amqp.Conn, *amqp.Session) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	conn, err := amqp.Dial(ctx, b.URL, &amqp.ConnOptions{SASLType: amqp.SASLTypePlain(b.User, b.Pass)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	sess, err := conn.NewSession(ctx, nil)
	require.NoError(t, err)
	return conn, sess
}

// Sender is a plain go-amqp sender, independent of the jms output, that puts
// test messages on the broker.
type Sender struct {
	Conn *amqp.Conn
	s    *amqp.Sender
}

// NewSender attaches a sender to address. A RabbitMQ /queue/ address is
// declared durable, as the jms output declares it.
func NewSender(t testing.TB, b Broker, address string) *Sender {
	t.Helper()
	conn, sess := b.Dial(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	opts := &amqp.SenderOptions{}
	if strings.HasPrefix(address, "/queue/") {
		opts.TargetDurability = amqp.DurabilityConfiguration
	}
	s, err := sess.NewSender(ctx, address, opts)
	require.NoError(t, err)
	return &Sender{Conn: conn, s: s}
}

// Send transfers msgs and waits for the broker to accept each.
func (s *Sender) Send(t testing.TB, msgs ...*amqp.Message) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for _, m := range msgs {
		require.NoError(t, s.s.Send(ctx, m, nil))
	}
}

// DialReceiver attaches a go-amqp receiver to address with manual credit
// (go-amqp's automatic credit renewal stalled against RabbitMQ 3.10 under
// the race detector's timing). A RabbitMQ /queue/ address gets a durable
// source, matching how the jms output declares the queue.
func DialReceiver(ctx context.Context, url, user, pass, address string) (*amqp.Conn, *amqp.Receiver, error) {
	conn, err := amqp.Dial(ctx, url, &amqp.ConnOptions{SASLType: amqp.SASLTypePlain(user, pass)})
	if err != nil {
		return nil, nil, err
	}
	sess, err := conn.NewSession(ctx, nil)
	if err != nil {
		_ = conn.Close()
		return nil, nil, err
	}
	opts := &amqp.ReceiverOptions{Credit: -1}
	if strings.HasPrefix(address, "/queue/") {
		opts.SourceDurability = amqp.DurabilityUnsettledState
	}
	rcv, err := sess.NewReceiver(ctx, address, opts)
	if err != nil {
		_ = conn.Close()
		return nil, nil, err
	}
	return conn, rcv, nil
}

// ReceiveOne grants the broker one credit and waits for the message it
// allows, unless one already arrived on an earlier grant.
func ReceiveOne(ctx context.Context, rcv *amqp.Receiver) (*amqp.Message, error) {
	if m := rcv.Prefetched(); m != nil {
		return m, nil
	}
	if err := rcv.IssueCredit(1); err != nil {
		return nil, err
	}
	return rcv.Receive(ctx, nil)
}

// Body returns the payload of a text or bytes JMS message.
func Body(m *amqp.Message) []byte {
	if s, ok := m.Value.(string); ok {
		return []byte(s)
	}
	return m.GetData()
}
