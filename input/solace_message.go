package input

// This file is how the solace input makes Benthos messages of what it
// receives: each delivery read once, into attribute storage the input reuses,
// its message built from a metadata template and kept in the delivery's slot.

import (
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connect-solace/connect-solace/internal/session"
	"github.com/connect-solace/connect-solace/internal/solacecfg"
)

// buildAll builds the message of every delivery of ds that has none yet
// (one given back by Unread has it), reusing one storage for their
// attributes.
func (r *solaceReader) buildAll(ds []*siDelivery) {
	sp, _ := r.metaScratch.Get().(*[]session.MetaField)
	if sp == nil {
		sp = new([]session.MetaField)
	}
	for _, d := range ds {
		if d.Slot[0] == nil {
			*sp = r.build(d, *sp)
		}
	}
	r.metaScratch.Put(sp)
}

// message returns in's Benthos message, made by build, with its event time
// when that comes from a mapping (which must not see a metadata template's
// values, see metaTemplate).
func (r *solaceReader) message(d *siDelivery) *service.Message {
	msg := d.Slot[0]
	if r.tsMode == siTimestampMapping {
		msg.MetaSetMut(solacecfg.MetaTimestamp, r.eventTime(msg, &d.Inbound))
	}
	return msg
}

// build reads d, its attributes into meta, and makes its Benthos message,
// into d.Slot. It returns meta's storage, emptied, for the next message: the
// attributes then cost neither an allocation nor room in every delivery
// waiting for the pipeline.
func (r *solaceReader) build(d *siDelivery, meta []session.MetaField) []session.MetaField {
	in := &d.Inbound
	in.Read(meta)
	d.Slot[0] = r.toMessage(in)
	meta = in.Meta[:0]
	clear(in.Meta) // the values now live in the message
	in.Meta = nil
	return meta
}

// toMessage builds the message of in with all its metadata, but for
// solace_timestamp with timestamp: mapping (ReadBatch sets it).
func (r *solaceReader) toMessage(in *session.Inbound) *service.Message {
	if len(in.Properties) > 0 || r.tsMode == siTimestampMapping {
		msg := service.NewMessage(in.Payload)
		for k, v := range in.Properties {
			msg.MetaSetMut(k, v)
		}
		return r.setMeta(msg, in, nil)
	}
	t := r.metaTmpls.get(len(in.Meta), func(i int) session.Attr { return in.Meta[i].Key }, func() *metaTemplate[session.Attr] { return r.newTemplate(in) })
	if t == nil {
		return r.setMeta(service.NewMessage(in.Payload), in, nil)
	}
	return r.setMeta(t.message(in.Payload), in, t)
}

// setMeta sets in's attributes and solace_timestamp on msg, but for the
// values msg already has from the template t (nil: sets every key), and
// returns msg.
func (r *solaceReader) setMeta(msg *service.Message, in *session.Inbound, t *metaTemplate[session.Attr]) *service.Message {
	var sent, received any // the timestamps, already boxed
	for i, f := range in.Meta {
		if t.differs(i, f.Value) {
			msg.MetaSetMut(solacecfg.MetaKeys[f.Key], f.Value)
		}
		switch f.Key {
		case session.MetaSenderTimestamp:
			sent = f.Value
		case session.MetaReceiveTimestamp:
			received = f.Value
		}
	}
	// The event time reuses a boxed timestamp when it is one of them.
	var ts any
	switch {
	case r.tsMode == siTimestampMapping:
		return msg
	case r.tsMode == siTimestampReceive:
		ts = received
	case !in.SenderTimestamp.IsZero():
		ts = sent
	default:
		ts = received
	}
	if ts == nil {
		ts = r.eventTime(msg, in)
	}
	if t.differs(len(in.Meta), ts) {
		msg.MetaSetMut(solacecfg.MetaTimestamp, ts)
	}
	return msg
}

// newTemplate builds the template of in's attributes and values, with
// solace_timestamp's value after theirs. Messages with user properties, or
// whose event time comes from a mapping (which must not see the template's
// values), are built key by key instead.
func (r *solaceReader) newTemplate(in *session.Inbound) *metaTemplate[session.Attr] {
	t := &metaTemplate[session.Attr]{
		keys: make([]session.Attr, len(in.Meta)),
		vals: make([]any, len(in.Meta)+1),
		msg:  r.setMeta(service.NewMessage(nil), in, nil),
	}
	for i, f := range in.Meta {
		t.keys[i], t.vals[i] = f.Key, f.Value
	}
	t.vals[len(in.Meta)], _ = t.msg.MetaGetMut(solacecfg.MetaTimestamp)
	return t
}
