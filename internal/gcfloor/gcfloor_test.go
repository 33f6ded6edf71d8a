package gcfloor

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPercent(t *testing.T) {
	for _, tc := range []struct {
		name        string
		base, floor uint64
		want        int
	}{
		{"small heap grows by the floor", 4 << 20, 32 << 20, 800},
		{"rounded up", 3 << 20, 32 << 20, 1067},
		{"live size above the floor: the default", 64 << 20, 32 << 20, 100},
		{"live size equal to the floor", 32 << 20, 32 << 20, 100},
		{"zero base does not divide by zero", 0, 32 << 20, 1 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, percent(tc.base, tc.floor))
		})
	}
}

func TestEnabled(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want bool
	}{
		{"nothing set", nil, true},
		{"GOGC set", map[string]string{"GOGC": "100"}, false},
		{"GOGC off", map[string]string{"GOGC": "off"}, false},
		{"GOMEMLIMIT set", map[string]string{"GOMEMLIMIT": "512MiB"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, enabled(func(k string) string { return tc.env[k] }))
		})
	}
}

func TestCapToCgroup(t *testing.T) {
	require.Equal(t, uint64(32<<20), capToCgroup(32<<20, 0))
	require.Equal(t, uint64(32<<20), capToCgroup(32<<20, 1<<30))
	require.Equal(t, uint64(16<<20), capToCgroup(32<<20, 128<<20))
}

// TestTunerFollowsCollections checks the tuner re-arms itself: after each
// collection it sets GOGC from the live heap, which runtime/metrics then
// reports.
func TestTunerFollowsCollections(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	adjusted := make(chan int, 16)
	tu := &tuner{floor: 64 << 20, current: 100, onAdjust: func(p int) {
		select {
		case adjusted <- p:
		default:
		}
	}}
	tu.arm()
	deadline := time.After(10 * time.Second)
	for n := 0; n < 2; {
		runtime.GC() // the sentinel is garbage now; its cleanup follows
		select {
		case p := <-adjusted:
			require.Greater(t, p, 100, "a test binary's live heap is far below 64 MiB")
			n++
		case <-deadline:
			t.Fatal("no adjustment after a collection")
		case <-time.After(100 * time.Millisecond):
			// The cleanup may need the next cycle: collect again.
		}
	}
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	require.Equal(t, uint64(tu.current), s[0].Value.Uint64())
}
