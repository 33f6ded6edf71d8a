// Package lintmethod lets a plugin's lint rule call the Go checks its
// constructor uses, so that each config rule lives in one place and lint and
// start-up refuse a config in the same words. A lint rule is a Bloblang
// mapping; Register adds a method that such a mapping calls on the linted
// object.
package lintmethod

import (
	"encoding/json"

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
