package benchbroker

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestPairedRatios checks that the ratios pair plugin round i with raw round
// i and take the median, so that one disturbed round does not decide them.
func TestPairedRatios(t *testing.T) {
	meter := func(rs ...round) *Meter { return &Meter{rounds: rs} }
	r := func(n int, wall, cpu time.Duration) round { return round{n: n, wall: wall, cpu: cpu} }
	raw := meter(r(100, time.Second, time.Second), r(100, time.Second, time.Second), r(100, time.Second, 4*time.Second))
	tests := []struct {
		name             string
		plugin, raw      *Meter
		throughput, cpus float64
	}{
		{"median of three pairs", meter(r(100, 2*time.Second, 2*time.Second), r(200, time.Second, time.Second), r(100, time.Second, 4*time.Second)), raw, 1, 1},
		{"pairs both have", meter(r(100, 2*time.Second, 3*time.Second)), raw, 0.5, 3},
		{"even count: mean of the middle two", meter(r(100, 2*time.Second, 2*time.Second), r(100, time.Second, 4*time.Second)), raw, 0.75, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.InDelta(t, tt.throughput, ThroughputRatio(tt.plugin, tt.raw), 1e-9)
			require.InDelta(t, tt.cpus, CPURatio(tt.plugin, tt.raw), 1e-9)
		})
	}
	require.True(t, math.IsNaN(CPURatio(meter(), raw)), "no pairs: no ratio")
}
