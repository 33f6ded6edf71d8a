package jms

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/Azure/go-amqp"
)

// Source capabilities of the JMS mapping for shared subscriptions.
const (
	CapShared = "shared"
	CapGlobal = "global"
)

// SelectorFilterName is the source filter that carries a JMS message
// selector (AMQP filter registry; what Qpid JMS sends).
const SelectorFilterName = "apache.org:selector-filter:string"

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

func (c ReceiverConfig) options() *amqp.ReceiverOptions {
	caps := append([]string(nil), c.Source.Capabilities...)
	if c.Shared {
		caps = append(caps, CapShared)
		if c.Global {
			caps = append(caps, CapGlobal)
		}
	}
	o := &amqp.ReceiverOptions{
		// Manual credit: the receiver tops it up as the pipeline settles, so
		// at most Prefetch deliveries are unsettled or on their way.
		Credit:             -1,
		Name:               c.LinkName(),
		SourceCapabilities: caps,
	}
	switch {
	case c.Durable:
		// The subscription outlives the link and the connection: a
		// durable source that never expires (mapping 5.3).
		o.SourceDurability = amqp.DurabilityUnsettledState
		o.SourceExpiryPolicy = amqp.ExpiryPolicyNever
	case c.Source.Kind.isTopic():
		o.SourceExpiryPolicy = amqp.ExpiryPolicyLinkDetach
	case c.Source.Durable:
		// RabbitMQ declares the queue behind /queue/Q with the source's
		// durability and refuses an attach that disagrees with it.
		o.SourceDurability = amqp.DurabilityConfiguration
	}
	if c.Selector != "" {
		o.Filters = []amqp.LinkFilter{amqp.NewSelectorFilter(c.Selector)}
	}
	return o
}

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

func (o Outcome) String() string {
	switch o {
	case Accepted:
		return "accepted"
	case Released:
		return "released"
	case Modified:
		return "modified"
	case Rejected:
		return "rejected"
	}
	return fmt.Sprintf("outcome(%d)", int(o))
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
type Receiver struct {
	conn *Conn
	rcv  *amqp.Receiver
	// rabbit3 marks RabbitMQ 3.x, whose AMQP 1.0 plugin ends the link on a
	// modified disposition (amqp:invalid-field) and flags redeliveries only
	// with first-acquirer=false.
	rabbit3 bool

	mu     sync.Mutex
	credit CreditWindow
}

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
	rcv, err := c.sess.NewReceiver(ctx, cfg.Source.Address, cfg.options())
	if err != nil {
		return nil, c.receiverAttachError(err, cfg.Source.Address)
	}
	if cfg.Selector != "" && rcv.LinkSourceFilterValue(SelectorFilterName) == nil {
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
	var ae *amqp.Error
	var ce *amqp.ConnError
	if errors.As(err, &ae) && refusalConditions[ae.Condition] && !errors.As(err, &ce) {
		return &RefusedError{Address: address, Err: ae}
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

// Conn is the connection the receiver's link belongs to.
func (r *Receiver) Conn() *Conn { return r.conn }

// LinkName is the link's name, as attached.
func (r *Receiver) LinkName() string { return r.rcv.LinkName() }

// Receive waits for the next message.
func (r *Receiver) Receive(ctx context.Context) (*amqp.Message, error) {
	m, err := r.rcv.Receive(ctx, nil)
	if err != nil {
		return nil, err
	}
	r.handedOut()
	return m, nil
}

// Lost reports whether the receiver's connection has ended. Messages still
// buffered from it cannot be settled and the broker redelivers them, so a
// caller drops them rather than pass on duplicates.
func (r *Receiver) Lost() bool {
	select {
	case <-r.conn.Done():
		return true
	default:
		return false
	}
}

// TryReceive returns a buffered message, or nil without waiting.
func (r *Receiver) TryReceive() *amqp.Message {
	m := r.rcv.Prefetched()
	if m != nil {
		r.handedOut()
	}
	return m
}

// handedOut counts a message passed to the caller and renews credit if the
// window allows.
func (r *Receiver) handedOut() {
	r.mu.Lock()
	n := r.credit.OnReceive()
	r.mu.Unlock()
	r.issue(n)
}

func (r *Receiver) issue(n uint32) {
	if n == 0 {
		return
	}
	// Fails only while a drain is in progress, which this receiver never
	// starts, or after the link ended, when credit no longer matters.
	_ = r.rcv.IssueCredit(n)
}

// Settle settles m with outcome o; reason describes a rejection to the
// broker. A message whose link or connection is gone yields
// ErrStaleDelivery.
func (r *Receiver) Settle(ctx context.Context, m *amqp.Message, o Outcome, reason string) error {
	select {
	case <-r.conn.Done():
		return ErrStaleDelivery
	default:
	}
	if o == Modified && r.rabbit3 {
		o = Released
	}
	var err error
	switch o {
	case Accepted:
		err = r.rcv.AcceptMessage(ctx, m)
	case Released:
		err = r.rcv.ReleaseMessage(ctx, m)
	case Modified:
		err = r.rcv.ModifyMessage(ctx, m, &amqp.ModifyMessageOptions{DeliveryFailed: true})
	case Rejected:
		var e *amqp.Error
		if reason != "" {
			e = &amqp.Error{Condition: "connect-solace:pipeline-rejected", Description: truncate(reason, 256)}
		}
		err = r.rcv.RejectMessage(ctx, m, e)
	default:
		return fmt.Errorf("unknown outcome %v", o)
	}
	if err != nil {
		var le *amqp.LinkError
		var se *amqp.SessionError
		var ce *amqp.ConnError
		if errors.As(err, &le) || errors.As(err, &se) || errors.As(err, &ce) {
			return fmt.Errorf("%w: %v", ErrStaleDelivery, err)
		}
		return fmt.Errorf("settling message %s: %w", o, err)
	}
	r.mu.Lock()
	n := r.credit.OnSettle()
	r.mu.Unlock()
	r.issue(n)
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
		return fmt.Errorf("closing receiver link %q to unsubscribe: %w", strings.TrimSpace(r.rcv.LinkName()), err)
	}
	return nil
}
