package output

import (
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace/message/sdt"

	"github.com/connect-solace/connect-solace/solacetest"
)

// payload_type sends SDT maps, streams and strings that the real client
// reads back with GetPayloadAsMap, GetPayloadAsStream and GetPayloadAsString,
// integers as integers.
func TestSolaceOutputStructuredPayloads(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	require.NoError(t, b.CreateQueue("default", solacetest.QueueConfig{Name: "pq", Subscriptions: []string{"p/>"}}))
	rcv := soReceiver(t, b, "pq")
	receive := func() interface {
		GetPayloadAsMap() (sdt.Map, bool)
		GetPayloadAsStream() (sdt.Stream, bool)
		GetPayloadAsString() (string, bool)
	} {
		m, err := rcv.ReceiveMessage(5 * time.Second)
		require.NoError(t, err)
		require.NoError(t, rcv.Ack(m))
		return m
	}

	w := newSoWriter(t, b, "topic: p/map\npayload_type: map\n")
	require.NoError(t, w.WriteBatch(t.Context(), service.MessageBatch{service.NewMessage([]byte(
		`{"i":3,"big":9007199254740993,"f":1.5,"s":"x","b":true,"n":null,"nested":{"k":[1,"two"]}}`))}))
	mp, ok := receive().GetPayloadAsMap()
	require.True(t, ok, "an SDT map")
	assert.Equal(t, sdt.Map{
		"i": int64(3), "big": int64(9007199254740993), "f": 1.5, "s": "x", "b": true, "n": nil,
		"nested": sdt.Map{"k": sdt.Stream{int64(1), "two"}},
	}, mp)

	w = newSoWriter(t, b, "topic: p/stream\npayload_type: stream\n")
	require.NoError(t, w.WriteBatch(t.Context(), service.MessageBatch{service.NewMessage([]byte(`[1,-2.25,"a",false]`))}))
	st, ok := receive().GetPayloadAsStream()
	require.True(t, ok, "an SDT stream")
	assert.Equal(t, sdt.Stream{int64(1), -2.25, "a", false}, st)

	w = newSoWriter(t, b, "topic: p/text\npayload_type: string\n")
	require.NoError(t, w.WriteBatch(t.Context(), service.MessageBatch{service.NewMessage([]byte("héllo wörld"))}))
	s, ok := receive().GetPayloadAsString()
	require.True(t, ok, "an SDT string")
	assert.Equal(t, "héllo wörld", s)

	// A payload of the wrong shape fails that message, naming the field.
	w = newSoWriter(t, b, "topic: p/map\npayload_type: map\n")
	err := w.WriteBatch(t.Context(), service.MessageBatch{service.NewMessage([]byte(`[1]`))})
	require.ErrorContains(t, err, "field payload_type: map needs a JSON object, got an array")
	err = w.WriteBatch(t.Context(), service.MessageBatch{service.NewMessage([]byte(`not json`))})
	require.ErrorContains(t, err, "field payload_type: map needs a structured (JSON) payload")
}
