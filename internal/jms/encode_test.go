package jms_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/Azure/go-amqp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/jms"
	"github.com/connect-solace/connect-solace/internal/testkit/jmskit"
)

// roundTrip encodes m, marshals it to wire bytes and decodes them again, so
// tests see what a receiver sees (types included), not Go values.
func roundTrip(t *testing.T, m *jms.Message) *amqp.Message {
	t.Helper()
	am, err := jmskit.Encode(m)
	require.NoError(t, err)
	wire, err := am.MarshalBinary()
	require.NoError(t, err)
	var got amqp.Message
	require.NoError(t, got.UnmarshalBinary(wire))

	// jms.AppendEncoded, which the sender uses, writes the same message.
	same := *m
	same.MessageID, same.CreationTime = am.Properties.MessageID.(string), *am.Properties.CreationTime
	ours, err := jms.AppendEncoded(nil, &same)
	require.NoError(t, err)
	var fromOurs amqp.Message
	require.NoError(t, fromOurs.UnmarshalBinary(ours))
	assert.Equal(t, got, fromOurs, "AppendEncoded and the oracle agree")
	return &got
}

// TestAppendEncodedBytes checks jms.AppendEncoded byte for byte against
// go-amqp's marshalling of oracleEncode's message, for each message class. The
// message annotations (a map of two or three entries, which go-amqp writes
// in Go's random map order) are compared decoded; every other section,
// including application properties of one entry, is compared as bytes.
func TestAppendEncodedBytes(t *testing.T) {
	seq := uint32(3)
	reply := jms.Destination{Kind: jms.KindTopic, Address: "topic://r"}
	for _, m := range []jms.Message{
		{Type: jms.BodyBytes, Body: bytes.Repeat([]byte{7}, 1000), Persistent: true, Priority: jms.DefaultPriority},
		{Type: jms.BodyText, Body: []byte("hello"), Priority: 0, TTL: time.Minute, CorrelationID: "c", JMSType: "t", ReplyTo: &reply,
			GroupID: "g", GroupSequence: &seq, Properties: map[string]any{"p": int32(5)}},
		{Type: jms.BodyMap, Map: map[string]any{"k": "v"}, Priority: 9},
		{Type: jms.BodyText, Body: bytes.Repeat([]byte("z"), 300), Priority: jms.DefaultPriority},
	} {
		t.Run(string(m.Type), func(t *testing.T) {
			m.Destination = jms.Destination{Kind: jms.KindQueue, Address: "queue://q"}
			m.MessageID, m.CreationTime = "ID:x", time.UnixMilli(1700000000000)
			am, err := jmskit.Encode(&m)
			require.NoError(t, err)
			anns := am.Annotations
			am.Annotations = nil
			theirs, err := am.MarshalBinary()
			require.NoError(t, err)
			ours, err := jms.AppendEncoded(nil, &m)
			require.NoError(t, err)
			// Cut our annotations section out: descriptor 0x72, then map32.
			i := bytes.Index(ours, []byte{0x00, 0x53, 0x72, 0xd1})
			require.Positive(t, i)
			size := int(binary.BigEndian.Uint32(ours[i+4:]))
			section := ours[i : i+8+size]
			assert.Equal(t, theirs, slices.Concat(ours[:i], ours[i+8+size:]))
			var got, want amqp.Message
			require.NoError(t, got.UnmarshalBinary(section))
			wantBytes, err := (&amqp.Message{Annotations: anns}).MarshalBinary()
			require.NoError(t, err)
			require.NoError(t, want.UnmarshalBinary(wantBytes))
			assert.Equal(t, want.Annotations, got.Annotations)
			assert.Len(t, wantBytes, len(section))
		})
	}
}

