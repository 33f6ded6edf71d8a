package input

import (
	"sync"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connect-solace/connect-solace/internal/jms"
)

// jmsMetaCache builds Benthos messages from decoded JMS messages cheaply:
// from a metadata template (see metaTemplate) keyed by metadata name, with
// the decoder's storage reused message after message.
type jmsMetaCache struct {
	tmpls metaTemplates[string]

	scratch sync.Pool // *[]jms.MetaField, decode storage reused per message
}

// message turns a decoded message into a Benthos message: decode writes the
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
	t := c.tmpls.get(len(meta), func(i int) string { return meta[i].Key }, func() *metaTemplate[string] { return jmsTemplate(meta) })
	if t == nil {
		msg := service.NewMessage(body)
		for _, f := range meta {
			msg.MetaSetMut(f.Key, f.Value)
		}
		return msg
	}
	msg := t.message(body)
	for i, f := range meta {
		if t.differs(i, f.Value) {
			msg.MetaSetMut(f.Key, f.Value)
		}
	}
	return msg
}

// jmsTemplate is the template of meta's keys and values, or nil when a key
// repeats: a property named like a header, where the later entry wins,
// which a template compared entry by entry cannot express.
func jmsTemplate(meta []jms.MetaField) *metaTemplate[string] {
	t := &metaTemplate[string]{msg: service.NewMessage(nil), keys: make([]string, len(meta)), vals: make([]any, len(meta))}
	seen := make(map[string]struct{}, len(meta))
	for i, f := range meta {
		if _, dup := seen[f.Key]; dup {
			return nil
		}
		seen[f.Key] = struct{}{}
		t.keys[i], t.vals[i] = f.Key, f.Value
		t.msg.MetaSetMut(f.Key, f.Value)
	}
	return t
}

func (r *jmsReader) toMessage(d jms.Delivery, opts *jms.DecodeOptions) *service.Message {
	msg, err := r.meta.message(func(dst []jms.MetaField) jms.Inbound { return jms.DecodeAppend(dst, d.Payload, opts) })
	if err != nil {
		r.mDecodeErrors.Incr(1)
	}
	return msg
}
