package semp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/connect-solace/connect-solace/internal/semp/sempwire"
)

// Access types and permissions as SEMP spells them (MsgVpnQueue.accessType,
// MsgVpnQueue.permission).
const (
	AccessTypeExclusive    = sempwire.AccessExclusive
	AccessTypeNonExclusive = sempwire.AccessNonExclusive

	PermissionNoAccess    = sempwire.PermissionNoAccess
	PermissionReadOnly    = sempwire.PermissionReadOnly
	PermissionConsume     = sempwire.PermissionConsume
	PermissionModifyTopic = sempwire.PermissionModifyTopic
	PermissionDelete      = sempwire.PermissionDelete
)

// Queue is the subset of the config API's MsgVpnQueue (sempwire.ConfigQueue)
// that connect-solace reads and writes. Empty and nil fields are omitted, so
// on create the broker applies its defaults and on update (PATCH) they are
// left unchanged. TestQueueAttributesAreMsgVpnQueues keeps its attributes
// within sempwire.ConfigQueue's.
type Queue struct {
	QueueName          string `json:"queueName"`
	AccessType         string `json:"accessType,omitempty"`
	Permission         string `json:"permission,omitempty"`
	IngressEnabled     *bool  `json:"ingressEnabled,omitempty"`
	EgressEnabled      *bool  `json:"egressEnabled,omitempty"`
	MaxRedeliveryCount *int64 `json:"maxRedeliveryCount,omitempty"`
	DeadMsgQueue       string `json:"deadMsgQueue,omitempty"`
	Owner              string `json:"owner,omitempty"`
	// MaxMsgSpoolUsage is the spool quota in megabytes.
	MaxMsgSpoolUsage  *int64 `json:"maxMsgSpoolUsage,omitempty"`
	RespectTTLEnabled *bool  `json:"respectTtlEnabled,omitempty"`
	// MaxTTL is the longest a message stays (with RespectTTLEnabled), in
	// seconds; 0 disables expiry.
	MaxTTL *int64 `json:"maxTtl,omitempty"`
	// PartitionCount > 0 partitions a non-exclusive queue.
	PartitionCount *int32 `json:"partitionCount,omitempty"`
	MsgVpnName     string `json:"msgVpnName,omitempty"`
}

// Bool and Int64 return pointers for Queue's optional fields.
func Bool(v bool) *bool    { return &v }
func Int64(v int64) *int64 { return &v }

func checkNames(what string, names ...string) error {
	for _, n := range names {
		if n == "" {
			return fmt.Errorf("semp: %s: empty name", what)
		}
	}
	return nil
}

// onQueue sends method, with body unless it is nil, to
// msgVpns/{vpn}/queues/{name} of the API at base, once the names are
// checked (what names the call in errors).
func (c *Client) onQueue(ctx context.Context, what, method, base, vpn, name string, body any) (*envelope, error) {
	if err := checkNames(what, vpn, name); err != nil {
		return nil, err
	}
	return c.do(ctx, c.newRequest(method, base, nil, body, "msgVpns", seg(vpn), "queues", seg(name)))
}

// GetQueue returns a queue's configuration. A missing queue is an error for
// which IsNotFound is true.
func (c *Client) GetQueue(ctx context.Context, vpn, name string) (*Queue, error) {
	env, err := c.onQueue(ctx, "get queue", http.MethodGet, configBase, vpn, name, nil)
	if err != nil {
		return nil, err
	}
	return decodeQueue(env)
}

// ListQueues returns every queue in vpn, following SEMP's paging cursor.
func (c *Client) ListQueues(ctx context.Context, vpn string) ([]Queue, error) {
	if err := checkNames("list queues", vpn); err != nil {
		return nil, err
	}
	var out []Queue
	err := c.list(ctx, configBase, func(data json.RawMessage) error {
		var page []Queue
		if err := json.Unmarshal(data, &page); err != nil {
			return fmt.Errorf("semp: decoding queue list of VPN %q: %w", vpn, err)
		}
		out = append(out, page...)
		return nil
	}, "msgVpns", seg(vpn), "queues")
	return out, err
}

