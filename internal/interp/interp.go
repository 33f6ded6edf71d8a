// Package interp is the one field plan of the outputs' interpolated string
// fields. A Plan reads the fields once, in the constructor: a static value
// (the common case) is applied there, once, to the output's message
// template, and only the dynamic ones are evaluated per batch, with one
// executor per field and batch rather than the copy of the batch that each
// TryInterpolatedString call makes. Each field's Rule maps its value onto
// the output's message, so the constructor, the per-message path and lint
// (Check) apply one rule in the same words.
package interp

import (
	"fmt"
	"strings"

	"github.com/redpanda-data/benthos/v4/public/bloblang"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// Rule is one interpolated field of an output whose messages are of type T:
// its name and how its value applies to a message. Apply returns the
// problem with the value, without the field's name (the plan adds it).
//
// A Required field (a destination) must not evaluate empty for a message:
// an empty value, or a lone interpolation whose query gives null (a missing
// metadata key, which Benthos renders "null"), fails that message with an
// error naming the field, rather than reaching Apply.
type Rule[T any] struct {
	Name     string
	Apply    func(m *T, v string) error
	Required bool
}

// apply applies v, naming the field in an error.
func (r *Rule[T]) apply(m *T, v string) error {
	if err := r.Apply(m, v); err != nil {
		return fmt.Errorf("field %s: %w", r.Name, err)
	}
	return nil
}

// Plan is the interpolated fields of one output: the dynamic ones, in rule
// order, the static ones having been applied to the template.
type Plan[T any] struct {
	dyn []dynField[T]
}

type dynField[T any] struct {
	rule *Rule[T]
	is   *service.InterpolatedString
	// whole, for a Required field that is one interpolation and nothing
	// else, says whether its query gives null, to tell null from the text
	// "null"; nil otherwise.
	whole *bloblang.Executor
}

// wholeQuery returns a mapping of whether the query of raw gives null, when
// raw is one interpolation and nothing else ("${! meta(\"t\") }"), or nil.
func wholeQuery(raw string) *bloblang.Executor {
	if !strings.HasPrefix(raw, "${!") || !strings.HasSuffix(raw, "}") || strings.Count(raw, "${") != 1 {
		return nil
	}
	exe, err := bloblang.Parse("root = (" + raw[len("${!"):len(raw)-1] + ") == null")
	if err != nil {
		return nil
	}
	return exe
}

// NewPlan reads the fields of rules from conf, in order. A field that is
// absent, or statically empty, is left out; a static value is applied to
// tmpl now (an error names the field); a dynamic one is planned for Apply.
func NewPlan[T any](conf *service.ParsedConfig, tmpl *T, rules []Rule[T]) (*Plan[T], error) {
	p := &Plan[T]{}
	for i := range rules {
		r := &rules[i]
		if !conf.Contains(r.Name) {
			continue
		}
		is, err := conf.FieldInterpolatedString(r.Name)
		if err != nil {
			return nil, err
		}
		v, static := is.Static()
		switch {
		case !static:
			f := dynField[T]{rule: r, is: is}
			if r.Required {
				raw, err := conf.FieldString(r.Name)
				if err != nil {
					return nil, err
				}
				f.whole = wholeQuery(raw)
			}
			p.dyn = append(p.dyn, f)
		case v != "":
			if err := r.apply(tmpl, v); err != nil {
				return nil, err
			}
		}
	}
	return p, nil
}

// Dynamic reports whether the field name varies per message.
func (p *Plan[T]) Dynamic(name string) bool {
	for _, f := range p.dyn {
		if f.rule.Name == name {
			return true
		}
	}
	return false
}

// Eval evaluates a plan's dynamic fields over one batch.
type Eval[T any] struct {
	p     *Plan[T]
	b     service.MessageBatch
	execs []*service.MessageBatchInterpolationExecutor
}

// Batch prepares to evaluate the dynamic fields over b: one executor per
// field (none when every field is static).
func (p *Plan[T]) Batch(b service.MessageBatch) Eval[T] {
	e := Eval[T]{p: p, b: b}
	if len(p.dyn) > 0 {
		e.execs = make([]*service.MessageBatchInterpolationExecutor, len(p.dyn))
		for j, f := range p.dyn {
			e.execs[j] = b.InterpolationExecutor(f.is)
		}
	}
	return e
}

// Apply applies the dynamic fields' values for message i of the batch to m,
// which starts as a copy of the template; an error names the field.
func (e *Eval[T]) Apply(m *T, i int) error {
	for j, f := range e.p.dyn {
		v, err := e.execs[j].TryString(i)
		if err != nil {
			return fmt.Errorf("field %s: %w", f.rule.Name, err)
		}
		if f.rule.Required && (v == "" || v == "null" && f.isNull(e.b[i])) {
			return fmt.Errorf("field %s: evaluated empty for this message (an empty string or null, such as missing metadata); "+
				"give every message a value, for example with .or(\"fallback\")", f.rule.Name)
		}
		if err := f.rule.apply(m, v); err != nil {
			return err
		}
	}
	return nil
}

// isNull reports whether the field's lone query gives null for msg.
func (f *dynField[T]) isNull(msg *service.Message) bool {
	if f.whole == nil {
		return false
	}
	// A query (not BloblangQueryValue) sees the message's metadata.
	res, err := msg.BloblangQuery(f.whole)
	if err != nil || res == nil {
		return false
	}
	b, err := res.AsBytes()
	return err == nil && string(b) == "true"
}

// Check checks a raw config value of rule's field as the constructor
// would, applying it to a zero T: nil for a valid, empty or dynamic value
// (a dynamic one is checked per message) and for one that does not parse
// (the interpolation linter reports that). Lint rules call it, so that lint
// and start-up reject the same values in the same words.
func Check[T any](rule Rule[T], raw string) error {
	v, ok := Static(raw)
	if !ok || v == "" {
		return nil
	}
	var m T
	return rule.apply(&m, v)
}

// Static returns a raw config value as it reads when it has no
// interpolations, and false when it has some or does not parse.
func Static(raw string) (string, bool) {
	is, err := service.NewInterpolatedString(raw)
	if err != nil {
		return "", false
	}
	return is.Static()
}
