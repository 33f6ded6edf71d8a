package jms

import (
	"errors"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/bloblang"
	"github.com/stretchr/testify/require"
)

// The method behind the lint rules of the jms components, registered as
// they register theirs.
var testLintRule = RegisterLint("jms_test_lint", func(conf map[string]any) error {
	if LintSet(conf, "queue") {
		return nil
	}
	return errors.New("no queue")
})

// TestRegisterLint checks the rule reports one message, the component's own
// problem first, with the Bloblang rule's reading of unset (missing, null or
// "") and of values of other types.
func TestRegisterLint(t *testing.T) {
	exe, err := bloblang.Parse(testLintRule)
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		conf any
		want []any
	}{
		{"fine", map[string]any{"queue": "q"}, []any{}},
		{"own problem first", map[string]any{"password": "p"}, []any{"no queue"}},
		{"empty string is unset", map[string]any{"queue": ""}, []any{"no queue"}},
		{"null is unset", map[string]any{"queue": nil}, []any{"no queue"}},
		{"a number is set", map[string]any{"queue": 5}, []any{}},
		{"not an object", "queue", []any{"no queue"}},
		{"prefix without a prefix style", map[string]any{"queue": "q", "queue_prefix": "x://"}, []any{"fields queue_prefix and topic_prefix only apply with address_style: custom or artemis; set address_style: custom or remove the prefixes"}},
		{"prefix with custom", map[string]any{"queue": "q", "topic_prefix": "x://", "address_style": "custom"}, []any{}},
		{"prefix with a style that is not a string", map[string]any{"queue": "q", "topic_prefix": "x://", "address_style": 5}, []any{"fields queue_prefix and topic_prefix only apply with address_style: custom or artemis; set address_style: custom or remove the prefixes"}},
		{"first contradiction only", map[string]any{"queue": "q", "password": "p", "password_file": "/f"}, []any{"fields password and password_file are both set: keep one (remove password to read it from the file, which keeps it out of the streams API)"}},
		{"password without username", map[string]any{"queue": "q", "password": "p", "username": ""}, []any{"field password is set without username: set username too, or remove password to use SASL ANONYMOUS"}},
		{"password_file without username", map[string]any{"queue": "q", "password_file": "/f"}, []any{"field password_file is set without username: set username too, or remove password_file to use SASL ANONYMOUS"}},
		{"password_file with username", map[string]any{"queue": "q", "password_file": "/f", "username": "u"}, []any{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := exe.Query(tc.conf)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}
