// Package freelist keeps released values for reuse by concurrent callers.
//
// Unlike a sync.Pool it is not emptied by garbage collections. A plugin that
// keeps working memory per call, with max_in_flight calls at once, would lose
// part of a sync.Pool to every collection and allocate it again. A List
// holds at most as many values as were ever in use at once, which such
// callers bound by configuration.
package freelist

import "sync"

// List is a free list of *T; the zero value is empty and ready.
type List[T any] struct {
	mu    sync.Mutex
	items []*T
}

// Get returns a released value, or a new zero one when none is free.
func (l *List[T]) Get() *T {
	l.mu.Lock()
	n := len(l.items)
	if n == 0 {
		l.mu.Unlock()
		return new(T)
	}
	x := l.items[n-1]
	l.items[n-1] = nil
	l.items = l.items[:n-1]
	l.mu.Unlock()
	return x
}

// Put releases x for a later Get; the caller must not use it afterwards.
func (l *List[T]) Put(x *T) {
	l.mu.Lock()
	l.items = append(l.items, x)
	l.mu.Unlock()
}
