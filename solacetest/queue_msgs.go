package solacetest

// This file is the per-message view of a queue that SEMP's monitor API shows
// (msgVpns/{vpn}/queues/{queue}/msgs), the admin's actions on those messages
// (browse their content, delete one, purge the queue) and the queue's bound
// consumer flows.

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// QueueMsg is one message held by a queue.
type QueueMsg struct {
	// MsgID identifies the message; it is the message part of its
	// replication group message id, the same in every queue.
	MsgID uint64
	// ReplicationGroupMsgID is the id as the client API shows it
	// ("rmid1:...").
	ReplicationGroupMsgID string
	SpooledAt             time.Time
	// Expiry is when the message expires; zero when it does not.
	Expiry time.Time
	// Redeliveries counts deliveries after the first; Undelivered is true
	// while the message was never delivered.
	Redeliveries int
	Undelivered  bool
	DMQEligible  bool
	Priority     int
	// Size is the payload size in bytes (SEMP's attachment plus content).
	Size int
}

// rgmidString formats a replication group message id as the Go client's
// ReplicationGroupMessageID.String does: "rmid1:" and 32 hex digits in
// groups of 5, 11, 8 and 8.
func rgmidString(spooler, id uint64) string {
	return fmt.Sprintf("rmid1:%05x-%011x-%08x-%08x", spooler>>44, spooler&(1<<44-1), id>>32, id&0xffffffff)
}

// parseRGMID reverses rgmidString.
func parseRGMID(s string) (spooler, id uint64, ok bool) {
	var a, b, c, d uint64
	if n, err := fmt.Sscanf(s, "rmid1:%05x-%011x-%08x-%08x", &a, &b, &c, &d); err != nil || n != 4 {
		return 0, 0, false
	}
	return a<<44 | b, c<<32 | d, true
}

// QueueMsgs lists the messages a queue holds, delivered or not, in spool
// order.
func (b *Broker) QueueMsgs(vpn, name string) ([]QueueMsg, error) {
	return mapQueueMsgs(b, vpn, name, b.queueMsg)
}

// queueMsg is QueueMsgs' view of one message.
func (b *Broker) queueMsg(qm *qmsg) QueueMsg {
	m := qm.m
	return QueueMsg{
		MsgID: m.id, ReplicationGroupMsgID: rgmidString(b.spoolerID, m.id),
		SpooledAt: m.at, Expiry: qm.expiry,
		Redeliveries: max(qm.deliveries-1, 0), Undelivered: qm.deliveries == 0,
		DMQEligible: m.dmqEligible(), Priority: int(m.priority), Size: m.size,
	}
}

// mapQueueMsgs returns f of every message the queue vpn/name holds,
// delivered or not, in spool order. f runs with Broker.mu held.
func mapQueueMsgs[T any](b *Broker, vpn, name string, f func(*qmsg) T) ([]T, error) {
	return onQueue(b, vpn, name, func(q *queue) ([]T, error) {
		msgs := q.allMessages()
		out := make([]T, 0, len(msgs))
		for _, qm := range msgs {
			out = append(out, f(qm))
		}
		return out, nil
	})
}

// MsgContent is a message a queue holds with its content, as a browser of
// the queue shows it: QueueMsgs' view plus the destination, the payload and
// the attributes the publisher set.
type MsgContent struct {
	QueueMsg
	// Destination is the topic the message was published to, or the
	// queue's name for a message sent to a queue (ToQueue true).
	Destination string
	ToQueue     bool
	// Payload is the application payload: the binary attachment, or the
	// text of a string payload.
	Payload    []byte
	Persistent bool
	// TTL is the time to live the publisher set; 0 means none.
	TTL time.Duration
	// Headers are the header fields of the binary metadata, by the names
	// the Go client's attributes have (ApplicationMessageID,
	// CorrelationID, ApplicationMessageType, SenderID, ...), and
	// UserProperties the publisher's properties; both are nil when the
	// message has none.
	Headers, UserProperties map[string]any
}

