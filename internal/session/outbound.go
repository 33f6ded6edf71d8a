package session

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/config"
	"solace.dev/go/messaging/pkg/solace/message"
	"solace.dev/go/messaging/pkg/solace/resource"
)

// QueueTopicPrefix is the network-topic prefix that addresses a queue
// directly; the Go client's publishers take only topics.
const QueueTopicPrefix = "#P2P/QUE/"

// Destination is where a message goes: a topic, or a queue reached through
// its network topic.
type Destination struct {
	Name  string
	Queue bool
}

// Topic returns the topic the client publishes to.
func (d Destination) Topic() string {
	if d.Queue {
		return QueueTopicPrefix + d.Name
	}
	return d.Name
}

// String names the destination for errors and logs.
func (d Destination) String() string {
	if d.Queue {
		return fmt.Sprintf("queue %q", d.Name)
	}
	return fmt.Sprintf("topic %q", d.Name)
}

// Outbound is a message to publish, in Solace terms but free of client types.
// Zero values mean "not set" except where noted.
type Outbound struct {
	Payload     []byte
	Destination Destination

	ApplicationMessageID   string
	ApplicationMessageType string
	CorrelationID          string
	SenderID               string
	HTTPContentType        string
	HTTPContentEncoding    string
	// Priority 0..255, nil means unset.
	Priority *int
	// TTL is the time to live for persistent messages; 0 means none.
	TTL time.Duration
	// DMQEligible nil means the client default (eligible).
	DMQEligible *bool
	// ClassOfService 0..2 (direct messages), nil means unset.
	ClassOfService *int
	// PartitionKey sets the JMSXGroupID user property that partitioned
	// queues hash on.
	PartitionKey string
	// ReplyTo is carried as the user property ReplyToProperty, because
	// the client's public API cannot set the SMF reply-to header on a
	// published message (only its request-reply publisher can).
	ReplyTo string
	// AckImmediately asks the broker to confirm this persistent message at
	// once instead of batching its acknowledgement with later ones: lower
	// latency for a message that is waited on alone.
	AckImmediately bool
	// UserProperties keep their Go types: int64, float64, bool, string and
	// []byte arrive as the matching SDT types.
	UserProperties map[string]any
}

// ReplyToProperty is the user property carrying Outbound.ReplyTo.
const ReplyToProperty = "solace_reply_to"

// solacePropertyPrefix is the namespace of the client's own message
// properties; user properties under it would be read as client settings.
const solacePropertyPrefix = "solace.messaging."

// properties maps the attributes to client message properties.
func (o *Outbound) properties() (config.MessagePropertyMap, error) {
	if o.plain() {
		return nil, nil
	}
	p := make(config.MessagePropertyMap, 8+len(o.UserProperties))
	for k, v := range o.UserProperties {
		if strings.HasPrefix(k, solacePropertyPrefix) {
			continue
		}
		switch v.(type) {
		case int64, float64, bool, string, []byte, int32, int16, int8, uint8, uint16, uint32, uint64, float32:
		case int:
			v = int64(v.(int))
		case nil:
			continue
		default:
			v = fmt.Sprint(v)
		}
		p[config.MessageProperty(k)] = v
	}
	if o.ApplicationMessageID != "" {
		p[config.MessagePropertyApplicationMessageID] = o.ApplicationMessageID
	}
	if o.ApplicationMessageType != "" {
		p[config.MessagePropertyApplicationMessageType] = o.ApplicationMessageType
	}
	if o.CorrelationID != "" {
		p[config.MessagePropertyCorrelationID] = o.CorrelationID
	}
	if o.SenderID != "" {
		p[config.MessagePropertySenderID] = o.SenderID
	}
	if o.HTTPContentType != "" || o.HTTPContentEncoding != "" {
		p[config.MessagePropertyHTTPContentType] = o.HTTPContentType
		p[config.MessagePropertyHTTPContentEncoding] = o.HTTPContentEncoding
	}
	if o.Priority != nil {
		if *o.Priority < 0 || *o.Priority > 255 {
			return nil, fmt.Errorf("priority %d out of range 0..255", *o.Priority)
		}
		p[config.MessagePropertyPriority] = *o.Priority
	}
	if o.TTL < 0 {
		return nil, fmt.Errorf("ttl %v is negative", o.TTL)
	}
	if o.TTL > 0 {
		p[config.MessagePropertyPersistentTimeToLive] = o.TTL.Milliseconds()
	}
	if o.DMQEligible != nil {
		p[config.MessagePropertyPersistentDMQEligible] = *o.DMQEligible
	}
	if o.ClassOfService != nil {
		if *o.ClassOfService < 0 || *o.ClassOfService > 2 {
			return nil, fmt.Errorf("class_of_service %d out of range 0..2", *o.ClassOfService)
		}
		p[config.MessagePropertyClassOfService] = *o.ClassOfService
	}
	if o.PartitionKey != "" {
		p[config.MessageProperty(config.QueuePartitionKey)] = o.PartitionKey
	}
	if o.ReplyTo != "" {
		p[config.MessageProperty(ReplyToProperty)] = o.ReplyTo
	}
	if o.AckImmediately {
		p[config.MessagePropertyPersistentAckImmediately] = true
	}
	return p, nil
}

// plain reports a message without attributes, which needs no property map.
func (o *Outbound) plain() bool {
	return len(o.UserProperties) == 0 && o.ApplicationMessageID == "" && o.ApplicationMessageType == "" &&
		o.CorrelationID == "" && o.SenderID == "" && o.HTTPContentType == "" && o.HTTPContentEncoding == "" &&
		o.Priority == nil && o.TTL == 0 && o.DMQEligible == nil && o.ClassOfService == nil &&
		o.PartitionKey == "" && o.ReplyTo == "" && !o.AckImmediately
}

// build turns o into a client message. The caller disposes it once the
// publisher took its copy.
func build(b solace.OutboundMessageBuilder, topics *topicCache, o *Outbound) (message.OutboundMessage, *resource.Topic, error) {
	if o.Destination.Name == "" {
		return nil, nil, fmt.Errorf("empty %s name", destKind(o.Destination))
	}
	props, err := o.properties()
	if err != nil {
		return nil, nil, err
	}
	var m message.OutboundMessage
	if props == nil {
		m, err = b.BuildWithByteArrayPayload(o.Payload)
	} else {
		m, err = b.BuildWithByteArrayPayload(o.Payload, props)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("building message: %w", err)
	}
	return m, topics.get(o.Destination.Topic()), nil
}

// topicCache remembers the last topic, which is every topic when the
// destination is static, without growing with dynamic destinations.
type topicCache struct {
	last atomic.Pointer[resource.Topic]
}

func (c *topicCache) get(name string) *resource.Topic {
	if t := c.last.Load(); t != nil && t.GetName() == name {
		return t
	}
	t := resource.TopicOf(name)
	c.last.Store(t)
	return t
}

func destKind(d Destination) string {
	if d.Queue {
		return "queue"
	}
	return "topic"
}
