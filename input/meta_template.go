package input

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// metaTemplate speeds up building messages, for the solace and the jms
// input alike. A received message carries ten to twenty metadata entries,
// most of them the same for every message of a stream (destination, its
// type, delivery mode, priority, message type, ...). Setting them one by one
// on a fresh message costs a metadata map that grows as it fills and about
// half the cost of building the message. Instead an input keeps a template:
// a message never handed out whose metadata holds exactly the keys of an
// earlier message, in order, with that message's values. A message with the
// same keys starts as a Copy of it: Benthos shares the template's map
// read-only with the copy and clones it, at its final size and in one step,
// the first time the copy's metadata is written. Only the values that differ
// from the template's (the message id and timestamp, typically) are then
// set, and a copy that differs in nothing shares the map until the pipeline
// writes to it. Nothing but Copy ever reads the template's map.
type metaTemplate[K comparable] struct {
	keys []K
	// vals are the values of keys, then any the input sets after them
	// (solace_timestamp).
	vals []any
	msg  *service.Message
}

// message starts a message with body as a Copy of the template.
func (t *metaTemplate[K]) message(body []byte) *service.Message {
	msg := t.msg.Copy()
	msg.SetBytes(body)
	return msg
}

// differs reports whether v, the i-th value, must be set on a message that
// started from t: t is nil (no template), or holds another value there.
func (t *metaTemplate[K]) differs(i int, v any) bool {
	return t == nil || !sameMetaValue(t.vals[i], v)
}

// metaTemplates holds an input's current template and the one rule by which
// it is replaced: when two successive misses (messages whose key list, the
// keys in order, is not the template's; fitting messages between them do
// not count) have the same key list, the second one's values become the
// template. A one-off shape never replaces it, and checking a message that
// fits writes nothing. A message that misses is built key by key. Safe for
// concurrent use.
type metaTemplates[K comparable] struct {
	cur atomic.Pointer[metaTemplate[K]]

	mu       sync.Mutex
	missed   bool // the last message missed the template, with missKeys
	missKeys []K
}

// get returns the template for a message whose n keys are key(0..n-1), or
// nil: then the message is built key by key. On the second miss in a row
// with the same keys it stores and returns the template build makes of the
// message (build returns nil for keys that cannot make one).
func (c *metaTemplates[K]) get(n int, key func(i int) K, build func() *metaTemplate[K]) *metaTemplate[K] {
	if t := c.cur.Load(); t != nil && sameKeys(t.keys, n, key) {
		return t
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.missed || !sameKeys(c.missKeys, n, key) {
		c.missed, c.missKeys = true, c.missKeys[:0]
		for i := range n {
			c.missKeys = append(c.missKeys, key(i))
		}
		return nil
	}
	t := build()
	if t == nil {
		return nil
	}
	c.missed = false
	c.cur.Store(t)
	return t
}

func sameKeys[K comparable](keys []K, n int, key func(i int) K) bool {
	if len(keys) != n {
		return false
	}
	for i, k := range keys {
		if k != key(i) {
			return false
		}
	}
	return true
}

// sameMetaValue reports whether two metadata values are identical, so that
// leaving a template's value in place changes nothing: the same type and the
// same value as == sees it (a float bit for bit, a time.Time also in its
// location and monotonic reading). It is false for types without a cheap
// equality (byte slices, maps, lists), so those are always set. The solace
// and jms inputs' metadata templates both use it.
func sameMetaValue(a, b any) bool {
	switch av := a.(type) {
	case string:
		bv, ok := b.(string)
		return ok && av == bv
	case int64:
		bv, ok := b.(int64)
		return ok && av == bv
	case bool:
		bv, ok := b.(bool)
		return ok && av == bv
	case int32:
		bv, ok := b.(int32)
		return ok && av == bv
	case int8:
		bv, ok := b.(int8)
		return ok && av == bv
	case int16:
		bv, ok := b.(int16)
		return ok && av == bv
	case uint8:
		bv, ok := b.(uint8)
		return ok && av == bv
	case uint16:
		bv, ok := b.(uint16)
		return ok && av == bv
	case uint32:
		bv, ok := b.(uint32)
		return ok && av == bv
	case uint64:
		bv, ok := b.(uint64)
		return ok && av == bv
	case float32:
		// Bitwise, so -0 and 0 (equal as numbers) stay apart.
		bv, ok := b.(float32)
		return ok && math.Float32bits(av) == math.Float32bits(bv)
	case float64:
		bv, ok := b.(float64)
		return ok && math.Float64bits(av) == math.Float64bits(bv)
	case time.Time:
		bv, ok := b.(time.Time)
		return ok && av == bv
	case nil:
		return b == nil
	}
	return false
}
