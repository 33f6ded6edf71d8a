package jms

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/connect-solace/connect-solace/internal/amqpwire"
)

// Source capabilities of the JMS mapping for shared subscriptions.
const (
	CapShared = "shared"
	CapGlobal = "global"
)

// SelectorFilterName is the source filter that carries a JMS message
// selector (AMQP filter registry; what Qpid JMS sends).
const SelectorFilterName = amqpwire.SelectorFilterName

// SubscriptionNameDelimiter separates a subscription name from the suffixes
// the mapping's link names add ("|global", "|volatile1").
const SubscriptionNameDelimiter = "|"

// ReceiverConfig says what a receiver link consumes and how.
type ReceiverConfig struct {
	// Source is the queue or topic, resolved by an Addresser.
	Source Destination
	// Subscription names a durable or shared topic subscription.
	Subscription string
	// Durable keeps the subscription while the consumer is away.
	Durable bool
	// Shared lets several consumers (connections) share the subscription.
	Shared bool
	// Global marks a shared subscription made without a client ID: its name
	// is global rather than scoped to the container ID.
	Global bool
	// Selector is a JMS message selector, sent as a source filter.
	Selector string
	// Prefetch is the most deliveries that may be unsettled or in flight.
	Prefetch int
}

// LinkName is the receiver link name the AMQP JMS mapping gives the
// subscription (as Qpid JMS names it for the first consumer on a
// connection): the subscription name for a durable one, with "|global"
// when shared without a client ID; "name|volatile1" (or
// "name|global-volatile1") for a shared non-durable one. Other consumers
// get a random name.
func (c ReceiverConfig) LinkName() string {
	switch {
	case c.Subscription == "":
		return ""
	case c.Durable && c.Shared && c.Global:
		return c.Subscription + SubscriptionNameDelimiter + "global"
	case c.Durable:
		return c.Subscription
	case c.Shared && c.Global:
		return c.Subscription + SubscriptionNameDelimiter + "global-volatile1"
	case c.Shared:
		return c.Subscription + SubscriptionNameDelimiter + "volatile1"
	}
	return ""
}

func (c ReceiverConfig) options() amqpwire.ReceiverOptions {
	caps := append([]string(nil), c.Source.Capabilities...)
	if c.Shared {
		caps = append(caps, CapShared)
		if c.Global {
			caps = append(caps, CapGlobal)
		}
	}
	o := amqpwire.ReceiverOptions{
		Name:         c.LinkName(),
		Source:       c.Source.Address,
		Capabilities: caps,
		Selector:     c.Selector,
	}
	switch {
	case c.Durable:
		// The subscription outlives the link and the connection: a
		// durable source that never expires (mapping 5.3).
		o.Durability, o.ExpiryPolicy = durabilityUnsettledState, "never"
	case c.Source.Kind.isTopic():
		o.ExpiryPolicy = "link-detach"
	case c.Source.Durable:
		// RabbitMQ declares the queue behind /queue/Q with the source's
		// durability and refuses an attach that disagrees with it.
		o.Durability = durabilityConfiguration
	}
	return o
}

// Terminus durabilities (AMQP 1.0 part 3.5.5).
const (
	durabilityConfiguration  = 1
	durabilityUnsettledState = 2
)

// Outcome is how a received message is settled.
type Outcome int

// Outcomes. Modified is sent with delivery-failed, so it counts toward the
// broker's redelivery limit (and its dead-letter queue).
const (
	Accepted Outcome = iota
	Released
	Modified
	Rejected
)

func (o Outcome) String() string { return enumName(o, outcomeNames[:], "outcome") }

var outcomeNames = [...]string{
	Accepted: "accepted",
	Released: "released",
	Modified: "modified",
	Rejected: "rejected",
}

// ErrStaleDelivery is returned when settling a message whose link or
// connection is gone: the broker redelivers it, so there is nothing to do.
var ErrStaleDelivery = errors.New("the delivery's link is gone; the broker redelivers the message")

