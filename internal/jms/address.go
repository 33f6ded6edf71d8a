package jms

import (
	"errors"
	"fmt"
	"strings"
)

// DestKind is a JMS destination type, valued as the mapping encodes it in the
// x-opt-jms-dest and x-opt-jms-reply-type message annotations.
type DestKind int8

// Destination type codes from the AMQP JMS Mapping, section 3.2.
const (
	KindQueue     DestKind = 0
	KindTopic     DestKind = 1
	KindTempQueue DestKind = 2
	KindTempTopic DestKind = 3
)

// String returns the lower-case JMS name of the destination type.
func (k DestKind) String() string { return enumName(k, destKindNames[:], "kind") }

// enumName is names[v], or what(v) for a value names has no name for.
func enumName[T ~int | ~int8](v T, names []string, what string) string {
	if v >= 0 && int(v) < len(names) {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", what, v)
}

var destKindNames = [...]string{
	KindQueue:     "queue",
	KindTopic:     "topic",
	KindTempQueue: "temporary-queue",
	KindTempTopic: "temporary-topic",
}

// isTopic reports whether messages to the kind fan out to subscribers.
func (k DestKind) isTopic() bool { return k == KindTopic || k == KindTempTopic }

// Address styles: how a queue or topic name becomes an AMQP address.
const (
	StyleAuto     = "auto"
	StyleActiveMQ = "activemq"
	StyleArtemis  = "artemis"
	StyleRabbitMQ = "rabbitmq"
	StyleSolace   = "solace"
	StyleCustom   = "custom"
)

// Styles lists the address styles in the order the docs present them.
var Styles = []string{StyleAuto, StyleActiveMQ, StyleArtemis, StyleRabbitMQ, StyleSolace, StyleCustom}

// Destination is a resolved JMS destination: what the link or the message's
// `to` field carries, and how a JMS consumer should see it.
type Destination struct {
	Kind DestKind
	// Name is the JMS name as configured, before any prefix.
	Name string
	// Address is the AMQP address (target address or properties.to).
	Address string
	// Capabilities are the target capabilities a per-destination link sends,
	// which Artemis and Solace use to pick the routing type.
	Capabilities []string
	// Durable asks for a durable target terminus. RabbitMQ 3.x declares the
	// queue behind /queue/Q durable only then; otherwise a broker restart
	// deletes it with every message it held.
	Durable bool
}

// Addresser maps JMS names to AMQP addresses under one broker convention.
// The zero value is usable and yields plain names.
type Addresser struct {
	style        string
	queuePrefix  string
	topicPrefix  string
	capabilities bool
	// verbatimSlash passes names starting with "/" through untouched, for
	// RabbitMQ's /exchange/X/key and /amq/queue/Q forms.
	verbatimSlash bool
	// durableQueues marks queue destinations Durable.
	durableQueues bool
}

// Connection property names ActiveMQ (and Qpid JMS-aware brokers) use to
// advertise their addressing prefixes in the open frame.
const (
	propQueuePrefix = "queue-prefix"
	propTopicPrefix = "topic-prefix"
	propProduct     = "product"
)

// NewAddresser returns the Addresser for style. queuePrefix and topicPrefix
// apply to the custom and artemis styles (Artemis acceptors can be configured
// with anycastPrefix/multicastPrefix). connProps are the broker's open-frame
// connection properties, read by the auto style.
func NewAddresser(style, queuePrefix, topicPrefix string, connProps map[string]any) (Addresser, error) {
	switch style {
	case StyleActiveMQ:
		// ActiveMQ 5 ignores capabilities and x-opt-jms-dest for routing and
		// treats an unprefixed address as a queue; the prefixes decide.
		return Addresser{style: style, queuePrefix: "queue://", topicPrefix: "topic://", capabilities: true}, nil
	case StyleArtemis:
		// Artemis picks the routing type from the target capabilities (what
		// Qpid JMS sends) or, when configured, from acceptor prefixes.
		return Addresser{style: style, queuePrefix: queuePrefix, topicPrefix: topicPrefix, capabilities: true}, nil
	case StyleRabbitMQ:
		// RabbitMQ 3.x rabbitmq_amqp1_0: /queue/Q declares Q and publishes to
		// it through the default exchange; /topic/K publishes to amq.topic
		// with routing key K. Other documented forms (/exchange/X/K,
		// /amq/queue/Q) can be given verbatim as a name starting with "/".
		return Addresser{style: style, queuePrefix: "/queue/", topicPrefix: "/topic/", verbatimSlash: true, durableQueues: true}, nil
	case StyleSolace:
		// Solace treats an unprefixed target address as a durable queue and
		// topic:// as a topic; target capabilities override both, so send
		// them too.
		return Addresser{style: style, topicPrefix: "topic://", capabilities: true}, nil
	case StyleCustom:
		return Addresser{style: style, queuePrefix: queuePrefix, topicPrefix: topicPrefix, capabilities: true}, nil
	case StyleAuto, "":
		return autoAddresser(connProps), nil
	}
	return Addresser{}, fmt.Errorf("unknown address style %q, expected one of %s", style, strings.Join(Styles, ", "))
}

// autoAddresser reads the prefixes the broker advertises. RabbitMQ 3.x does
// not advertise any but identifies itself as product RabbitMQ, and its plain
// addresses only reach queues that already exist, so it gets its own style.
func autoAddresser(props map[string]any) Addresser {
	qp, qok := stringProp(props, propQueuePrefix)
	tp, tok := stringProp(props, propTopicPrefix)
	if qok || tok {
		return Addresser{style: StyleAuto, queuePrefix: qp, topicPrefix: tp, capabilities: true}
	}
	if p, _ := stringProp(props, propProduct); strings.EqualFold(p, "RabbitMQ") {
		a, _ := NewAddresser(StyleRabbitMQ, "", "", nil)
		return a
	}
	return Addresser{style: StyleAuto, capabilities: true}
}

func stringProp(props map[string]any, key string) (string, bool) {
	v, ok := props[key]
	if !ok || v == nil {
		return "", false
	}
	switch s := v.(type) {
	case string:
		return s, true
	case fmt.Stringer:
		return s.String(), true
	}
	// A symbol or other typed string.
	return fmt.Sprint(v), true
}

// Style returns the effective style; auto reports what it resolved to.
func (a Addresser) Style() string {
	if a.style == "" {
		return StyleAuto
	}
	return a.style
}

// Prefixes returns the queue and topic prefixes in use.
func (a Addresser) Prefixes() (queue, topic string) { return a.queuePrefix, a.topicPrefix }

// ErrEmptyDestination is returned for an empty queue or topic name, which
// usually means an interpolation resolved to nothing.
var ErrEmptyDestination = errors.New("destination name is empty")

// Resolve turns a JMS name into a Destination. A name that already carries
// the style's prefix is not prefixed twice.
func (a Addresser) Resolve(kind DestKind, name string) (Destination, error) {
	if name == "" {
		return Destination{}, fmt.Errorf("%s: %w", kind, ErrEmptyDestination)
	}
	d := Destination{Kind: kind, Name: name}
	prefix := a.queuePrefix
	if kind.isTopic() {
		prefix = a.topicPrefix
	}
	switch {
	case a.verbatimSlash && strings.HasPrefix(name, "/"):
		d.Address = name
	case prefix != "" && strings.HasPrefix(name, prefix):
		d.Address = name
		d.Name = strings.TrimPrefix(name, prefix)
	default:
		d.Address = prefix + name
	}
	if a.capabilities {
		d.Capabilities = []string{capabilityFor(kind)}
	}
	d.Durable = a.durableQueues && kind == KindQueue
	return d, nil
}

// capabilityFor returns the target capability Qpid JMS sends for a kind.
func capabilityFor(k DestKind) string {
	switch k {
	case KindTopic, KindTempQueue, KindTempTopic:
		return k.String()
	}
	return "queue"
}
