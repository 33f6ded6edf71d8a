package benchfloor

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/testkit/benchbroker"
)

func TestRound(t *testing.T) {
	for _, tc := range []struct {
		name  string
		shape Shape
		n     int
		want  int // messages a round counts
	}{
		{"input batch of one", Shape{Payload: make([]byte, 64), Meta: map[string]any{"a": "x", "b": int64(1)}, InputBatch: 1}, 50, 50},
		{"input batches of 32, the last short", Shape{Payload: make([]byte, 64), InputBatch: 32}, 100, 100},
		{"batched output, rounded up to whole batches", Shape{Payload: make([]byte, 64), OutputBatch: 50, OutputMaxInFlight: 64}, 120, 150},
		{"streaming output", Shape{Payload: make([]byte, 64), OutputMaxInFlight: 64}, 30, 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := New(t, tc.shape)
			var m benchbroker.Meter
			// Two rounds: each builds its own stream.
			f.Round(&m, tc.n)
			f.Round(&m, tc.n)
			require.Equal(t, 2*tc.want, m.Msgs)
			require.Positive(t, m.CPU, "a round uses CPU")
			require.Positive(t, m.AllocsPerMsg(), "Benthos allocates per message")
		})
	}
}