// Receiver is a receiver link with credit managed for at-least-once
// consumption by a CreditWindow: Prefetch credits are granted at attach and
// renewed, a window at a time, as messages are handed to the caller, with
// at most 2×Prefetch unsettled. The broker never holds credit it cannot use
// while the caller waits, and a flow frame never overlaps deliveries in
// flight, which on RabbitMQ 3.10 starves the link (see CreditWindow);
// go-amqp's automatic renewal, which the amqp_1 input uses, does overlap
// them and stalls there (scripts/jms_vs_amqp1_input.py explains how).
//
// A delivery is one copy of its bytes, which Decode reads in place: no
// goroutine per delivery and no message built section by section, so the
// input costs no more CPU per message than a bare AMQP receiver.
type Receiver struct {
	conn *Conn
	rcv  *amqpwire.Receiver
	// rabbit3 marks RabbitMQ 3.x, whose AMQP 1.0 plugin ends the link on a
	// modified disposition (amqp:invalid-field) and flags redeliveries only
	// with first-acquirer=false.
	rabbit3 bool

	// addr and source are how DialReceiver named the link's source.
	addr   Addresser
	source Destination

	mu     sync.Mutex
	credit CreditWindow
}

// Delivery is a received message: its encoded sections (for Decode) and
// what settling it needs.
type Delivery = amqpwire.Incoming

// NewReceiver attaches a receiver link on the connection's session. With a
// selector it checks that the broker echoed the selector filter: a broker
// that ignores it would deliver every message.
func (c *Conn) NewReceiver(ctx context.Context, cfg ReceiverConfig) (*Receiver, error) {
	if cfg.Prefetch < 1 {
		return nil, fmt.Errorf("prefetch must be at least 1, got %d", cfg.Prefetch)
	}
	rabbit3 := isRabbitMQ3(c.Properties())
	if cfg.Selector != "" && rabbit3 {
		// It echoes the selector filter in its attach but does not apply it.
		return nil, fmt.Errorf("broker on %s is RabbitMQ 3.x, which accepts a JMS selector filter but ignores it and would deliver every message: remove selector (or filter in the pipeline)", c.url)
	}
	c.mu.Lock()
	sess := c.sess
	c.mu.Unlock()
	rcv, err := sess.NewReceiver(ctx, cfg.options())
	if err != nil {
		return nil, c.receiverAttachError(err, cfg.Source.Address)
	}
	if cfg.Selector != "" && !rcv.HasFilter(SelectorFilterName) {
		// The link is not closed: for a durable subscription a closing
		// detach would delete it. The caller drops the connection.
		return nil, fmt.Errorf("broker on %s attached %q without the selector filter, so it does not apply JMS selectors and would deliver every message: remove selector, or use a broker that supports them (ActiveMQ, Artemis, Solace, Qpid)", c.url, cfg.Source.Address)
	}
	r := &Receiver{conn: c, rcv: rcv, rabbit3: rabbit3, credit: NewCreditWindow(cfg.Prefetch, !rabbit3)}
	if err := rcv.IssueCredit(uint32(cfg.Prefetch)); err != nil {
		return nil, fmt.Errorf("granting credit on %q: %w", cfg.Source.Address, err)
	}
	return r, nil
}

func (c *Conn) receiverAttachError(err error, address string) error {
	if re, ok := refusal(err, address); ok {
		return re
	}
	return fmt.Errorf("attaching receiver link to %q on %s: %w", address, c.url, err)
}

// isRabbitMQ3 reads the product and version of the broker's open frame.
func isRabbitMQ3(props map[string]any) bool {
	p, _ := stringProp(props, propProduct)
	v, _ := stringProp(props, "version")
	return strings.EqualFold(p, "RabbitMQ") && strings.HasPrefix(v, "3.")
}

// FirstAcquirerMarksRedelivery reports whether the broker flags a
// redelivery only by first-acquirer=false (RabbitMQ 3.x leaves the
// delivery-count at 0), which DecodeOptions should then honour.
func (r *Receiver) FirstAcquirerMarksRedelivery() bool { return r.rabbit3 }

// ModifiedUnsupported reports whether the broker refuses the modified
// outcome, so Settle sends released instead.
func (r *Receiver) ModifiedUnsupported() bool { return r.rabbit3 }

// Addresser is the address mapping of the receiver's connection (from
// ConnConfig.DialReceiver).
func (r *Receiver) Addresser() Addresser { return r.addr }

// Source is the queue or topic the receiver consumes (from
// ConnConfig.DialReceiver).
func (r *Receiver) Source() Destination { return r.source }

