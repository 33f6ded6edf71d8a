package processor

import (
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connect-solace/connect-solace/internal/interp"
	"github.com/connect-solace/connect-solace/internal/lintmethod"
	"github.com/connect-solace/connect-solace/internal/session"
)

// The request attributes the processor sets, with the solace output's field
// names. Correlation id and reply-to are the client's: it sets both on
// every request.
const (
	rrFieldAppMessageID        = "application_message_id"
	rrFieldAppMessageType      = "application_message_type"
	rrFieldPriority            = "priority"
	rrFieldSenderID            = "sender_id"
	rrFieldClassOfService      = "class_of_service"
	rrFieldHTTPContentType     = "http_content_type"
	rrFieldHTTPContentEncoding = "http_content_encoding"
)

// rrAttrRule is how one attribute field's value goes onto a request. An
// empty value leaves the attribute unset.
type rrAttrRule struct {
	name  string
	doc   string
	apply func(o *session.Outbound, v string) error
}

// rrAttrRules are the attribute fields in spec order; rrFieldRule finds one.
var rrAttrRules = []rrAttrRule{
	{rrFieldAppMessageID, "The request's application message id.",
		func(o *session.Outbound, v string) error { o.ApplicationMessageID = v; return nil }},
	{rrFieldAppMessageType, "The request's application message type.",
		func(o *session.Outbound, v string) error { o.ApplicationMessageType = v; return nil }},
	{rrFieldPriority, "The request's priority, 0 to 255.",
		func(o *session.Outbound, v string) (err error) {
			o.Priority, err = session.PriorityRange.Parse(v)
			return err
		}},
	{rrFieldSenderID, "The request's sender id.",
		func(o *session.Outbound, v string) error { o.SenderID = v; return nil }},
	{rrFieldClassOfService, "The request's class of service, 0 to 2.",
		func(o *session.Outbound, v string) (err error) {
			o.ClassOfService, err = session.ClassOfServiceRange.Parse(v)
			return err
		}},
	{rrFieldHTTPContentType, "The request's HTTP content type.",
		func(o *session.Outbound, v string) error { o.HTTPContentType = v; return nil }},
	{rrFieldHTTPContentEncoding, "The request's HTTP content encoding.",
		func(o *session.Outbound, v string) error { o.HTTPContentEncoding = v; return nil }},
}

func rrFieldRule(name string) (rrAttrRule, bool) {
	for _, r := range rrAttrRules {
		if r.name == name {
			return r, true
		}
	}
	return rrAttrRule{}, false
}

func rrAttributeFields() []*service.ConfigField {
	fs := make([]*service.ConfigField, len(rrAttrRules))
	for i, r := range rrAttrRules {
		fs[i] = service.NewInterpolatedStringField(r.name).
			Description(r.doc + " Interpolated per message; empty leaves it unset.").
			Default("").Advanced().LintRule(rrLint(r.name))
	}
	return fs
}

// rrRules are the processor's interpolated fields for interp.Plan: the
// topic, checked, then the attribute fields.
func rrRules() []interp.Rule[session.Outbound] {
	rules := []interp.Rule[session.Outbound]{{Name: rrFieldTopic, Required: true, Apply: func(o *session.Outbound, v string) error {
		o.Destination.Name = v
		return session.ValidateTopic(v)
	}}}
	for _, r := range rrAttrRules {
		rules = append(rules, interp.Rule[session.Outbound]{Name: r.name, Apply: r.apply})
	}
	return rules
}

// rrLintStatic checks a field's static value as the constructor does: the
// topic also when it is empty.
func rrLintStatic(field, raw string) error {
	if field == rrFieldTopic {
		if v, ok := interp.Static(raw); ok {
			return rrCheckTopic(v)
		}
		return nil
	}
	r, _ := rrFieldRule(field)
	return interp.Check(interp.Rule[session.Outbound]{Name: r.name, Apply: r.apply}, raw)
}

// The lint rules of the interpolated fields call rrLintStatic.
var _ = lintmethod.RegisterValue("solace_request_reply_lint",
	"Internal to the solace_request_reply processor's lint rules: the error of a static value of the named field, or null.",
	func(field string) bool { _, ok := rrFieldRule(field); return ok || field == rrFieldTopic },
	rrLintStatic)

func rrLint(field string) string { return lintmethod.ValueRule("solace_request_reply_lint", field) }
