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
