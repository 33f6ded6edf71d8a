// Package gcfloor gives the garbage collector a floor of heap growth between
// collections, for the connect-solace binary.
//
// A stream pipeline's live heap is small (a few MiB) while it allocates a
// copy of every message: Go's default (GOGC=100: the next collection once
// the heap has grown by its live size, at least 4 MiB) then collects every
// few thousand messages and spends a tenth of the process's CPU on it, most
// of it for a heap that hardly changes. After each collection the floor sets
// GOGC so that the heap may grow by at least Floor bytes before the next
// one, and by its live size, as with GOGC=100, once that is larger: the heap
// never exceeds what the default allows by more than Floor.
//
// It is a default of the binary only, not of the plugin packages, and the
// operator's settings win: with GOGC or GOMEMLIMIT in the environment it does
// nothing. Inside a cgroup (v2) with a memory limit the floor is at most an eighth
// of the limit.
package gcfloor

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
)

// DefaultFloor is the binary's floor: 64 MiB of allocation between
// collections, some ten thousand 1 KiB messages' worth of Benthos pipeline,
// so that a run of tens of thousands of messages pays for a collection's
// stop-the-world phases only a few times.
const DefaultFloor = 64 << 20

// minBase stands in for a live heap not measured yet (before the first
// collection): the runtime's own minimum heap of 4 MiB.
const minBase = 4 << 20

var startOnce sync.Once

// Start installs the floor for the process, unless GOGC or GOMEMLIMIT is
// set; it reports whether it did. Later calls do nothing.
func Start(floor uint64) (started bool) {
	startOnce.Do(func() {
		if !enabled(os.Getenv) {
			return
		}
		floor = capToCgroup(floor, readCgroupLimit())
		if floor == 0 {
			return
		}
		t := &tuner{floor: floor, current: 100}
		t.adjust()
		t.arm()
		started = true
	})
	return started
}

// enabled says whether the operator left the collector's settings to us.
func enabled(getenv func(string) string) bool {
	return getenv("GOGC") == "" && getenv("GOMEMLIMIT") == ""
}

// percent is the GOGC value for which a heap whose collector base (live
// heap, stacks and globals) is base may grow by at least floor bytes: never
// below 100, the default.
func percent(base, floor uint64) int {
	base = max(base, 1)
	p := (floor*100 + base - 1) / base
	return int(min(max(p, 100), 1<<20))
}

// tuner re-computes GOGC after every collection.
type tuner struct {
	floor    uint64
	current  int
	onAdjust func(percent int) // for tests
}

// sentinel is an object whose only job is to become garbage: its cleanup
// runs after the collection that found it unreachable. It holds a pointer so
// the runtime does not pack it with other small objects (a packed one is
// freed, and cleaned up, only with its neighbours).
type sentinel struct {
	p *int
	_ [8]byte
}

func (t *tuner) arm() {
	runtime.AddCleanup(&sentinel{}, func(t *tuner) {
		t.adjust()
		t.arm()
	}, t)
}

var samples = []metrics.Sample{
	{Name: "/gc/heap/live:bytes"},
	{Name: "/gc/scan/stack:bytes"},
	{Name: "/gc/scan/globals:bytes"},
}

// adjust sets GOGC for the live heap the last collection measured. It runs
// on the runtime's cleanup goroutine, one call at a time.
func (t *tuner) adjust() {
	metrics.Read(samples)
	var base uint64
	for _, s := range samples {
		if s.Value.Kind() == metrics.KindUint64 {
			base += s.Value.Uint64()
		}
	}
	p := percent(max(base, minBase), t.floor)
	// Small changes are not worth a new pacer goal.
	if d := p - t.current; d > t.current/8 || -d > t.current/8 {
		debug.SetGCPercent(p)
		t.current = p
	}
	if t.onAdjust != nil {
		t.onAdjust(t.current)
	}
}

// readCgroupLimit is the cgroup v2 memory limit of the process, 0 for none.
func readCgroupLimit() uint64 {
	b, err := os.ReadFile("/sys/fs/cgroup/memory.max")
	if err != nil {
		return 0
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0 // "max": no limit
	}
	return n
}

// capToCgroup keeps the floor within an eighth of a memory limit.
func capToCgroup(floor, limit uint64) uint64 {
	if limit > 0 {
		return min(floor, limit/8)
	}
	return floor
}