// TestEncodeConventions encodes the same JMS message for ActiveMQ, Artemis
// and Solace and checks the address, annotations and body per convention.
func TestEncodeConventions(t *testing.T) {
	created := time.UnixMilli(1700000000000)
	seq := uint32(9)
	tests := []struct {
		style     string
		kind      jms.DestKind
		name      string
		replyTo   string
		replyKind jms.DestKind
		wantTo    string
		wantReply string
		wantCaps  []string
	}{
		{jms.StyleActiveMQ, jms.KindQueue, "orders", "answers", jms.KindTopic, "queue://orders", "topic://answers", []string{"queue"}},
		{jms.StyleActiveMQ, jms.KindTopic, "prices", "answers", jms.KindQueue, "topic://prices", "queue://answers", []string{"topic"}},
		{jms.StyleArtemis, jms.KindQueue, "orders", "answers", jms.KindQueue, "orders", "answers", []string{"queue"}},
		{jms.StyleArtemis, jms.KindTopic, "prices", "answers", jms.KindTopic, "prices", "answers", []string{"topic"}},
		{jms.StyleSolace, jms.KindQueue, "orders", "answers", jms.KindTopic, "orders", "topic://answers", []string{"queue"}},
		{jms.StyleSolace, jms.KindTopic, "prices/eu/>", "answers", jms.KindQueue, "topic://prices/eu/>", "answers", []string{"topic"}},
		{jms.StyleRabbitMQ, jms.KindQueue, "orders", "answers", jms.KindTopic, "/queue/orders", "/topic/answers", nil},
	}
	for _, tc := range tests {
		t.Run(tc.style+"/"+tc.kind.String(), func(t *testing.T) {
			a, err := jms.NewAddresser(tc.style, "", "", nil)
			require.NoError(t, err)
			dest, err := a.Resolve(tc.kind, tc.name)
			require.NoError(t, err)
			assert.Equal(t, tc.wantTo, dest.Address)
			assert.Equal(t, tc.wantCaps, dest.Capabilities)
			reply, err := a.Resolve(tc.replyKind, tc.replyTo)
			require.NoError(t, err)

			got := roundTrip(t, &jms.Message{
				Type:          jms.BodyText,
				Body:          []byte("héllo"),
				Destination:   dest,
				ReplyTo:       &reply,
				Persistent:    true,
				Priority:      7,
				TTL:           90 * time.Second,
				MessageID:     "abc",
				CorrelationID: "corr",
				JMSType:       "T",
				GroupID:       "g",
				GroupSequence: &seq,
				Properties:    map[string]any{"n": int32(1)},
				CreationTime:  created,
			})
			assert.Equal(t, "héllo", got.Value)
			assert.Empty(t, got.Data)
			assert.Equal(t, int8(jms.MsgTypeText), ann(t, got, jms.AnnMsgType))
			assert.Equal(t, int8(tc.kind), ann(t, got, jms.AnnDest))
			assert.Equal(t, int8(tc.replyKind), ann(t, got, jms.AnnReplyType))
			assert.True(t, got.Header.Durable)
			assert.Equal(t, uint8(7), got.Header.Priority)
			assert.Equal(t, 90*time.Second, got.Header.TTL)
			p := got.Properties
			assert.Equal(t, "ID:abc", p.MessageID)
			assert.Equal(t, tc.wantTo, *p.To)
			assert.Equal(t, tc.wantReply, *p.ReplyTo)
			assert.Equal(t, "corr", p.CorrelationID)
			assert.Equal(t, "T", *p.Subject)
			assert.Equal(t, "g", *p.GroupID)
			assert.Equal(t, uint32(9), *p.GroupSequence)
			assert.Nil(t, p.ContentType)
			assert.True(t, created.Equal(*p.CreationTime))
			assert.True(t, created.Add(90*time.Second).Equal(*p.AbsoluteExpiryTime))
			assert.Equal(t, map[string]any{"n": int32(1)}, got.ApplicationProperties)
		})
	}
}

