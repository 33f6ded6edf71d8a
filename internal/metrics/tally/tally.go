// Package tally batches increments of a Benthos counter. A public
// service.MetricCounter resolves its labels on every Incr (with the json_api
// exporter it builds the metric's path and looks it up under a lock), which
// for an output sending batches of one message is a measurable share of each
// message's CPU. A Tally adds the counts up and hands them to the counter a
// short while later, once for all of them.
package tally

import (
	"sync/atomic"
	"time"
)

// Interval is how long a count may wait before it reaches the counter.
const Interval = 100 * time.Millisecond

// Counter is what a Tally feeds: a *service.MetricCounter.
type Counter interface {
	Incr(count int64, labelValues ...string)
}

// Tally adds up increments of an unlabelled counter.
type Tally struct {
	c       Counter
	pending atomic.Int64
}

// New returns a Tally feeding c.
func New(c Counter) *Tally { return &Tally{c: c} }

// Add counts n (n > 0). The first count after a hand-over schedules the next
// one, Interval later, so a count never waits longer, even when no other
// follows: there is no goroutine to stop.
func (t *Tally) Add(n int64) {
	if t.pending.Add(n) == n {
		time.AfterFunc(Interval, t.Flush)
	}
}

// Flush hands what was counted to the counter now (on Close, say).
func (t *Tally) Flush() {
	if n := t.pending.Swap(0); n > 0 {
		t.c.Incr(n)
	}
}
