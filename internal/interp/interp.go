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

	"github.com/redpanda-data/benthos/v4/public/service"
)

// Rule is one interpolated field of an output whose messages are of type T:
// its name and how its value applies to a message. Apply returns the
// problem with the value, without the field's name (the plan adds it).
type Rule[T any] struct {
	Name  string
	Apply func(m *T, v string) error
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
			p.dyn = append(p.dyn, dynField[T]{rule: r, is: is})
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
	execs []*service.MessageBatchInterpolationExecutor
}

// Batch prepares to evaluate the dynamic fields over b: one executor per
// field (none when every field is static).
func (p *Plan[T]) Batch(b service.MessageBatch) Eval[T] {
	e := Eval[T]{p: p}
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
		if err := f.rule.apply(m, v); err != nil {
			return err
		}
	}
	return nil
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
