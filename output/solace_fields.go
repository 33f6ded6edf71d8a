package output

// This file is the solace output's interpolated fields: their rules, the
// plan the constructor makes of them (interp.Plan), their lint and the
// per-message mapping onto session.Outbound.

import (
	"fmt"
	"strings"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connect-solace/connect-solace/internal/interp"
	"github.com/connect-solace/connect-solace/internal/lintmethod"
	"github.com/connect-solace/connect-solace/internal/session"
	"github.com/connect-solace/connect-solace/internal/solacecfg"
)

// soRules is the one place where the output's interpolated fields are
// checked and mapped onto a message, in the order they are applied: the name
// before the destination type, so that the type decides how the name is
// validated, then the message attributes (solacecfg.Attrs). The constructor
// applies a static value once to the message template (a bad one fails
// start-up, and lint through the solace_output_lint method), and a dynamic
// value is applied per message (a bad one fails that message); see
// interp.Plan. An empty value leaves the attribute unset.
var soRules = append([]interp.Rule[session.Outbound]{
	{Name: soFieldTopic, Required: true, Apply: func(o *session.Outbound, v string) error { o.Destination.Name = v; return nil }},
	{Name: soFieldQueue, Required: true, Apply: func(o *session.Outbound, v string) error { o.Destination.Name = v; return nil }},
	{Name: soFieldDestinationType, Apply: func(o *session.Outbound, v string) error {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "":
		case soDestTopic:
			o.Destination.Queue = false
		case soDestQueue:
			o.Destination.Queue = true
		default:
			return fmt.Errorf("%q is neither topic nor queue", v)
		}
		return nil
	}},
}, solacecfg.AttrRules(solacecfg.Attrs)...)

// soAttrFields are the spec fields of the message attributes.
func soAttrFields() []*service.ConfigField {
	fs := make([]*service.ConfigField, len(solacecfg.Attrs))
	for i, a := range solacecfg.Attrs {
		fs[i] = a.Field(soLint(a.Rule.Name))
		if a.Example != "" {
			fs[i] = fs[i].Example(a.Example)
		}
		if a.Advanced {
			fs[i] = fs[i].Advanced()
		}
	}
	return fs
}

// soRule returns the rule of field, or nil.
func soRule(field string) *interp.Rule[session.Outbound] {
	for i := range soRules {
		if soRules[i].Name == field {
			return &soRules[i]
		}
	}
	return nil
}

// soApply applies the value of field to o, with an error naming the field.
func soApply(o *session.Outbound, field, v string) error {
	if err := soRule(field).Apply(o, v); err != nil {
		return fmt.Errorf("field %s: %w", field, err)
	}
	return nil
}

// soCheckDestination validates the resolved destination of o.
func soCheckDestination(o *session.Outbound) error {
	if err := o.Destination.Validate(); err != nil {
		field := soFieldTopic
		if o.Destination.Queue {
			field = soFieldQueue
		}
		return fmt.Errorf("field %s: %w", field, err)
	}
	return nil
}

// soLintStatic checks one field's raw config value as the constructor would,
// when it is static; dynamic values are checked per message. It backs the
// spec's lint rules, so that lint and start-up reject the same values.
func soLintStatic(field, raw string) error { return interp.Check(*soRule(field), raw) }

// soLintDestination checks a static destination as the constructor would:
// the name of topic or queue, as the kind destination_type makes it.
func soLintDestination(topic, queue, destType string) error {
	var o session.Outbound
	for _, f := range []struct{ name, raw string }{{soFieldTopic, topic}, {soFieldQueue, queue}, {soFieldDestinationType, destType}} {
		if f.raw == "" {
			continue
		}
		v, ok := interp.Static(f.raw)
		if !ok {
			return nil
		}
		if f.name == soFieldQueue {
			o.Destination.Queue = true
		}
		if err := soApply(&o, f.name, v); err != nil {
			return err
		}
	}
	if topic == "" && queue == "" {
		return nil // the topic-or-queue rule reports it
	}
	return soCheckDestination(&o)
}

// The lint rules of the interpolated fields call back into soLintStatic.
var _ = lintmethod.RegisterValue("solace_output_lint",
	"Internal to the solace output's lint rules: the error of a static value of the named field, or null (also for a value that is not a string).",
	func(field string) bool { return soRule(field) != nil }, soLintStatic)

// soLint is the lint rule of field: a bare method call, the cheapest mapping
// to parse, returning null for a value that is not a string.
func soLint(field string) string { return lintmethod.ValueRule("solace_output_lint", field) }

// planFields plans the interpolated fields: the static ones resolved into
// the template, a static destination checked once.
func (w *solaceWriter) planFields(conf *service.ParsedConfig) error {
	queue, err := conf.FieldString(soFieldQueue)
	if err != nil {
		return err
	}
	w.tmpl.Destination.Queue = queue != ""
	if w.fields, err = interp.NewPlan(conf, &w.tmpl, soRules); err != nil {
		return err
	}
	if !w.fields.Dynamic(soFieldTopic) && !w.fields.Dynamic(soFieldQueue) && !w.fields.Dynamic(soFieldDestinationType) {
		if err := soCheckDestination(&w.tmpl); err != nil {
			return err
		}
		w.destChecked = true
	}
	return nil
}

// toOutbound fills o with message i of the batch.
func (w *solaceWriter) toOutbound(batch service.MessageBatch, ev *interp.Eval[session.Outbound], i int, o *session.Outbound) error {
	payload, err := batch[i].AsBytes()
	if err != nil {
		return err
	}
	*o = w.tmpl
	o.Payload = payload
	o.AckImmediately = w.ackNow
	if o.PayloadType = w.payloadType; o.PayloadType >= session.PayloadMap {
		if err := structuredPayload(batch[i], o); err != nil {
			return err
		}
	}
	if err := ev.Apply(o, i); err != nil {
		return err
	}
	if !w.destChecked {
		if err := soCheckDestination(o); err != nil {
			return err
		}
	}
	o.UserProperties = w.props.Of(batch[i]) // session.Outbound converts the values
	return nil
}
