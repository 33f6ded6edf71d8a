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

// SampleEvery is the least time between two timings a Sampled passes on.
const SampleEvery = 10 * time.Millisecond

// Timer is what a Sampled feeds: a *service.MetricTimer.
type Timer interface {
	Timing(delta int64, labelValues ...string)
}

// Sampled passes on at most one timing per SampleEvery, the first after the
// last one passed on, and drops the others: a timer's distribution is as
// well described by a hundred samples a second as by every batch, and below
// that rate every timing is passed on. (A timing cannot be added up like a
// count; each costs the exporter a label lookup and a histogram update under
// a lock.)
type Sampled struct {
	t    Timer
	now  func() time.Duration // monotonic, from the Sampled's creation
	next atomic.Int64
}

// NewSampled returns a Sampled feeding t.
func NewSampled(t Timer) *Sampled {
	epoch := time.Now()
	return &Sampled{t: t, now: func() time.Duration { return time.Since(epoch) }}
}

// Timing passes d on unless another timing was passed on less than
// SampleEvery ago.
func (s *Sampled) Timing(d int64) {
	now := int64(s.now())
	next := s.next.Load()
	if now < next || !s.next.CompareAndSwap(next, now+int64(SampleEvery)) {
		return
	}
	s.t.Timing(d)
}
