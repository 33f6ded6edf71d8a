package solacetest

// This file is the per-message view of a queue that SEMP's monitor API shows
// (msgVpns/{vpn}/queues/{queue}/msgs).

import (
	"fmt"
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
	return mapQueueMsgs(b, vpn, name, func(qm *qmsg) QueueMsg {
		m := qm.m
		return QueueMsg{
			MsgID: m.id, ReplicationGroupMsgID: rgmidString(b.spoolerID, m.id),
			SpooledAt: m.at, Expiry: qm.expiry,
			Redeliveries: max(qm.deliveries-1, 0), Undelivered: qm.deliveries == 0,
			DMQEligible: m.dmqEligible(), Priority: int(m.priority), Size: m.size,
		}
	})
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
