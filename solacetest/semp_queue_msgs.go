package solacetest

// This file is the SEMP monitor resources msgVpns/{vpn}/queues/{queue}/msgs
// and .../txFlows: the messages a queue holds and the consumer flows bound to
// it, and the action API's deleteMsgs (purge) and msgs/{msg}/delete.

import (
	"fmt"
	"slices"
	"strconv"
)

// sempQueueMsg is the monitor API's MsgVpnQueueMsg.
type sempQueueMsg struct {
	AttachmentSize        int64  `json:"attachmentSize"`
	ContentSize           int64  `json:"contentSize"`
	DmqEligible           bool   `json:"dmqEligible"`
	ExpiryTime            int32  `json:"expiryTime"`
	MsgID                 int64  `json:"msgId"`
	MsgVpnName            string `json:"msgVpnName"`
	Priority              int32  `json:"priority"`
	QueueName             string `json:"queueName"`
	RedeliveryCount       int32  `json:"redeliveryCount"`
	ReplicationGroupMsgID string `json:"replicationGroupMsgId"`
	SpooledTime           int32  `json:"spooledTime"`
	Undelivered           bool   `json:"undelivered"`
}

func queueMsgJSON(vpn, queue string, m QueueMsg) sempQueueMsg {
	j := sempQueueMsg{
		AttachmentSize: int64(m.Size), DmqEligible: m.DMQEligible, MsgID: int64(m.MsgID), MsgVpnName: vpn,
		Priority: int32(m.Priority), QueueName: queue, RedeliveryCount: int32(m.Redeliveries),
		ReplicationGroupMsgID: m.ReplicationGroupMsgID, SpooledTime: int32(m.SpooledAt.Unix()), Undelivered: m.Undelivered,
	}
	if !m.Expiry.IsZero() {
		j.ExpiryTime = int32(m.Expiry.Unix())
	}
	return j
}

// queueMember is how SEMP shows one kind of object a queue holds by a
// numeric id (msgs, txFlows): list reads them, id and json describe one,
// name is the path segment, param the path parameter with the id.
type queueMember[T any] struct {
	name, param string
	list        func(b brokerAdmin, vpn, queue string) ([]T, error)
	id          func(T) uint64
	json        func(vpn, queue string, v T) any
}

var (
	queueMsgMembers = queueMember[QueueMsg]{name: "msgs", param: "msg",
		list: brokerAdmin.QueueMsgs, id: func(m QueueMsg) uint64 { return m.MsgID },
		json: func(vpn, queue string, m QueueMsg) any { return queueMsgJSON(vpn, queue, m) }}
	queueTxFlowMembers = queueMember[FlowInfo]{name: "txFlows", param: "flow",
		list: brokerAdmin.QueueFlows, id: func(f FlowInfo) uint64 { return uint64(f.ID) },
		json: func(vpn, queue string, f FlowInfo) any { return txFlowJSON(vpn, queue, f) }}
)

// of returns the request's queue and its members.
func (qm queueMember[T]) of(c *sempCall, b brokerAdmin, vpn string) (string, []T, *sempErr) {
	queue := c.r.PathValue("queue")
	vs, err := qm.list(b, vpn, queue)
	if err != nil {
		return "", nil, adminErr(err)
	}
	return queue, vs, nil
}

func (qm queueMember[T]) uri(c *sempCall, vpn, queue string, id uint64) string {
	return c.queueURI(vpn, queue) + "/" + qm.name + "/" + strconv.FormatUint(id, 10)
}

// listHandler serves the collection, in id order.
func (qm queueMember[T]) listHandler(c *sempCall, b brokerAdmin, vpn string) *sempErr {
	queue, vs, err := qm.of(c, b, vpn)
	if err != nil {
		return err
	}
	// Keys sort as the ids do: fixed-width decimal.
	keys := make([]string, len(vs))
	byKey := map[string]T{}
	for i, v := range vs {
		keys[i] = fmt.Sprintf("%020d", qm.id(v))
		byKey[keys[i]] = v
	}
	slices.Sort(keys)
	page, next, err := c.page(keys)
	if err != nil {
		return err
	}
	return writeEach(c, page, len(keys), next, func(k string) (any, sempURILink) {
		v := byKey[k]
		return qm.json(vpn, queue, v), sempURILink{URI: qm.uri(c, vpn, queue, qm.id(v))}
	})
}

// getHandler serves one member.
func (qm queueMember[T]) getHandler(c *sempCall, b brokerAdmin, vpn string) *sempErr {
	queue, vs, err := qm.of(c, b, vpn)
	if err != nil {
		return err
	}
	id, perr := strconv.ParseUint(c.r.PathValue(qm.param), 10, 64)
	if perr == nil {
		for _, v := range vs {
			if qm.id(v) == id {
				return c.writeObject(qm.json(vpn, queue, v), sempURILink{URI: qm.uri(c, vpn, queue, id)}, nil)
			}
		}
	}
	return errNotFound("could not find match for %s %q in queue %q", qm.param, c.r.PathValue(qm.param), queue)
}

// sempTxFlow is the monitor API's MsgVpnQueueTxFlow: a consumer flow bound
// to the queue.
type sempTxFlow struct {
	ActivityState   string `json:"activityState"`
	ClientName      string `json:"clientName"`
	FlowID          int64  `json:"flowId"`
	MsgVpnName      string `json:"msgVpnName"`
	QueueName       string `json:"queueName"`
	UnackedMsgCount int64  `json:"unackedMsgCount"`
	UsedWindowSize  int64  `json:"usedWindowSize"`
	WindowSize      int64  `json:"windowSize"`
}

func txFlowJSON(vpn, queue string, f FlowInfo) sempTxFlow {
	state := "inactive"
	if f.Active {
		state = "active-consumer"
	}
	return sempTxFlow{ActivityState: state, ClientName: f.Client, FlowID: int64(f.ID), MsgVpnName: vpn, QueueName: queue,
		UnackedMsgCount: int64(f.Unacked), UsedWindowSize: int64(f.InFlight), WindowSize: int64(f.Window)}
}

// noAttributes reads an action's body, which must have no attributes.
func noAttributes(c *sempCall) *sempErr {
	attrs, err := c.readBody()
	if err != nil {
		return err
	}
	for name := range attrs {
		return errInvalid("unknown attribute %q", name)
	}
	return nil
}

// purgeQueue is the action msgVpns/{vpn}/queues/{queue}/deleteMsgs.
func purgeQueue(c *sempCall, b brokerAdmin, vpn string) *sempErr {
	if err := noAttributes(c); err != nil {
		return err
	}
	_, err := b.PurgeQueue(vpn, c.r.PathValue("queue"))
	return c.writeMetaOnlyOr(err, adminErr)
}

// deleteQueueMsg is the action msgVpns/{vpn}/queues/{queue}/msgs/{msg}/delete.
func deleteQueueMsg(c *sempCall, b brokerAdmin, vpn string) *sempErr {
	if err := noAttributes(c); err != nil {
		return err
	}
	id, perr := strconv.ParseUint(c.r.PathValue("msg"), 10, 64)
	if perr != nil {
		return errNotFound("could not find match for msg %q in queue %q", c.r.PathValue("msg"), c.r.PathValue("queue"))
	}
	return c.writeMetaOnlyOr(b.DeleteQueueMsg(vpn, c.r.PathValue("queue"), id), adminErr)
}
