package lintmethod

import (
	"errors"
	"fmt"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/bloblang"
	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var testSpec = func() *service.ConfigSpec {
	return service.NewConfigSpec().Fields(service.NewIntField("n").Default(1), service.NewStringField("s").Default(""))
}

var _ = Register("lintmethod_test_lint", "test only", testSpec, func(pc *service.ParsedConfig) ([]error, error) {
	n, err := pc.FieldInt("n")
	if err != nil {
		return nil, err
	}
	var errs []error
	if n < 1 {
		errs = append(errs, fmt.Errorf("field n: must be at least 1, got %d", n))
	}
	if s, _ := pc.FieldString("s"); s == "bad" {
		errs = append(errs, errors.New("field s: bad"))
	}
	return errs, nil
})

// readN reads n as a constructor would; a negative n is unreadable.
func readN(pc *service.ParsedConfig) (int, error) {
	n, err := pc.FieldInt("n")
	if err == nil && n < 0 {
		err = errors.New("field n: unreadable")
	}
	return n, err
}

var _ = RegisterRead("lintmethod_test_read", "test only", testSpec, readN, func(n int) []error {
	if n > 5 {
		return []error{fmt.Errorf("field n: at most 5, got %d", n)}
	}
	return nil
})

func TestRegisteredMethodReportsTheCheck(t *testing.T) {
	for _, tc := range []struct {
		method string
		in     any
		want   []any
	}{
		{"lintmethod_test_lint", map[string]any{"n": 2}, []any{}},
		{"lintmethod_test_lint", map[string]any{"n": 0, "s": "bad"}, []any{"field n: must be at least 1, got 0", "field s: bad"}},
		{"lintmethod_test_lint", map[string]any{}, []any{}},            // defaults apply
		{"lintmethod_test_lint", map[string]any{"n": "many"}, []any{}}, // a type error is the spec's to report
		{"lintmethod_test_lint", "not an object", []any{}},
		// RegisterRead: the problems of what was read.
		{"lintmethod_test_read", map[string]any{"n": 2}, []any{}},
		{"lintmethod_test_read", map[string]any{"n": 6}, []any{"field n: at most 5, got 6"}},
		{"lintmethod_test_read", map[string]any{"n": -1}, []any{}}, // what does not read is the constructor's to report
	} {
		exec, err := bloblang.Parse("root = this." + tc.method + "()")
		require.NoError(t, err)
		got, err := exec.Query(tc.in)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got, "%s: %v", tc.method, tc.in)
	}
}

var _ = RegisterValue("lintmethod_test_value", "test only",
	func(field string) bool { return field == "n" },
	func(field, value string) error {
		if value == "bad" {
			return fmt.Errorf("field %s: bad", field)
		}
		return nil
	})

func TestRegisteredValueMethodReportsTheCheck(t *testing.T) {
	exec, err := bloblang.Parse("root = " + ValueRule("lintmethod_test_value", "n"))
	require.NoError(t, err)
	for _, tc := range []struct {
		in   any
		want any
	}{
		{"fine", nil},
		{"bad", "field n: bad"},
		{5, nil}, // not a string: the field's type check reports it
	} {
		got, err := exec.Query(tc.in)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got, "%v", tc.in)
	}
	_, err = bloblang.Parse("root = " + ValueRule("lintmethod_test_value", "other"))
	require.ErrorContains(t, err, `unknown field "other"`)
}