// CreateQueue creates q in vpn and returns the broker's view of it, defaults
// filled in. An existing queue is an error for which IsAlreadyExists is true.
func (c *Client) CreateQueue(ctx context.Context, vpn string, q Queue) (*Queue, error) {
	if err := checkNames("create queue", vpn, q.QueueName); err != nil {
		return nil, err
	}
	env, err := c.do(ctx, c.newRequest(http.MethodPost, configBase, nil, q, "msgVpns", seg(vpn), "queues"))
	if err != nil {
		if IsAlreadyExists(err) && maybeApplied(err) {
			// Our own earlier attempt created it and the reply was lost.
			return c.GetQueue(ctx, vpn, q.QueueName)
		}
		return nil, err
	}
	return decodeQueue(env)
}

// UpdateQueue changes the set fields of q (PATCH) and returns the result.
func (c *Client) UpdateQueue(ctx context.Context, vpn string, q Queue) (*Queue, error) {
	env, err := c.onQueue(ctx, "update queue", http.MethodPatch, configBase, vpn, q.QueueName, q)
	if err != nil {
		return nil, err
	}
	return decodeQueue(env)
}

// DeleteQueue deletes a queue and the messages on it.
func (c *Client) DeleteQueue(ctx context.Context, vpn, name string) error {
	_, err := c.onQueue(ctx, "delete queue", http.MethodDelete, configBase, vpn, name, nil)
	if IsNotFound(err) && maybeApplied(err) {
		return nil
	}
	return err
}

// EnsureQueue creates q unless a queue of that name exists. It does not
// reconcile an existing queue's settings with q: an operator's later changes
// win over our defaults.
func (c *Client) EnsureQueue(ctx context.Context, vpn string, q Queue) (created bool, err error) {
	_, err = c.CreateQueue(ctx, vpn, q)
	switch {
	case err == nil:
		return true, nil
	case IsAlreadyExists(err):
		return false, nil
	default:
		return false, err
	}
}

// ListSubscriptions returns the topic subscriptions of a queue.
func (c *Client) ListSubscriptions(ctx context.Context, vpn, queue string) ([]string, error) {
	if err := checkNames("list subscriptions", vpn, queue); err != nil {
		return nil, err
	}
	var out []string
	err := c.list(ctx, configBase, func(data json.RawMessage) error {
		var page []sempwire.QueueSubscription
		if err := json.Unmarshal(data, &page); err != nil {
			return fmt.Errorf("semp: decoding subscriptions of queue %q: %w", queue, err)
		}
		for _, s := range page {
			out = append(out, s.SubscriptionTopic)
		}
		return nil
	}, "msgVpns", seg(vpn), "queues", seg(queue), "subscriptions")
	return out, err
}

// AddSubscription adds a topic subscription to a queue. A subscription that
// already exists counts as success.
func (c *Client) AddSubscription(ctx context.Context, vpn, queue, topic string) error {
	if err := checkNames("add subscription", vpn, queue, topic); err != nil {
		return err
	}
	_, err := c.do(ctx, c.newRequest(http.MethodPost, configBase, nil,
		sempwire.QueueSubscription{SubscriptionTopic: topic}, "msgVpns", seg(vpn), "queues", seg(queue), "subscriptions"))
	if IsAlreadyExists(err) {
		return nil
	}
	return err
}

// RemoveSubscription removes a topic subscription from a queue.
func (c *Client) RemoveSubscription(ctx context.Context, vpn, queue, topic string) error {
	if err := checkNames("remove subscription", vpn, queue, topic); err != nil {
		return err
	}
	_, err := c.do(ctx, c.newRequest(http.MethodDelete, configBase, nil, nil,
		"msgVpns", seg(vpn), "queues", seg(queue), "subscriptions", seg(topic)))
	if IsNotFound(err) && maybeApplied(err) {
		return nil
	}
	return err
}

func decodeQueue(env *envelope) (*Queue, error) {
	if len(env.Data) == 0 || string(env.Data) == "null" {
		return nil, errors.New("semp: response carries no queue data")
	}
	var q Queue
	if err := json.Unmarshal(env.Data, &q); err != nil {
		return nil, fmt.Errorf("semp: decoding queue: %w", err)
	}
	return &q, nil
}
