package input

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/jms"
)

func TestJMSMetaCache(t *testing.T) {
	fields := func(kv ...any) []jms.MetaField {
		var out []jms.MetaField
		for i := 0; i < len(kv); i += 2 {
			out = append(out, jms.MetaField{Key: kv[i].(string), Value: kv[i+1]})
		}
		return out
	}
	toMap := func(fs []jms.MetaField) map[string]any {
		out := map[string]any{}
		for _, f := range fs {
			out[f.Key] = f.Value
		}
		return out
	}
	var c jmsMetaCache
	at := time.UnixMilli(1700000000000).UTC()
	// Shape A three times (the template is built on the second miss), then
	// shape B, then A again: every message has exactly its own metadata.
	msgs := [][]jms.MetaField{
		fields("id", "ID:1", "prio", int64(4), "f", float32(0), "b", []byte("x"), "ts", at),
		fields("id", "ID:2", "prio", int64(4), "f", float32(math.Copysign(0, -1)), "b", []byte("y"), "ts", at),
		fields("id", "ID:3", "prio", int64(7), "f", float32(0), "b", []byte("z"), "ts", at.Add(time.Millisecond)),
		fields("id", "ID:4", "prio", int32(4), "f", float32(0), "b", []byte("x"), "ts", at),
		fields("other", true, "id", "ID:5"),
		fields("id", "ID:6", "prio", int64(4), "f", nil, "b", "text", "ts", at.Local()),
	}
	build := func(body []byte, fs []jms.MetaField, inErr error) *service.Message {
		m, err := c.message(func(dst []jms.MetaField) jms.Inbound {
			return jms.Inbound{Body: body, Meta: append(dst, fs...), Err: inErr}
		})
		require.Equal(t, inErr, err)
		return m
	}
	for i, fs := range msgs {
		body := []byte{byte('a' + i)}
		m := build(body, fs, nil)
		assert.Equal(t, toMap(fs), metaOf(t, m), "message %d", i)
		b, err := m.AsBytes()
		require.NoError(t, err)
		assert.Equal(t, body, b)
		// A pipeline writing a message's metadata leaves the others, and
		// the template, alone.
		m.MetaSetMut("prio", int64(9))
		m.MetaSetMut("added", "yes")
	}
	tmpl := c.tmpls.cur.Load()
	require.NotNil(t, tmpl, "a template was built")
	// The same values as the template: the copy shares its map until the
	// pipeline writes, and still reads as its own.
	same := msgs[1] // the second miss of shape A made the template
	m := build(nil, same, nil)
	assert.Equal(t, toMap(same), metaOf(t, m))
	assert.Equal(t, toMap(same), metaOf(t, tmpl.msg))

	// A decode error marks the message.
	bad := build([]byte("raw"), same, errors.New("boom"))
	assert.EqualError(t, bad.GetError(), "boom")

	// A property named like a header comes first in the list and the header
	// wins; such a shape is never made a template.
	dup := fields("jms_priority", "from-property", "id", "ID:7", "jms_priority", int64(4))
	for range 3 {
		m := build(nil, dup, nil)
		assert.Equal(t, map[string]any{"jms_priority": int64(4), "id": "ID:7"}, metaOf(t, m))
	}
	assert.Same(t, tmpl, c.tmpls.cur.Load())
}
