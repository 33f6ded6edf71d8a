package session

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

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

// Limits of Solace destination names (docs.solace.com, "SMF Topics" and
// queue naming): a topic is 1 to 250 bytes of UTF-8 without NUL in at most
// 128 levels; a queue name is 1 to 200 bytes without control characters,
// empty levels or any of '*<>&;.
const (
	MaxTopicBytes  = 250
	MaxTopicLevels = 128
	MaxQueueBytes  = 200
	queueForbidden = "'*<>&;"
)

// Validate reports why the broker (or the client, which silently truncates a
// topic at a NUL byte) cannot take d; nil when it can. It is the one check of
// destination names: the output runs it once on a static name and per
// message on a dynamic one.
func (d Destination) Validate() error {
	if d.Queue {
		return validateQueueName(d.Name)
	}
	return ValidateTopic(d.Name)
}

// ValidateTopic checks a topic to publish to.
func ValidateTopic(t string) error {
	switch {
	case t == "":
		return errors.New("the topic is empty")
	case len(t) > MaxTopicBytes:
		return fmt.Errorf("the topic is %d bytes long, the maximum is %d", len(t), MaxTopicBytes)
	case strings.IndexByte(t, 0) >= 0:
		return fmt.Errorf("the topic contains a NUL byte at offset %d", strings.IndexByte(t, 0))
	case !utf8.ValidString(t):
		return errors.New("the topic is not valid UTF-8")
	}
	if n := strings.Count(t, "/") + 1; n > MaxTopicLevels {
		return fmt.Errorf("the topic has %d levels, the maximum is %d", n, MaxTopicLevels)
	}
	return nil
}

func validateQueueName(q string) error {
	switch {
	case q == "":
		return errors.New("the queue name is empty")
	case len(q) > MaxQueueBytes:
		return fmt.Errorf("the queue name is %d bytes long, the maximum is %d", len(q), MaxQueueBytes)
	case !utf8.ValidString(q):
		return errors.New("the queue name is not valid UTF-8")
	}
	for i, r := range q {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("the queue name contains the control character %U at offset %d", r, i)
		}
		if strings.ContainsRune(queueForbidden, r) {
			return fmt.Errorf("the queue name contains %q, which queue names cannot (none of %s)", r, queueForbidden)
		}
	}
	if strings.HasPrefix(q, "/") || strings.HasSuffix(q, "/") || strings.Contains(q, "//") {
		return errors.New("the queue name has an empty level (a leading, trailing or double /)")
	}
	return nil
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
