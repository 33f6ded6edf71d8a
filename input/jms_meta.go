package input

import (
	"sync"
	"sync/atomic"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connect-solace/connect-solace/internal/jms"
)

// jmsMetaCache builds Benthos messages from decoded JMS messages cheaply.
//
// A decoded message carries ten to twenty metadata entries, most of them the
// same for every message of a stream (delivery mode, priority, destination,
// message type, ...). Setting them one by one on a fresh message costs a
// metadata map that grows twice and about half the allocations of the whole
// conversion. Instead the cache keeps a private template message holding the
// metadata of an earlier message, and each new message starts as a Copy of
// it: Benthos shares the template's map read-only with the copy and clones
// it, at its final size and in one go, the first time the copy's metadata is
// written. Only the entries whose values differ from the template's (the
// message id and timestamp, typically) are then set, and a copy that differs
// in nothing shares the map until the pipeline writes to it. The template is
// never handed to the pipeline, so nothing but Copy ever reads its map.
//
// The template is replaced when two messages in a row have a key list (the
// keys in order) other than the template's, so a stream that alternates
// between shapes does not rebuild it per message; a message that misses is
// built the plain way.
type jmsMetaCache struct {
	tmpl atomic.Pointer[jmsMetaTemplate]
	// missKeys is the key list of the last message that missed the
	// template.
	mu       sync.Mutex
	missKeys []string

	scratch sync.Pool // *[]jms.MetaField, decode storage reused per message
}

type jmsMetaTemplate struct {
	msg  *service.Message
	keys []string
	vals []any
}

// message turns am's decoded form into a Benthos message: decode writes the
// decoded message using the storage it is given, which is reused once the
// message is built.
func (c *jmsMetaCache) message(decode func(dst []jms.MetaField) jms.Inbound) (*service.Message, error) {
	sp, _ := c.scratch.Get().(*[]jms.MetaField)
	if sp == nil {
		sp = new([]jms.MetaField)
	}
	in := decode(*sp)
	msg := c.build(in.Meta, in.Body)
	clear(in.Meta) // drop the references to values, which now live in msg
	*sp = in.Meta[:0]
	c.scratch.Put(sp)
	if in.Err != nil {
		msg.SetError(in.Err)
	}
	return msg, in.Err
}

func (c *jmsMetaCache) build(meta []jms.MetaField, body []byte) *service.Message {
	t := c.tmpl.Load()
	if t == nil || !sameKeys(t.keys, meta) {
		t = c.miss(meta)
		if t == nil {
			msg := service.NewMessage(body)
			for _, f := range meta {
				msg.MetaSetMut(f.Key, f.Value)
			}
			return msg
		}
	}
	msg := t.msg.Copy()
	msg.SetBytes(body)
	for i, f := range meta {
		if !sameMetaValue(t.vals[i], f.Value) {
			msg.MetaSetMut(f.Key, f.Value)
		}
	}
	return msg
}

// miss records a message that does not fit the template and returns a new
// template built from it when the previous miss had the same keys.
func (c *jmsMetaCache) miss(meta []jms.MetaField) *jmsMetaTemplate {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.missKeys == nil || !sameKeys(c.missKeys, meta) {
		c.missKeys = c.missKeys[:0]
		for _, f := range meta {
			c.missKeys = append(c.missKeys, f.Key)
		}
		return nil
	}
	t := &jmsMetaTemplate{msg: service.NewMessage(nil), keys: make([]string, len(meta)), vals: make([]any, len(meta))}
	seen := make(map[string]struct{}, len(meta))
	for i, f := range meta {
		if _, dup := seen[f.Key]; dup {
			// A property named like a header: the later entry wins, which a
			// template compared entry by entry cannot express.
			return nil
		}
		seen[f.Key] = struct{}{}
		t.keys[i], t.vals[i] = f.Key, f.Value
		t.msg.MetaSetMut(f.Key, f.Value)
	}
	c.missKeys = nil
	c.tmpl.Store(t)
	return t
}

func sameKeys(keys []string, meta []jms.MetaField) bool {
	if len(keys) != len(meta) {
		return false
	}
	for i, f := range meta {
		if keys[i] != f.Key {
			return false
		}
	}
	return true
}

func (r *jmsReader) toMessage(d jms.Delivery, opts *jms.DecodeOptions) *service.Message {
	msg, err := r.meta.message(func(dst []jms.MetaField) jms.Inbound { return jms.DecodeAppend(dst, d.Payload, opts) })
	if err != nil {
		r.mDecodeErrors.Incr(1)
	}
	return msg
}
