package input

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSameMetaValue(t *testing.T) {
	now := time.Now() // with a monotonic reading
	for _, tc := range []struct {
		name string
		a, b any
		want bool
	}{
		{"same string", "a", "a", true},
		{"other string", "a", "b", false},
		{"int64 vs int32", int64(1), int32(1), false},
		{"same uint16", uint16(7), uint16(7), true},
		{"zero and negative zero", 0.0, math.Copysign(0, -1), false},
		{"same time", now, now, true},
		{"time without its monotonic reading", now, now.Round(0), false},
		{"time in another location", now.Round(0), now.Round(0).UTC(), false},
		{"bytes are always set", []byte("a"), []byte("a"), false},
		{"nil", nil, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, sameMetaValue(tc.a, tc.b))
		})
	}
}

// TestMetaTemplatesRule checks the one rule by which both inputs replace
// their template: on the second of two successive misses with the same keys,
// and never for keys that cannot make one.
func TestMetaTemplatesRule(t *testing.T) {
	var c metaTemplates[string]
	builds := 0
	get := func(keys ...string) *metaTemplate[string] {
		return c.get(len(keys), func(i int) string { return keys[i] }, func() *metaTemplate[string] {
			builds++
			if len(keys) > 0 && keys[0] == "dup" {
				return nil
			}
			return &metaTemplate[string]{keys: slices.Clone(keys), vals: make([]any, len(keys)), msg: service.NewMessage(nil)}
		})
	}
	require.Nil(t, get("a", "b"), "a first miss builds key by key")
	a := get("a", "b")
	require.NotNil(t, a, "the second miss in a row makes the template")
	assert.Same(t, a, get("a", "b"))
	// One-off shapes between fitting messages keep the template.
	for _, k := range []string{"c", "d", "e"} {
		assert.Nil(t, get(k))
		assert.Same(t, a, get("a", "b"))
	}
	assert.Equal(t, 1, builds)
	// A shape that misses twice in succession takes over, even with
	// fitting messages between.
	assert.Same(t, a, get("a", "b"))
	c2 := get("e")
	require.NotNil(t, c2)
	assert.Equal(t, []string{"e"}, c2.keys)
	assert.Nil(t, get("a", "b"))
	a = get("a", "b")
	require.NotNil(t, a)
	assert.Nil(t, get("dup", "dup"))
	assert.Nil(t, get("dup", "dup"), "keys that cannot make a template")
	assert.Same(t, a, get("a", "b"))
	assert.Nil(t, get())
	assert.NotNil(t, get(), "an empty key list is a shape too")
}
