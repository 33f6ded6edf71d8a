package processor

import (
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connect-solace/connect-solace/internal/interp"
	"github.com/connect-solace/connect-solace/internal/lintmethod"
	"github.com/connect-solace/connect-solace/internal/session"
	"github.com/connect-solace/connect-solace/internal/solacecfg"
)

// rrAttrs are the request attributes the processor sets, with the solace
// output's fields. Correlation id and reply-to are the client's: it sets
// both on every request.
var rrAttrs = solacecfg.AttrsNamed(solacecfg.FieldAppMessageID, solacecfg.FieldAppMessageType,
	solacecfg.FieldPriority, solacecfg.FieldSenderID, solacecfg.FieldClassOfService,
	solacecfg.FieldHTTPContentType, solacecfg.FieldHTTPContentEncoding)

// rrAttrRule returns the rule of the attribute field name.
func rrAttrRule(name string) (interp.Rule[session.Outbound], bool) {
	for _, a := range rrAttrs {
		if a.Rule.Name == name {
			return a.Rule, true
		}
	}
	return interp.Rule[session.Outbound]{}, false
}

func rrAttributeFields() []*service.ConfigField {
	fs := make([]*service.ConfigField, len(rrAttrs))
	for i, a := range rrAttrs {
		fs[i] = a.Field(rrLint(a.Rule.Name)).Advanced()
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
	return append(rules, solacecfg.AttrRules(rrAttrs)...)
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
	r, _ := rrAttrRule(field)
	return interp.Check(r, raw)
}

// The lint rules of the interpolated fields call rrLintStatic.
var _ = lintmethod.RegisterValue("solace_request_reply_lint",
	"Internal to the solace_request_reply processor's lint rules: the error of a static value of the named field, or null.",
	func(field string) bool { _, ok := rrAttrRule(field); return ok || field == rrFieldTopic },
	rrLintStatic)

func rrLint(field string) string { return lintmethod.ValueRule("solace_request_reply_lint", field) }
