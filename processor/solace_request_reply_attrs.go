package processor

import (
	"fmt"

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

// rrAttr is one attribute field the config sets.
type rrAttr struct {
	field *interp.Field
	apply func(o *session.Outbound, v string) error
}

// rrAttrsFromParsed reads the attribute fields that are set; a bad static
// value fails start-up as lint reports it.
func rrAttrsFromParsed(conf *service.ParsedConfig) ([]rrAttr, error) {
	var attrs []rrAttr
	for _, r := range rrAttrRules {
		f, err := interp.Optional(conf, r.name)
		if err != nil {
			return nil, err
		}
		if f == nil {
			continue
		}
		if v, ok := f.Static(); ok {
			if err := r.apply(&session.Outbound{}, v); err != nil {
				return nil, fmt.Errorf("field %s: %w", r.name, err)
			}
		}
		attrs = append(attrs, rrAttr{field: f, apply: r.apply})
	}
	return attrs, nil
}

// rrLintStatic checks a field's static value as the constructor does.
func rrLintStatic(field, raw string) error {
	is, err := service.NewInterpolatedString(raw)
	if err != nil {
		return nil // the interpolation linter reports it
	}
	v, ok := is.Static()
	if !ok {
		return nil
	}
	if field == rrFieldTopic {
		return rrCheckTopic(v)
	}
	r, _ := rrFieldRule(field)
	if err := r.apply(&session.Outbound{}, v); err != nil {
		return fmt.Errorf("field %s: %w", field, err)
	}
	return nil
}

// The lint rules of the interpolated fields call rrLintStatic through this
// method.
var _ = lintmethod.RegisterValue("solace_request_reply_lint",
	"Internal to the solace_request_reply processor's lint rules: the error of a static value of the named field, or null.",
	func(field string) bool { _, ok := rrFieldRule(field); return ok || field == rrFieldTopic },
	rrLintStatic)

func rrLint(field string) string { return lintmethod.ValueRule("solace_request_reply_lint", field) }
