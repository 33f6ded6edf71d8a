package jms

import "github.com/redpanda-data/benthos/v4/public/bloblang"

// RegisterLint registers the Bloblang method name that a jms component's
// lint rule calls, and returns that rule. The method reports the first
// problem of the linted config, as one message in a list (or an empty
// list): the component's own (first, which may be nil, sees the config
// object) or else the first contradiction among the connection fields.
//
// The checks are Go rather than a Bloblang match because each lint rule is
// parsed when its spec is built, at every start-up: a match of six arms took
// some 4 ms to parse, a method call a twentieth of that. Call RegisterLint
// from a package variable's initialiser, which runs before init() builds the
// spec; lint mappings run in Benthos's pure environment, so the method is
// registered globally.
func RegisterLint(name string, first func(conf map[string]any) error) string {
	bloblang.MustRegisterMethodV2(name,
		bloblang.NewPluginSpec().Description("Internal to the jms components' lint rules: the first problem of the linted config, as a list of at most one message."),
		func(*bloblang.ParsedParams) (bloblang.Method, error) {
			return func(v any) (any, error) {
				conf, _ := v.(map[string]any) // not an object: nothing set
				if first != nil {
					if err := first(conf); err != nil {
						return []any{err.Error()}, nil
					}
				}
				if p := connectionLintProblem(conf); p != "" {
					return []any{p}, nil
				}
				return []any{}, nil
			}, nil
		})
	return "root = this." + name + "()"
}

// LintSet reports whether the linted config object sets field to something
// other than null or an empty string.
func LintSet(conf map[string]any, field string) bool {
	v := conf[field]
	return v != nil && v != ""
}

// connectionLintProblem is the first contradiction among the connection
// fields of conf, or "".
func connectionLintProblem(conf map[string]any) string {
	style := conf[FieldAddressStyle]
	switch {
	case (LintSet(conf, FieldQueuePrefix) || LintSet(conf, FieldTopicPrefix)) && style != StyleCustom && style != StyleArtemis:
		return "fields queue_prefix and topic_prefix only apply with address_style: custom or artemis; set address_style: custom or remove the prefixes"
	case LintSet(conf, FieldPassword) && LintSet(conf, FieldPasswordFile):
		return "fields password and password_file are both set: keep one (remove password to read it from the file, which keeps it out of the streams API)"
	case LintSet(conf, FieldPassword) && !LintSet(conf, FieldUsername):
		return "field password is set without username: set username too, or remove password to use SASL ANONYMOUS"
	case LintSet(conf, FieldPasswordFile) && !LintSet(conf, FieldUsername):
		return "field password_file is set without username: set username too, or remove password_file to use SASL ANONYMOUS"
	}
	return ""
}
