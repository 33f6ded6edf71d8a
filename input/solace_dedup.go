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
	if r.dedup {
		r.inFlight.keys = map[string][]heldCopy{}
	}
	if r.dedup && r.dedupCache == "" {
		r.dedupWin = newDedupWindow(max(f.dedupSize, 0), max(r.dedupTTL, 0))
	}
	if r.dedupCache != "" && !mgr.HasCache(r.dedupCache) {
		return fmt.Errorf("field %s: cache resource %q not found", siFieldDedupCache, r.dedupCache)
	}
	return nil
}

// dedupInFlight holds the keys of messages handed to the pipeline and not
// yet settled, each with the copies of it that arrived meanwhile. Such a copy
// is typically the broker's redelivery after a connection loss, of a message
// the pipeline was still processing: the window cannot know it yet (keys
// enter it only on a successful ack), so without holding it back both copies
// went down the pipeline. A held copy is acknowledged and dropped when the
// pipeline acks the first, and handed out when the pipeline rejects it.
type dedupInFlight struct {
	mu   sync.Mutex
	keys map[string][]heldCopy
}

// heldCopy is a copy of an in-flight message, not settled yet.
type heldCopy struct {
	recv *siReceiver
	in   *siDelivery
}

// claim marks key as in flight and reports true, or, when it already is,
// holds in back and reports false.
func (f *dedupInFlight) claim(key string, recv *siReceiver, in *siDelivery) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if held, ok := f.keys[key]; ok {
		f.keys[key] = append(held, heldCopy{recv, in})
		return false
	}
	f.keys[key] = nil
	return true
}

// done ends key's flight and returns the copies held back meanwhile.
func (f *dedupInFlight) done(key string) []heldCopy {
	f.mu.Lock()
	defer f.mu.Unlock()
	held := f.keys[key]
	delete(f.keys, key)
	return held
}

// dropAll forgets every key and returns every held copy.
func (f *dedupInFlight) dropAll() []heldCopy {
	f.mu.Lock()
	defer f.mu.Unlock()
	var all []heldCopy
	for _, held := range f.keys {
		all = append(all, held...)
	}
	clear(f.keys)
	return all
}

// dropDuplicates acknowledges and removes messages whose key the pipeline
// already processed, and holds back copies of messages the pipeline is
// processing (see dedupInFlight). Keys are recorded only on a successful
// pipeline ack, so a nacked message is never mistaken for a processed one.
//
// A key leaves the in-flight set only after settleBatch remembered it, so a
// copy that finds its key no longer in flight finds it in the window.
func (r *solaceReader) dropDuplicates(ctx context.Context, recv *siReceiver, ins []*siDelivery) []*siDelivery {
	now := time.Now()
	return dropKeyed(ins, func(in *siDelivery, key string) bool {
		if !r.inFlight.claim(key, recv, in) {
			return true
		}
		if !r.seen(ctx, key, now) {
			return false
		}
		r.mDuplicates.Incr(1)
		_ = r.settle(recv, in, session.Accepted)
		r.endFlight(key, true)
		return true
	})
}

// dropKeyed filters ins in place, keeping the messages without a
// de-duplication key and those of the others for which drop says false,
// and clears the slots it freed.
func dropKeyed[T interface{ DedupKey() string }](ins []T, drop func(in T, key string) bool) []T {
	kept := ins[:0]
	for _, in := range ins {
		if key := in.DedupKey(); key == "" || !drop(in, key) {
			kept = append(kept, in)
		}
	}
	clear(ins[len(kept):])
	return kept
}

// endFlights ends the flight of the keys of a settled batch; accepted says
// whether the pipeline acked it.
func (r *solaceReader) endFlights(ins []*siDelivery, accepted bool) {
	for _, in := range ins {
		if key := in.DedupKey(); key != "" {
			r.endFlight(key, accepted)
		}
	}
}

// endFlight settles the copies held back while key was in flight: processed
// copies of a message the pipeline acked are acknowledged and dropped; after a
// rejection they go back to their receiver to be handed out (one receiver
// closed meanwhile releases them, and the broker redelivers).
func (r *solaceReader) endFlight(key string, accepted bool) {
	for _, h := range r.inFlight.done(key) {
		if !accepted {
			h.recv.Unread(h.in)
			continue
		}
		r.mDuplicates.Incr(1)
		if err := r.settle(h.recv, h.in, session.Accepted); err != nil {
			r.log.Warnf("Acknowledging a duplicate: %v", err)
		}
	}
}

// releaseHeld gives up every held copy on Close, unsettled: the broker
// redelivers them.
func (r *solaceReader) releaseHeld() {
	for _, h := range r.inFlight.dropAll() {
		h.recv.Release(h.in)
	}
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

func (r *solaceReader) remember(ctx context.Context, ins []*siDelivery) {
	now := time.Now()
	for _, in := range ins {
		r.rememberKey(ctx, in.DedupKey(), now)
	}
}

// rememberKey records key ("" is none) as processed at now.
func (r *solaceReader) rememberKey(ctx context.Context, key string, now time.Time) {
	if key == "" {
		return
	}
	if r.dedupWin != nil {
		r.dedupWin.Add(key, now)
		return
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