// Conn is the connection the receiver's link belongs to.
func (r *Receiver) Conn() *Conn { return r.conn }

// LinkName is the link's name, as attached.
func (r *Receiver) LinkName() string { return r.rcv.Name() }

// Receive waits for the next message. Once the link or connection has
// ended it fails, even with messages still buffered: they cannot be
// settled, and the broker redelivers them.
func (r *Receiver) Receive(ctx context.Context) (Delivery, error) {
	for {
		d, err := r.rcv.Receive(ctx)
		if err != nil {
			return d, err
		}
		if r.handedOut(d) {
			return d, nil
		}
	}
}

// Lost reports whether the receiver's connection has ended.
func (r *Receiver) Lost() bool { return r.conn.Lost() }

// TryReceive returns a buffered message without waiting; ok is false when
// there is none (or the link has ended).
func (r *Receiver) TryReceive() (Delivery, bool) {
	for {
		d, ok, err := r.rcv.TryReceive()
		if !ok || err != nil {
			return Delivery{}, false
		}
		if r.handedOut(d) {
			return d, true
		}
	}
}

// handedOut counts a delivery passed to the caller and renews credit if the
// window allows. An aborted delivery used a credit but is not passed on:
// it counts as received and settled at once, and handedOut reports false.
func (r *Receiver) handedOut(d Delivery) bool {
	r.mu.Lock()
	n := r.credit.OnReceive()
	if d.Aborted {
		n += r.credit.OnSettle()
	}
	r.mu.Unlock()
	if n > 0 {
		// Fails only after the link ended, when credit no longer matters.
		_ = r.rcv.IssueCredit(n)
	}
	return !d.Aborted
}

// Settle settles the deliveries with ids first..last (consecutive in
// delivery-id order) with outcome o, in one disposition; reason describes
// a rejection to the broker. presettled says the broker settled them
// already, so only the credit is counted (and nothing fails). Unsettled
// deliveries whose link or connection is gone yield ErrStaleDelivery. The disposition is buffered,
// not waited for: the broker's answer to it is no news for a receiver.
func (r *Receiver) Settle(first, last uint32, presettled bool, o Outcome, reason string) error {
	if o == Modified && r.rabbit3 {
		o = Released
	}
	var st amqpwire.State
	switch o {
	case Accepted:
		st.Kind = amqpwire.StateAccepted
	case Released:
		st.Kind = amqpwire.StateReleased
	case Modified:
		st = amqpwire.State{Kind: amqpwire.StateModified, DeliveryFailed: true}
	case Rejected:
		st.Kind = amqpwire.StateRejected
		if reason != "" {
			st.Error = &amqpwire.Error{Condition: "connect-solace:pipeline-rejected", Description: truncate(reason, 256)}
		}
	default:
		return fmt.Errorf("unknown outcome %v", o)
	}
	r.mu.Lock()
	var n uint32
	for id := first; ; id++ {
		n += r.credit.OnSettle()
		if id == last {
			break
		}
	}
	r.mu.Unlock()
	if presettled {
		if n > 0 {
			// Fails only after the link ended, when credit no longer
			// matters; the messages are no stale deliveries (the broker
			// never sends them again), so that is no error.
			_ = r.rcv.IssueCredit(n)
		}
		return nil
	}
	err := r.rcv.Settle(first, last, st, n)
	if err != nil {
		var le *amqpwire.LinkError
		var se *amqpwire.SessionError
		var ce *amqpwire.ConnError
		if errors.As(err, &le) || errors.As(err, &se) || errors.As(err, &ce) {
			return fmt.Errorf("%w: %v", ErrStaleDelivery, err)
		}
		return fmt.Errorf("settling message %s: %w", o, err)
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// Close ends the receiver. With unsubscribe it closes the link (a detach
// with closed=true), which deletes a durable subscription as JMS
// unsubscribe does; otherwise the link is left to end with the connection,
// which keeps the subscription and its messages.
func (r *Receiver) Close(ctx context.Context, unsubscribe bool) error {
	if !unsubscribe {
		return nil
	}
	if err := r.rcv.Close(ctx); err != nil {
		return fmt.Errorf("closing receiver link %q to unsubscribe: %w", strings.TrimSpace(r.rcv.Name()), err)
	}
	return nil
}
