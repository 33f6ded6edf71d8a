package semp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/connect-solace/connect-solace/internal/semp/sempwire"
)

// QueueStatus is a queue's live state from the monitor API's MsgVpnQueue and
// its collection counts.
type QueueStatus struct {
	QueueName  string
	MsgVpnName string
	AccessType string
	Durable    bool
	// IngressEnabled / EgressEnabled are the queue's admin switches.
	IngressEnabled, EgressEnabled bool
	// SpooledMsgCount is the number of messages the queue holds now. It is
	// the size of the queue's msgs collection (collections.msgs.count) when
	// the broker reports it, otherwise the spooledMsgCount attribute.
	SpooledMsgCount int64
	// MsgSpoolUsage is the spool the queue uses now, in bytes.
	MsgSpoolUsage int64
	// MaxMsgSpoolUsage is the queue's quota, in megabytes.
	MaxMsgSpoolUsage int64
	// BindCount is the number of consumer flows bound to the queue: the size
	// of its txFlows collection. SEMPv2 (2.34) has no bindCount attribute.
	BindCount int64
	// TxUnackedMsgCount counts messages delivered and not yet acknowledged.
	TxUnackedMsgCount int64
	// RedeliveredMsgCount counts redeliveries made by the queue.
	RedeliveredMsgCount int64
	MaxRedeliveryCount  int64
	DeadMsgQueue        string
	// SubscriptionCount is the size of the queue's subscriptions collection.
	SubscriptionCount int64
}

// queueStatus combines a monitor API MsgVpnQueue and its collection counts.
func queueStatus(m sempwire.MonitorQueue, col sempwire.MonitorQueueCollections) QueueStatus {
	s := QueueStatus{
		QueueName:           m.QueueName,
		MsgVpnName:          m.MsgVpnName,
		AccessType:          m.AccessType,
		Durable:             m.Durable,
		IngressEnabled:      m.IngressEnabled,
		EgressEnabled:       m.EgressEnabled,
		SpooledMsgCount:     m.SpooledMsgCount,
		MsgSpoolUsage:       m.MsgSpoolUsage,
		MaxMsgSpoolUsage:    m.MaxMsgSpoolUsage,
		TxUnackedMsgCount:   m.TxUnackedMsgCount,
		RedeliveredMsgCount: m.RedeliveredMsgCount,
		MaxRedeliveryCount:  m.MaxRedeliveryCount,
		DeadMsgQueue:        m.DeadMsgQueue,
	}
	if col.Msgs != nil {
		s.SpooledMsgCount = col.Msgs.Count
	}
	if col.TxFlows != nil {
		s.BindCount = col.TxFlows.Count
	}
	if col.Subscriptions != nil {
		s.SubscriptionCount = col.Subscriptions.Count
	}
	return s
}

// QueueStatus returns a queue's live state from
// GET /SEMP/v2/monitor/msgVpns/{vpn}/queues/{queue}.
func (c *Client) QueueStatus(ctx context.Context, vpn, name string) (*QueueStatus, error) {
	env, err := c.onQueue(ctx, "queue status", http.MethodGet, monitorBase, vpn, name, nil)
	if err != nil {
		return nil, err
	}
	if len(env.Data) == 0 || string(env.Data) == "null" {
		return nil, errors.New("semp: queue status response carries no data")
	}
	var m sempwire.MonitorQueue
	if err := json.Unmarshal(env.Data, &m); err != nil {
		return nil, fmt.Errorf("semp: decoding status of queue %q: %w", name, err)
	}
	var col sempwire.MonitorQueueCollections
	if len(env.Collections) > 0 {
		if err := json.Unmarshal(env.Collections, &col); err != nil {
			return nil, fmt.Errorf("semp: decoding collections of queue %q: %w", name, err)
		}
	}
	s := queueStatus(m, col)
	return &s, nil
}

// ListQueueStatuses returns the live state of every queue in vpn.
func (c *Client) ListQueueStatuses(ctx context.Context, vpn string) ([]QueueStatus, error) {
	if err := checkNames("list queue statuses", vpn); err != nil {
		return nil, err
	}
	var out []QueueStatus
	err := c.listWithCollections(ctx, monitorBase, func(data, cols json.RawMessage) error {
		var page []sempwire.MonitorQueue
		if err := json.Unmarshal(data, &page); err != nil {
			return fmt.Errorf("semp: decoding queue statuses of VPN %q: %w", vpn, err)
		}
		var colPage []sempwire.MonitorQueueCollections
		if len(cols) > 0 && string(cols) != "null" {
			if err := json.Unmarshal(cols, &colPage); err != nil {
				return fmt.Errorf("semp: decoding queue collections of VPN %q: %w", vpn, err)
			}
		}
		for i, m := range page {
			var col sempwire.MonitorQueueCollections
			if i < len(colPage) {
				col = colPage[i]
			}
			out = append(out, queueStatus(m, col))
		}
		return nil
	}, "msgVpns", seg(vpn), "queues")
	return out, err
}