// headerNames maps the binary metadata's header keys to the client
// attributes they carry; keys not listed are shown as they are.
var headerNames = map[string]string{
	"mi": "ApplicationMessageID", "ci": "CorrelationID", "mt": "ApplicationMessageType",
	"si": "SenderID", "sn": "SequenceNumber", "st": "SenderTimestamp",
}

// BrowseQueue returns the messages a queue holds, delivered or not, in
// spool order, with their content, without consuming or changing them.
func (b *Broker) BrowseQueue(vpn, name string) ([]MsgContent, error) {
	return mapQueueMsgs(b, vpn, name, func(qm *qmsg) MsgContent {
		m := qm.m
		c := MsgContent{
			QueueMsg: b.queueMsg(qm), Destination: m.topic, Payload: slices.Clone(m.appPayload()), Persistent: m.persistent, TTL: m.ttl,
		}
		if q, ok := queueFromTopic(m.topic); ok {
			c.Destination, c.ToQueue = q, true
		}
		headers, props := messageMetadata(m.summary, m.payload)
		for k, v := range headers {
			if c.Headers == nil {
				c.Headers = map[string]any{}
			}
			if n, ok := headerNames[k]; ok {
				k = n
			}
			c.Headers[k] = v
		}
		if len(props) > 0 {
			c.UserProperties = props
		}
		return c
	})
}

// ErrUnknownMsg is a message id that the queue does not hold.
var ErrUnknownMsg = errors.New("unknown message")

// DeleteQueueMsg deletes one message, by its MsgID, from a queue, delivered
// or not, as SEMP's action msgVpns/{vpn}/queues/{queue}/msgs/{msg}/delete
// does. A consumer that got it and settles it later settles nothing.
func (b *Broker) DeleteQueueMsg(vpn, name string, id uint64) error {
	return changeQueue(b, vpn, name, func(q *queue) error {
		for _, qm := range q.allMessages() {
			if qm.m.id == id {
				q.remove(qm)
				b.log.Info("message deleted", "vpn", vpn, "queue", name, "msg", id)
				return nil
			}
		}
		return fmt.Errorf("%w %d in queue %q", ErrUnknownMsg, id, name)
	})
}

// PurgeQueue deletes every message a queue holds, delivered or not, as
// SEMP's action msgVpns/{vpn}/queues/{queue}/deleteMsgs does, and returns
// how many it deleted.
func (b *Broker) PurgeQueue(vpn, name string) (int, error) {
	return onQueue(b, vpn, name, func(q *queue) (int, error) {
		msgs := q.allMessages()
		for _, qm := range msgs {
			q.remove(qm)
		}
		b.log.Info("queue purged", "vpn", vpn, "queue", name, "msgs", len(msgs))
		return len(msgs), nil
	})
}

// FlowInfo is a consumer flow bound to a queue.
type FlowInfo struct {
	ID     uint32
	Client string // the bound client's name
	Active bool
	// Window is how many deliveries the client accepts beyond its last
	// transport ack, InFlight how many of those it has not acked yet.
	Window, InFlight int
	// Unacked counts delivered messages not settled yet, up to
	// MaxUnacked.
	Unacked, MaxUnacked int
}

// QueueFlows lists the consumer flows bound to a queue, in bind order.
func (b *Broker) QueueFlows(vpn, name string) ([]FlowInfo, error) {
	return onQueue(b, vpn, name, func(q *queue) ([]FlowInfo, error) {
		out := make([]FlowInfo, 0, len(q.flows))
		for _, f := range q.flows {
			fi := FlowInfo{ID: f.id, Active: f.active, Window: f.window, InFlight: len(f.sent),
				Unacked: len(f.unsettled), MaxUnacked: f.maxUnacked}
			if f.c != nil {
				fi.Client = f.c.clientName
			}
			out = append(out, fi)
		}
		return out, nil
	})
}
