package input

import (
	"math"
	"testing"
	"time"

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
