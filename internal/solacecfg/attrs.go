package solacecfg

// This file is the message attribute fields, which the solace output sets on
// every message and the solace_request_reply processor on every request:
// their names, their docs and how a value goes onto a session.Outbound, so
// that both components read and check an attribute by one rule.

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connect-solace/connect-solace/internal/interp"
	"github.com/connect-solace/connect-solace/internal/session"
	"github.com/connect-solace/connect-solace/internal/ttl"
)

// Field names of the message attributes.
const (
	FieldAppMessageID        = "application_message_id"
	FieldAppMessageType      = "application_message_type"
	FieldCorrelationID       = "correlation_id"
	FieldPriority            = "priority"
	FieldTTL                 = "ttl"
	FieldDMQEligible         = "dmq_eligible"
	FieldReplyTo             = "reply_to"
	FieldSenderID            = "sender_id"
	FieldClassOfService      = "class_of_service"
	FieldPartitionKey        = "partition_key"
	FieldHTTPContentType     = "http_content_type"
	FieldHTTPContentEncoding = "http_content_encoding"
)

// Attr is one message attribute field, an interpolated string: Rule applies
// its value to a message (an empty value leaves the attribute unset), Doc
// describes it, and Example and Advanced are how the output's docs show it.
type Attr struct {
	Rule     interp.Rule[session.Outbound]
	Doc      string
	Example  string
	Advanced bool
}

// Attrs are the attribute fields in the order of the output's spec.
var Attrs = []Attr{
	{Rule: textAttr(FieldAppMessageID, func(o *session.Outbound) *string { return &o.ApplicationMessageID }),
		Doc: "The application message id (JMSMessageID for JMS consumers). Empty leaves it unset.", Example: `${! meta("id") }`},
	{Rule: textAttr(FieldAppMessageType, func(o *session.Outbound) *string { return &o.ApplicationMessageType }),
		Doc: "The application message type (JMSType). Empty leaves it unset.", Advanced: true},
	{Rule: textAttr(FieldCorrelationID, func(o *session.Outbound) *string { return &o.CorrelationID }),
		Doc: "The correlation id (JMSCorrelationID). Empty leaves it unset.", Example: `${! json("order_id") }`},
	{Rule: rangeAttr(FieldPriority, session.PriorityRange, func(o *session.Outbound) **int { return &o.Priority }),
		Doc: "The message priority, 0 (lowest) to 255. Empty leaves it unset.", Example: "4"},
	{Rule: interp.Rule[session.Outbound]{Name: FieldTTL, Apply: applyTTL},
		Doc: "The time to live of persistent messages, as a duration (`30s`) or milliseconds (`30000`). Empty or `0` means no expiry. Queues discard expired messages only when they respect TTLs.", Example: "1h"},
	{Rule: interp.Rule[session.Outbound]{Name: FieldDMQEligible, Apply: applyDMQEligible},
		Doc: "`true` or `false`: whether the message may go to a dead message queue when it expires or exceeds its redelivery count. Empty means the client default (`true`).", Example: "false"},
	{Rule: textAttr(FieldReplyTo, func(o *session.Outbound) *string { return &o.ReplyTo }),
		Doc: "A reply destination, carried as the user property `solace_reply_to`: the Solace Go client's publishers cannot set the SMF reply-to header. Empty leaves it unset.", Advanced: true},
	{Rule: textAttr(FieldSenderID, func(o *session.Outbound) *string { return &o.SenderID }),
		Doc: "The sender id. Empty leaves it unset.", Advanced: true},
	{Rule: rangeAttr(FieldClassOfService, session.ClassOfServiceRange, func(o *session.Outbound) **int { return &o.ClassOfService }),
		Doc: "The class of service of direct messages, 0 to 2. Empty leaves it unset.", Advanced: true},
	{Rule: textAttr(FieldPartitionKey, func(o *session.Outbound) *string { return &o.PartitionKey }),
		Doc: "The partition key of partitioned queues, sent as the user property `JMSXGroupID`. Empty leaves it unset.", Example: `${! json("customer_id") }`},
	{Rule: textAttr(FieldHTTPContentType, func(o *session.Outbound) *string { return &o.HTTPContentType }),
		Doc: "The HTTP content type attribute, e.g. for REST consumers. Empty leaves it unset.", Example: "application/json", Advanced: true},
	{Rule: textAttr(FieldHTTPContentEncoding, func(o *session.Outbound) *string { return &o.HTTPContentEncoding }),
		Doc: "The HTTP content encoding attribute. Empty leaves it unset.", Advanced: true},
}

// AttrsNamed returns the attributes of Attrs with the given names, in Attrs'
// order; a name that is no attribute panics, as it is a programming error.
func AttrsNamed(names ...string) []Attr {
	var as []Attr
	for _, a := range Attrs {
		for _, n := range names {
			if a.Rule.Name == n {
				as = append(as, a)
			}
		}
	}
	if len(as) != len(names) {
		panic(fmt.Sprintf("solacecfg: %v are not all message attributes", names))
	}
	return as
}

// AttrRules returns the rules of as, for interp.Plan.
func AttrRules(as []Attr) []interp.Rule[session.Outbound] {
	rules := make([]interp.Rule[session.Outbound], len(as))
	for i, a := range as {
		rules[i] = a.Rule
	}
	return rules
}

// Field returns the spec field of a, with lint as its lint rule; the caller
// adds Example and Advanced as its docs show them.
func (a Attr) Field(lint string) *service.ConfigField {
	return service.NewInterpolatedStringField(a.Rule.Name).
		Description(a.Doc).Default("").LintRule(lint)
}

// textAttr is the rule of a string attribute, field giving where it goes.
func textAttr(name string, field func(*session.Outbound) *string) interp.Rule[session.Outbound] {
	return interp.Rule[session.Outbound]{Name: name, Apply: func(o *session.Outbound, v string) error {
		*field(o) = v
		return nil
	}}
}

// rangeAttr is the rule of an optional integer attribute in r.
func rangeAttr(name string, r session.Range, field func(*session.Outbound) **int) interp.Rule[session.Outbound] {
	return interp.Rule[session.Outbound]{Name: name, Apply: func(o *session.Outbound, v string) (err error) {
		*field(o), err = r.Parse(v)
		return err
	}}
}

func applyTTL(o *session.Outbound, v string) (err error) {
	o.TTL, err = ttl.Parse(v)
	return err
}

func applyDMQEligible(o *session.Outbound, v string) error {
	if v = strings.TrimSpace(v); v == "" {
		o.DMQEligible = nil
		return nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("%q is not true or false", v)
	}
	o.DMQEligible = &b
	return nil
}
