package session

import "time"

// Delay returns the wait before connect retry number n (0-based) under b.
func (b Backoff) Delay(n int) time.Duration {
	e := b.exponential()
	d := e.NextBackOff()
	for range n {
		d = e.NextBackOff()
	}
	return d
}

// StaleDropped counts the messages the receiver dropped as stale copies.
func (r *Receiver) StaleDropped() int64 { return r.staleDropped.Load() }
