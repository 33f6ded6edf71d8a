package session

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/connect-solace/connect-solace/internal/session/ccsmp"
	"github.com/connect-solace/connect-solace/internal/widen"
	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/config"
	"solace.dev/go/messaging/pkg/solace/message"
	"solace.dev/go/messaging/pkg/solace/message/sdt"
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
	if err := nameLengthError("topic", t, MaxTopicBytes); err != nil {
		return err
	}
	switch {
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

// nameLengthError says why name, a destination's what, is empty or longer
// than limit bytes; nil when it is neither.
func nameLengthError(what, name string, limit int) error {
	switch {
	case name == "":
		return errors.New("the " + what + " is empty")
	case len(name) > limit:
		return fmt.Errorf("the %s is %d bytes long, the maximum is %d", what, len(name), limit)
	}
	return nil
}

func validateQueueName(q string) error {
	if err := nameLengthError("queue name", q, MaxQueueBytes); err != nil {
		return err
	}
	if !utf8.ValidString(q) {
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
func (d Destination) String() string { return fmt.Sprintf("%s %q", d.Kind(), d.Name) }

// Kind is "queue" or "topic".
func (d Destination) Kind() string {
	if d.Queue {
		return "queue"
	}
	return "topic"
}

// Outbound is a message to publish, in Solace terms but free of client types.
// Zero values mean "not set" except where noted.
type Outbound struct {
	Payload     []byte
	Destination Destination
	// PayloadType is the form the payload is sent in (sdt_payload.go);
	// with PayloadMap or PayloadStream the payload is Body, an SDT map or
	// stream (see ToSDT), not Payload.
	PayloadType PayloadType
	Body        any

	ApplicationMessageID   string
	ApplicationMessageType string
	CorrelationID          string
	SenderID               string
	HTTPContentType        string
	HTTPContentEncoding    string
	// Priority in PriorityRange, nil means unset.
	Priority *int
	// TTL is the time to live for persistent messages; 0 means none.
	TTL time.Duration
	// DMQEligible nil means the client default (eligible).
	DMQEligible *bool
	// ClassOfService in ClassOfServiceRange (direct messages), nil means
	// unset.
	ClassOfService *int
	// PartitionKey sets the JMSXGroupID user property that partitioned
	// queues hash on.
	PartitionKey string
	// ReplyTo is carried as the user property ReplyToProperty, because
	// the client's public API cannot set the SMF reply-to header on a
	// published message (only its request-reply publisher can).
	ReplyTo string
	// Reply sends the message as a reply: the SMF reply flag set (natively,
	// see ccsmp.SetReply), which a Solace requester needs, with its
	// correlation id in CorrelationID and its reply-to as the destination,
	// to take the message as the answer to its request.
	Reply bool
	// AckImmediately asks the broker to confirm this persistent message at
	// once instead of batching its acknowledgement with later ones: lower
	// latency for a message that is waited on alone.
	AckImmediately bool
	// UserProperties are sent as user properties, their values as
	// userPropertyValue converts them.
	UserProperties map[string]any
}

// Range is the allowed range of a numeric message attribute.
type Range struct {
	Name     string
	Min, Max int
}

// The ranges of Outbound's numeric attributes, checked by properties and by
// the output when it reads a static or per-message value.
var (
	PriorityRange       = Range{Name: "priority", Min: 0, Max: 255}
	ClassOfServiceRange = Range{Name: "class_of_service", Min: 0, Max: 2}
)

// Check reports n outside the range.
func (r Range) Check(n int) error {
	if n < r.Min || n > r.Max {
		return fmt.Errorf("%s %d out of range %d..%d", r.Name, n, r.Min, r.Max)
	}
	return nil
}

// Parse reads an optional integer in r from a config or metadata value:
// nil for an empty (or blank) value.
func (r Range) Parse(s string) (*int, error) {
	if s = strings.TrimSpace(s); s == "" {
		return nil, nil
	}
	n, err := strconv.Atoi(s)
	if err == nil {
		err = r.Check(n)
	}
	if err != nil {
		return nil, fmt.Errorf("%q is not an integer from %d to %d", s, r.Min, r.Max)
	}
	return &n, nil
}

// ReplyToProperty is the user property carrying Outbound.ReplyTo.
const ReplyToProperty = "solace_reply_to"

// solacePropertyPrefix is the namespace of the client's own message
// properties; user properties under it would be read as client settings.
const solacePropertyPrefix = "solace.messaging."

// properties adds the attributes to p as client message properties.
func (o *Outbound) properties(p config.MessagePropertyMap) error {
	for k, v := range o.UserProperties {
		if strings.HasPrefix(k, solacePropertyPrefix) {
			continue
		}
		p[config.MessageProperty(k)] = userPropertyValue(v)
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
		if err := PriorityRange.Check(*o.Priority); err != nil {
			return err
		}
		p[config.MessagePropertyPriority] = *o.Priority
	}
	if o.TTL < 0 {
		return fmt.Errorf("ttl %v is negative", o.TTL)
	}
	if o.TTL > 0 {
		p[config.MessagePropertyPersistentTimeToLive] = o.TTL.Milliseconds()
	}
	if o.DMQEligible != nil {
		p[config.MessagePropertyPersistentDMQEligible] = *o.DMQEligible
	}
	if o.ClassOfService != nil {
		if err := ClassOfServiceRange.Check(*o.ClassOfService); err != nil {
			return err
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
	return nil
}

// userPropertyValue keeps the types a user property can carry: int64,
// float64, bool, string and []byte arrive as the matching SDT types; other
// Go integers that fit (widen.Int64) become int64 and a larger uint64 its
// decimal string, float32 float64, nil the empty string, and anything else
// its fmt.Sprint string.
func userPropertyValue(v any) any {
	switch t := v.(type) {
	case int64, float64, bool, string, []byte:
		return t
	case float32:
		return float64(t)
	case nil:
		return ""
	}
	if i, ok := widen.Int64(v); ok {
		return i
	}
	if u, ok := v.(uint64); ok {
		return strconv.FormatUint(u, 10)
	}
	return fmt.Sprint(v)
}

// plain reports a message without attributes, which needs no property map.
func (o *Outbound) plain() bool {
	return len(o.UserProperties) == 0 && o.ApplicationMessageID == "" && o.ApplicationMessageType == "" &&
		o.CorrelationID == "" && o.SenderID == "" && o.HTTPContentType == "" && o.HTTPContentEncoding == "" &&
		o.Priority == nil && o.TTL == 0 && o.DMQEligible == nil && o.ClassOfService == nil &&
		o.PartitionKey == "" && o.ReplyTo == "" && !o.AckImmediately && !o.Reply && o.PayloadType == PayloadBytes
}

// build turns o into a client message. The caller disposes it once the
// publisher took its copy.
func build(b solace.OutboundMessageBuilder, topics *topicCache, o *Outbound) (message.OutboundMessage, *resource.Topic, error) {
	if o.Destination.Name == "" {
		return nil, nil, fmt.Errorf("empty %s name", o.Destination.Kind())
	}
	m, err := buildMessage(b, o)
	if err != nil {
		return nil, nil, err
	}
	return m, topics.get(o.Destination.Topic()), nil
}

// buildMessage turns o's payload and attributes into a client message,
// leaving the destination to the caller.
func buildMessage(b solace.OutboundMessageBuilder, o *Outbound) (message.OutboundMessage, error) {
	var cfg []config.MessagePropertiesConfigurationProvider
	if !o.plain() {
		ps := propScratches.Get().(*propScratch)
		defer ps.put()
		if err := o.properties(config.MessagePropertyMap(ps.m)); err != nil {
			return nil, err
		}
		cfg = ps.cfg[:]
	}
	var m message.OutboundMessage
	var err error
	switch o.PayloadType {
	case PayloadString:
		m, err = b.BuildWithStringPayload(string(o.Payload), cfg...)
	case PayloadMap:
		mp, ok := o.Body.(sdt.Map)
		if !ok {
			return nil, fmt.Errorf("building message: an SDT map payload needs a map, not %T", o.Body)
		}
		m, err = b.BuildWithMapPayload(mp, cfg...)
	case PayloadStream:
		st, ok := o.Body.(sdt.Stream)
		if !ok {
			return nil, fmt.Errorf("building message: an SDT stream payload needs a list, not %T", o.Body)
		}
		m, err = b.BuildWithStreamPayload(st, cfg...)
	default:
		m, err = b.BuildWithByteArrayPayload(o.Payload, cfg...)
	}
	if err != nil {
		return nil, fmt.Errorf("building message: %w", err)
	}
	if o.Reply {
		if err := ccsmp.SetReply(m); err != nil {
			m.Dispose()
			return nil, err
		}
	}
	return m, nil
}

// propScratch is the property map of one build, reused: the builder only
// reads it, merging it into a map of its own. A message with any attribute
// (and every message of the streaming writer, which asks for immediate
// acks) paid for a map and the client's copy of it, about 650 bytes per
// message through a solace → solace bridge with writer: streaming.
type propScratch struct {
	m   propMap
	cfg [1]config.MessagePropertiesConfigurationProvider // m, as the builder takes it
}

// propMap gives the builder the map itself, where config.MessagePropertyMap's
// GetConfiguration would copy it first.
type propMap config.MessagePropertyMap

func (p propMap) GetConfiguration() config.MessagePropertyMap { return config.MessagePropertyMap(p) }

var propScratches = sync.Pool{New: func() any {
	ps := &propScratch{m: propMap{}}
	ps.cfg[0] = ps.m
	return ps
}}

// propScratchMax is the most properties a map may have held and still be
// reused: clear keeps a map's room, and one message with thousands of user
// properties must not make every later build hold that much.
const propScratchMax = 64

func (ps *propScratch) put() {
	if len(ps.m) > propScratchMax {
		return
	}
	clear(ps.m)
	propScratches.Put(ps)
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
