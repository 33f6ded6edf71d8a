// Package interp evaluates a component's interpolated string fields over a
// batch cheaply: a static field (the common case) is read once at start-up,
// and a dynamic one gets one executor per batch, rather than the copy of the
// batch that each TryInterpolatedString call makes.
package interp

import (
	"fmt"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// Field is one interpolated string field of a parsed config.
type Field struct {
	Name   string
	is     *service.InterpolatedString
	static *string
}

// Required reads field name.
func Required(conf *service.ParsedConfig, name string) (*Field, error) {
	is, err := conf.FieldInterpolatedString(name)
	if err != nil {
		return nil, err
	}
	f := &Field{Name: name, is: is}
	if v, ok := is.Static(); ok {
		f.static = &v
	}
	return f, nil
}

// Optional reads field name, returning nil when it is absent or statically
// empty, so the hot path skips fields the user did not set.
func Optional(conf *service.ParsedConfig, name string) (*Field, error) {
	if !conf.Contains(name) {
		return nil, nil
	}
	f, err := Required(conf, name)
	if err != nil || (f.static != nil && *f.static == "") {
		return nil, err
	}
	return f, nil
}

// Static returns the field's value when it has no interpolations.
func (f *Field) Static() (string, bool) {
	if f.static == nil {
		return "", false
	}
	return *f.static, true
}

// Batch evaluates fields over one message batch.
type Batch struct {
	batch service.MessageBatch
	execs map[*service.InterpolatedString]*service.MessageBatchInterpolationExecutor
}

// NewBatch prepares to evaluate fields over b.
func NewBatch(b service.MessageBatch) *Batch { return &Batch{batch: b} }

// String evaluates f for message i, naming the field in an error.
func (b *Batch) String(f *Field, i int) (string, error) {
	if f.static != nil {
		return *f.static, nil
	}
	x := b.execs[f.is]
	if x == nil {
		if b.execs == nil {
			b.execs = map[*service.InterpolatedString]*service.MessageBatchInterpolationExecutor{}
		}
		x = b.batch.InterpolationExecutor(f.is)
		b.execs[f.is] = x
	}
	s, err := x.TryString(i)
	if err != nil {
		return "", fmt.Errorf("interpolating %s: %w", f.Name, err)
	}
	return s, nil
}
