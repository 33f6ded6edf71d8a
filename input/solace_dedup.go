package input

import (
	"math"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// dedupWindow remembers keys of messages the pipeline has processed, bounded
// by count and/or age, so that redeliveries and republished copies can be
// recognised. It is safe for concurrent use. It belongs to the input, not to
// internal/session: de-duplication is a pipeline concern, not Solace's.
//
// It is golang-lru's simplelru (count bound, least recently added evicted
// first) holding each key's time, with the age bound applied from the
// oldest end on every call. Not golang-lru's expirable LRU: in v2 that one
// starts a sweeper goroutine that never ends and so pins the whole window,
// once per input built (every stream update in streams mode); and it reads
// the wall clock, where this window is told the time.
type dedupWindow struct {
	age time.Duration

	mu   sync.Mutex
	keys *simplelru.LRU[string, time.Time] // key -> when it was added
}

// newDedupWindow returns a window holding at most size keys (0 = no count
// bound) for at most age (0 = no age bound). At least one bound should be
// set; the constructor enforces that.
func newDedupWindow(size int, age time.Duration) *dedupWindow {
	if size <= 0 {
		size = math.MaxInt
	}
	keys, err := simplelru.NewLRU[string, time.Time](size, nil)
	if err != nil {
		panic(err) // only for size <= 0, excluded above
	}
	return &dedupWindow{age: age, keys: keys}
}

// Seen reports whether key was added within the window as of now.
func (w *dedupWindow) Seen(key string, now time.Time) bool {
	if key == "" {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.expire(now)
	return w.keys.Contains(key)
}

// Add records key as processed at now; re-adding a key refreshes it.
func (w *dedupWindow) Add(key string, now time.Time) {
	if key == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.keys.Add(key, now)
	w.expire(now)
}

// Len is the number of keys currently held.
func (w *dedupWindow) Len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.keys.Len()
}

// expire drops keys older than the age bound, oldest first.
func (w *dedupWindow) expire(now time.Time) {
	if w.age <= 0 {
		return
	}
	for {
		_, added, ok := w.keys.GetOldest()
		if !ok || now.Sub(added) < w.age {
			return
		}
		w.keys.RemoveOldest()
	}
}
