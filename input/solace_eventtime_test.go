package input

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestAsTime pins what a timestamp mapping may return, as the hand-written
// conversion it replaced accepted it.
func TestAsTime(t *testing.T) {
	at := time.Date(2025, 1, 31, 12, 0, 0, 500_000_000, time.UTC)
	tests := []struct {
		name string
		in   any
		want time.Time
		ok   bool
	}{
		{name: "timestamp", in: at, want: at, ok: true},
		{name: "rfc 3339", in: "2025-01-31T12:00:00.5Z", want: at, ok: true},
		{name: "int seconds", in: 1_738_324_800, want: time.Unix(1_738_324_800, 0), ok: true},
		{name: "int64 seconds", in: int64(1_738_324_800), want: time.Unix(1_738_324_800, 0), ok: true},
		{name: "uint64 seconds", in: uint64(1_738_324_800), want: time.Unix(1_738_324_800, 0), ok: true},
		{name: "float seconds", in: 1_738_324_800.5, want: time.Unix(1_738_324_800, 500_000_000), ok: true},
		{name: "json integer", in: json.Number("1738324800"), want: time.Unix(1_738_324_800, 0), ok: true},
		{name: "json float", in: json.Number("1738324800.5"), want: time.Unix(1_738_324_800, 500_000_000), ok: true},
		{name: "not a time", in: "yesterday"},
		{name: "bool", in: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := asTime(tc.in)
			require.Equal(t, tc.ok, ok)
			if tc.ok {
				require.True(t, tc.want.Equal(got), "got %v, want %v", got, tc.want)
			}
		})
	}
}
