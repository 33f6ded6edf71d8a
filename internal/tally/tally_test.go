package tally

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type fakeCounter struct {
	total, calls atomic.Int64
	got          chan int64
}

func (f *fakeCounter) Incr(n int64, _ ...string) {
	f.total.Add(n)
	f.calls.Add(1)
	if f.got != nil {
		f.got <- n
	}
}

// TestTallyBatches counts from many goroutines: every count arrives, in far
// fewer increments than counts.
func TestTallyBatches(t *testing.T) {
	f := &fakeCounter{}
	tl := New(f)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				tl.Add(1)
			}
		})
	}
	wg.Wait()
	tl.Flush()
	assert.Equal(t, int64(8000), f.total.Load())
	assert.Less(t, f.calls.Load(), int64(100))
}

// TestTallyHandsOverAlone checks a count with nothing after it still
// reaches the counter, within about Interval, without a Flush.
func TestTallyHandsOverAlone(t *testing.T) {
	f := &fakeCounter{got: make(chan int64, 1)}
	tl := New(f)
	start := time.Now()
	tl.Add(3)
	select {
	case n := <-f.got:
		assert.Equal(t, int64(3), n)
		assert.GreaterOrEqual(t, time.Since(start), Interval)
	case <-time.After(10 * time.Second):
		require.Fail(t, "the count never reached the counter")
	}
	tl.Flush()
	assert.Equal(t, int64(1), f.calls.Load(), "nothing left to hand over")
}

type fakeTimer struct{ got []int64 }

func (f *fakeTimer) Timing(d int64, _ ...string) { f.got = append(f.got, d) }

// TestSampledPassesTheFirstPerInterval checks, on a clock the test moves,
// that a burst passes one timing on, the first, and that the first timing
// SampleEvery after it passes again.
func TestSampledPassesTheFirstPerInterval(t *testing.T) {
	f := &fakeTimer{}
	var clock time.Duration
	s := &Sampled{t: f, now: func() time.Duration { return clock }}
	for i := range 100 {
		s.Timing(int64(i + 1))
	}
	require.Equal(t, []int64{1}, f.got)
	clock = SampleEvery - 1
	s.Timing(-1)
	require.Equal(t, []int64{1}, f.got, "less than SampleEvery after the first")
	clock = SampleEvery
	s.Timing(7)
	s.Timing(8)
	require.Equal(t, []int64{1, 7}, f.got)
	clock = 10 * SampleEvery // a quiet spell: the next passes at once
	s.Timing(9)
	require.Equal(t, []int64{1, 7, 9}, f.got)
}

// TestSampledConcurrent passes timings from many goroutines: a burst yields
// a handful, never all of them.
func TestSampledConcurrent(t *testing.T) {
	var n atomic.Int64
	s := NewSampled(timerFunc(func(int64) { n.Add(1) }))
	start := time.Now()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				s.Timing(1)
			}
		})
	}
	wg.Wait()
	windows := int64(time.Since(start)/SampleEvery) + 1
	assert.GreaterOrEqual(t, n.Load(), int64(1))
	assert.LessOrEqual(t, n.Load(), windows)
}

type timerFunc func(int64)

func (f timerFunc) Timing(d int64, _ ...string) { f(d) }
