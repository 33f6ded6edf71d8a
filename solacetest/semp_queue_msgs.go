package solacetest

// This file is the SEMP monitor resource msgVpns/{vpn}/queues/{queue}/msgs:
// the messages a queue holds, and the action API's deleteMsgs (purge) and
// msgs/{msg}/delete on them.

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

// queueMsgs returns the messages of the request's durable or temporary
// queue.
func queueMsgs(c *sempCall, b brokerAdmin, vpn string) (string, []QueueMsg, *sempErr) {
	queue := c.r.PathValue("queue")
	msgs, err := b.QueueMsgs(vpn, queue)
	if err != nil {
		return "", nil, adminErr(err)
	}
	return queue, msgs, nil
}

func (c *sempCall) queueMsgURI(vpn, queue string, id uint64) string {
	return c.queueURI(vpn, queue) + "/msgs/" + strconv.FormatUint(id, 10)
}

func listQueueMsgs(c *sempCall, b brokerAdmin, vpn string) *sempErr {
	queue, msgs, err := queueMsgs(c, b, vpn)
	if err != nil {
		return err
	}
	// Keys sort as the ids do: fixed-width decimal.
	keys := make([]string, len(msgs))
	byKey := map[string]QueueMsg{}
	for i, m := range msgs {
		keys[i] = fmt.Sprintf("%020d", m.MsgID)
		byKey[keys[i]] = m
	}
	slices.Sort(keys)
	page, next, err := c.page(keys)
	if err != nil {
		return err
	}
	return writeEach(c, page, len(keys), next, func(k string) (any, sempURILink) {
		m := byKey[k]
		return queueMsgJSON(vpn, queue, m), sempURILink{URI: c.queueMsgURI(vpn, queue, m.MsgID)}
	})
}

func getQueueMsg(c *sempCall, b brokerAdmin, vpn string) *sempErr {
	queue, msgs, err := queueMsgs(c, b, vpn)
	if err != nil {
		return err
	}
	id, perr := strconv.ParseUint(c.r.PathValue("msg"), 10, 64)
	if perr == nil {
		for _, m := range msgs {
			if m.MsgID == id {
				return c.writeObject(queueMsgJSON(vpn, queue, m), sempURILink{URI: c.queueMsgURI(vpn, queue, id)}, nil)
			}
		}
	}
	return errNotFound("could not find match for msg %q in queue %q", c.r.PathValue("msg"), queue)
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