func TestEncodeBodies(t *testing.T) {
	dest := jms.Destination{Kind: jms.KindQueue, Name: "q", Address: "q"}
	tests := []struct {
		name     string
		msg      jms.Message
		wantType int8
		wantCT   string
		check    func(t *testing.T, m *amqp.Message)
	}{
		{
			name:     "bytes is a data section with octet-stream",
			msg:      jms.Message{Type: jms.BodyBytes, Body: []byte{0, 1, 0xff}},
			wantType: jms.MsgTypeBytes,
			wantCT:   jms.ContentTypeOctetStream,
			check: func(t *testing.T, m *amqp.Message) {
				assert.Equal(t, [][]byte{{0, 1, 0xff}}, m.Data)
				assert.Nil(t, m.Value)
			},
		},
		{
			name:     "map is an amqp-value map",
			msg:      jms.Message{Type: jms.BodyMap, Map: map[string]any{"a": int64(1), "b": "x", "c": []byte{1}}},
			wantType: jms.MsgTypeMap,
			check: func(t *testing.T, m *amqp.Message) {
				assert.Equal(t, map[string]any{"a": int64(1), "b": "x", "c": []byte{1}}, m.Value)
			},
		},
		{
			name:     "empty map is still a map",
			msg:      jms.Message{Type: jms.BodyMap},
			wantType: jms.MsgTypeMap,
			check: func(t *testing.T, m *amqp.Message) {
				assert.Empty(t, m.Value)
				assert.IsType(t, map[any]any{}, m.Value, "an (empty) AMQP map")
			},
		},
		{
			name:     "empty text is an empty string",
			msg:      jms.Message{Type: jms.BodyText},
			wantType: jms.MsgTypeText,
			check: func(t *testing.T, m *amqp.Message) {
				assert.Equal(t, "", m.Value)
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.msg.Destination = dest
			tc.msg.Priority = jms.DefaultPriority
			before := time.Now().Truncate(time.Millisecond)
			got := roundTrip(t, &tc.msg)
			assert.Equal(t, tc.wantType, ann(t, got, jms.AnnMsgType))
			if tc.wantCT == "" {
				assert.Nil(t, got.Properties.ContentType)
			} else {
				require.NotNil(t, got.Properties.ContentType)
				assert.Equal(t, tc.wantCT, *got.Properties.ContentType)
			}
			// Defaults: non-persistent, priority 4, no expiry, generated
			// ID and a creation time.
			assert.False(t, got.Header.Durable)
			assert.Equal(t, jms.DefaultPriority, got.Header.Priority)
			assert.Nil(t, got.Properties.AbsoluteExpiryTime)
			assert.Regexp(t, `^ID:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, got.Properties.MessageID)
			require.NotNil(t, got.Properties.CreationTime)
			assert.False(t, got.Properties.CreationTime.Before(before))
			assert.Nil(t, ann(t, got, jms.AnnReplyType))
			tc.check(t, got)
		})
	}
}

func TestEncodeErrors(t *testing.T) {
	dest := jms.Destination{Address: "q"}
	tests := []struct {
		name string
		msg  jms.Message
		want string
	}{
		{"invalid UTF-8 text", jms.Message{Type: jms.BodyText, Body: []byte{0xff, 0xfe}, Destination: dest}, "message_type: bytes"},
		{"priority above 9", jms.Message{Priority: 10, Destination: dest}, "0-9"},
		{"no destination", jms.Message{}, "no destination"},
		{"unknown type", jms.Message{Type: "stream", Destination: dest}, "unknown message type"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := jms.AppendEncoded([]byte("kept"), &tc.msg)
			require.Error(t, err)
			assert.Equal(t, "kept", string(b), "b unchanged on error")
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestMessageIDsAreUnique(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := jms.NewMessageID()
		require.False(t, seen[id], "duplicate %s", id)
		seen[id] = true
	}
}

// ann returns an annotation's value. go-amqp decodes symbol keys into plain
// strings, so TestAnnotationKeysAreSymbols checks the wire encoding.
func ann(t *testing.T, m *amqp.Message, key string) any {
	t.Helper()
	for k, v := range m.Annotations {
		if fmt.Sprint(k) == key {
			return v
		}
	}
	return nil
}

// TestAnnotationKeysAreSymbols checks the mapping's annotation keys go on the
// wire as AMQP symbols (sym8) followed by a signed byte (0x51), as Qpid JMS
// and brokers expect.
func TestAnnotationKeysAreSymbols(t *testing.T) {
	reply := jms.Destination{Kind: jms.KindTopic, Address: "r"}
	wire, err := jms.AppendEncoded(nil, &jms.Message{Type: jms.BodyBytes, Destination: jms.Destination{Kind: jms.KindTopic, Address: "t"}, ReplyTo: &reply})
	require.NoError(t, err)
	for key, val := range map[string]int8{jms.AnnMsgType: jms.MsgTypeBytes, jms.AnnDest: int8(jms.KindTopic), jms.AnnReplyType: int8(jms.KindTopic)} {
		enc := append(sym8(key), 0x51, byte(val))
		assert.True(t, bytes.Contains(wire, enc), "wire lacks %s as sym8 + byte %d", key, val)
	}
}

// sym8 is the sym8 encoding of s.
func sym8(s string) []byte { return append([]byte{0xa3, byte(len(s))}, s...) }
