package input

import (
	"container/list"
	"sync"
	"time"
)

// dedupWindow remembers keys of messages the pipeline has processed, bounded
// by count and/or age, so that redeliveries and republished copies can be
// recognised. It is safe for concurrent use. It belongs to the input, not to
// internal/session: de-duplication is a pipeline concern, not Solace's.
type dedupWindow struct {
	size int
	age  time.Duration

	mu    sync.Mutex
	order *list.List // of *dedupEntry, oldest first
	index map[string]*list.Element
}

type dedupEntry struct {
	key  string
	seen time.Time
}

// newDedupWindow returns a window holding at most size keys (0 = no count
// bound) for at most age (0 = no age bound). At least one bound should be
// set; the constructor enforces that.
func newDedupWindow(size int, age time.Duration) *dedupWindow {
	return &dedupWindow{size: size, age: age, order: list.New(), index: map[string]*list.Element{}}
}

// Seen reports whether key was added within the window as of now.
func (w *dedupWindow) Seen(key string, now time.Time) bool {
	if key == "" {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.expire(now)
	_, ok := w.index[key]
	return ok
}

// Add records key as processed at now; re-adding a key refreshes it.
func (w *dedupWindow) Add(key string, now time.Time) {
	if key == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if el, ok := w.index[key]; ok {
		el.Value.(*dedupEntry).seen = now
		w.order.MoveToBack(el)
	} else {
		w.index[key] = w.order.PushBack(&dedupEntry{key: key, seen: now})
	}
	w.expire(now)
}

// Len is the number of keys currently held.
func (w *dedupWindow) Len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.order.Len()
}

func (w *dedupWindow) expire(now time.Time) {
	for w.order.Len() > 0 {
		front := w.order.Front()
		e := front.Value.(*dedupEntry)
		tooMany := w.size > 0 && w.order.Len() > w.size
		tooOld := w.age > 0 && now.Sub(e.seen) >= w.age
		if !tooMany && !tooOld {
			return
		}
		w.order.Remove(front)
		delete(w.index, e.key)
	}
}
