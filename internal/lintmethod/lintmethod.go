// Package lintmethod lets a plugin's lint rule call the Go checks its
// constructor uses, so that each config rule lives in one place and lint and
// start-up refuse a config in the same words. It is the one way the plugins
// register lint methods. A lint rule is a Bloblang mapping; Register adds a
// method that such a mapping calls on the linted object, RegisterValue one
// that a field's own rule calls on the field's value.
//
// The checks are Go rather than Bloblang because each lint rule is parsed
// when its spec is built, at every start-up: a bare method call is the
// cheapest mapping to parse.
package lintmethod

import (
	"encoding/json"
	"fmt"

	"github.com/redpanda-data/benthos/v4/public/bloblang"
	"github.com/redpanda-data/benthos/v4/public/service"
)

// Register registers the Bloblang method name. On the linted object it
// parses the object with spec and returns the messages of the errors check
// reports, as a list (empty when there are none). An object that does not
// parse or read yields none: the spec's own field checks report it.
//
// Lint mappings run in Benthos's pure Bloblang environment, so the method is
// registered globally. Call Register from a package variable's initialiser
// (var _ = lintmethod.Register(…)): those run before any init() builds a
// spec, which parses its lint rule. spec is called at lint time, not at
// registration. The result is only there for that initialiser.
func Register(name, description string, spec func() *service.ConfigSpec, check func(*service.ParsedConfig) ([]error, error)) bool {
	bloblang.MustRegisterMethodV2(name,
		bloblang.NewPluginSpec().Description(description),
		func(*bloblang.ParsedParams) (bloblang.Method, error) {
			return func(v any) (any, error) { return messages(v, spec, check), nil }, nil
		})
	return true
}

// RegisterRead registers the Bloblang method name as Register does, for a
// check that reads the object as the constructor does (read) and lists the
// problems of what it read (problems).
func RegisterRead[T any](name, description string, spec func() *service.ConfigSpec, read func(*service.ParsedConfig) (T, error), problems func(T) []error) bool {
	return Register(name, description, spec, func(pc *service.ParsedConfig) ([]error, error) {
		v, err := read(pc)
		if err != nil {
			return nil, err
		}
		return problems(v), nil
	})
}

// Rule is the lint rule of a component whose checks all sit behind the
// method name registered with Register.
func Rule(name string) string { return "root = this." + name + "()" }

// RegisterValue registers the Bloblang method name, whose one parameter
// names a field that known accepts. On the field's value it returns the
// message of the error check reports for it, or null: also for a value that
// is not a string, which the field's type check reports. Register it as
// Register says; ValueRule gives a field's rule.
func RegisterValue(name, description string, known func(field string) bool, check func(field, value string) error) bool {
	bloblang.MustRegisterMethodV2(name,
		bloblang.NewPluginSpec().Description(description).Param(bloblang.NewStringParam("field")),
		func(args *bloblang.ParsedParams) (bloblang.Method, error) {
			field, err := args.GetString("field")
			if err != nil {
				return nil, err
			}
			if !known(field) {
				return nil, fmt.Errorf("unknown field %q", field)
			}
			return func(v any) (any, error) {
				raw, ok := v.(string)
				if !ok {
					return nil, nil
				}
				if err := check(field, raw); err != nil {
					return err.Error(), nil
				}
				return nil, nil
			}, nil
		})
	return true
}

// ValueRule is the lint rule of field, calling the method name registered
// with RegisterValue.
func ValueRule(name, field string) string { return fmt.Sprintf("this.%s(%q)", name, field) }

func messages(v any, spec func() *service.ConfigSpec, check func(*service.ParsedConfig) ([]error, error)) []any {
	raw, err := json.Marshal(v)
	if err != nil {
		return []any{}
	}
	pc, err := spec().ParseYAML(string(raw), nil)
	if err != nil {
		return []any{}
	}
	problems, err := check(pc)
	if err != nil {
		return []any{}
	}
	out := make([]any, len(problems))
	for i, p := range problems {
		out[i] = p.Error()
	}
	return out
}
