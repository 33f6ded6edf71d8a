package input

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connect-solace/connect-solace/internal/session"
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

// dedupFromFields sets up de-duplication: the in-memory window, or the
// cache resource, which must exist.
func (r *solaceReader) dedupFromFields(f *siFields, mgr *service.Resources) error {
	r.dedup, r.dedupTTL, r.dedupCache = f.dedup, f.dedupAge, f.dedupCache
	if r.dedup && r.dedupCache == "" {
		r.dedupWin = newDedupWindow(max(f.dedupSize, 0), max(r.dedupTTL, 0))
	}
	if r.dedupCache != "" && !mgr.HasCache(r.dedupCache) {
		return fmt.Errorf("field %s: cache resource %q not found", siFieldDedupCache, r.dedupCache)
	}
	return nil
}

// dropDuplicates acknowledges and removes messages whose key the pipeline
// already processed. Keys are recorded only on a successful pipeline ack, so
// a nacked message is never mistaken for a processed one.
func (r *solaceReader) dropDuplicates(ctx context.Context, recv *session.Receiver, ins []*session.Inbound) []*session.Inbound {
	kept := ins[:0]
	now := time.Now()
	for _, in := range ins {
		if key := in.DedupKey(); key == "" || !r.seen(ctx, key, now) {
			kept = append(kept, in)
			continue
		}
		r.mDuplicates.Incr(1)
		r.settle(recv, in, session.Accepted)
	}
	return kept
}

func (r *solaceReader) seen(ctx context.Context, key string, now time.Time) bool {
	if r.dedupWin != nil {
		return r.dedupWin.Seen(key, now)
	}
	found := false
	if err := r.mgr.AccessCache(ctx, r.dedupCache, func(c service.Cache) {
		_, err := c.Get(ctx, key)
		found = err == nil
	}); err != nil {
		r.log.Warnf("Reading de-duplication cache %q: %v", r.dedupCache, err)
	}
	return found
}

func (r *solaceReader) remember(ctx context.Context, ins []*session.Inbound) {
	now := time.Now()
	for _, in := range ins {
		key := in.DedupKey()
		if key == "" {
			continue
		}
		if r.dedupWin != nil {
			r.dedupWin.Add(key, now)
			continue
		}
		var ttl *time.Duration
		if r.dedupTTL > 0 {
			ttl = &r.dedupTTL
		}
		if err := r.mgr.AccessCache(ctx, r.dedupCache, func(c service.Cache) {
			if err := c.Set(ctx, key, []byte{1}, ttl); err != nil {
				r.log.Warnf("Writing de-duplication key to cache %q: %v", r.dedupCache, err)
			}
		}); err != nil {
			r.log.Warnf("Writing de-duplication cache %q: %v", r.dedupCache, err)
		}
	}
}
