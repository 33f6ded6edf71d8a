package jms

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/Azure/go-amqp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func metaMap(in Inbound) map[string]any {
	m := map[string]any{}
	for _, f := range in.Meta {
		m[f.Key] = f.Value
	}
	return m
}

// wire encodes am as a sender puts it on the wire (go-amqp's marshaller, an
// independent encoder), which is what the decoder reads.
func wire(t testing.TB, am *amqp.Message) []byte {
	t.Helper()
	b, err := am.MarshalBinary()
	require.NoError(t, err)
	return b
}

// TestDecodeInvertsEncode encodes every message type the output produces,
// with every header and each JMS property type, and checks the decoder
// returns the same body, headers and typed properties.
func TestDecodeInvertsEncode(t *testing.T) {
	rabbit, err := NewAddresser(StyleRabbitMQ, "", "", nil)
	require.NoError(t, err)
	activemq, err := NewAddresser(StyleActiveMQ, "", "", nil)
	require.NoError(t, err)
	created := time.UnixMilli(1700000000123)
	seq := uint32(7)
	props := map[string]any{
		"s": "text", "b": true, "i8": int8(-8), "i16": int16(-16), "i32": int32(-32),
		"i64": int64(1) << 40, "f32": float32(0.25), "f64": 1.5, "nil": nil,
	}
	for _, tc := range []struct {
		name     string
		addr     Addresser
		msg      Message
		wantBody string
		wantType BodyType
	}{
		{name: "text rabbitmq", addr: rabbit, msg: Message{Type: BodyText, Body: []byte("héllo")}, wantBody: "héllo", wantType: BodyText},
		{name: "bytes activemq", addr: activemq, msg: Message{Type: BodyBytes, Body: []byte{0, 1, 0xff}}, wantBody: "\x00\x01\xff", wantType: BodyBytes},
		{name: "map", addr: rabbit, msg: Message{Type: BodyMap, Map: map[string]any{"a": int64(1), "s": "x"}}, wantBody: `{"a":1,"s":"x"}`, wantType: BodyMap},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dest, err := tc.addr.Resolve(KindTopic, "prices")
			require.NoError(t, err)
			reply, err := tc.addr.Resolve(KindQueue, "answers")
			require.NoError(t, err)
			m := tc.msg
			m.Destination, m.ReplyTo = dest, &reply
			m.Persistent, m.Priority, m.TTL = true, 7, time.Minute
			m.MessageID, m.CorrelationID, m.JMSType = "ID:m-1", "c-1", "Order"
			m.GroupID, m.GroupSequence = "g", &seq
			m.Properties, m.CreationTime = props, created
			b, err := AppendEncoded(nil, &m)
			require.NoError(t, err)

			in := Decode(b, &DecodeOptions{Addresser: tc.addr, Kind: KindQueue, Source: "ignored"})
			require.NoError(t, in.Err)
			assert.Equal(t, tc.wantType, in.Type)
			if tc.wantType == BodyMap {
				assert.JSONEq(t, tc.wantBody, string(in.Body))
			} else {
				assert.Equal(t, tc.wantBody, string(in.Body))
			}
			got := metaMap(in)
			for k, v := range props {
				assert.Equal(t, v, got[k], "property %s keeps its value and type", k)
				assert.Contains(t, got, k)
			}
			want := map[string]any{
				MetaMessageID: "ID:m-1", MetaCorrelationID: "c-1", MetaType: "Order",
				MetaDeliveryMode: DeliveryPersistent, MetaPriority: int64(7),
				MetaTimestamp: created.UnixMilli(), MetaExpiration: created.Add(time.Minute).UnixMilli(),
				MetaRedelivered: false, MetaDeliveryCount: int64(1),
				MetaReplyTo: "answers", MetaReplyToType: "queue",
				MetaDestination: "prices", MetaDestinationType: "topic",
				MetaGroupID: "g", MetaGroupSeq: int64(7), MetaMessageType: string(tc.wantType),
			}
			for k, v := range want {
				assert.Equal(t, v, got[k], "header %s", k)
			}
			assert.NotContains(t, got, MetaDecodeError)
		})
	}
}

func TestDecodeBodies(t *testing.T) {
	ct := func(s string) *amqp.MessageProperties { return &amqp.MessageProperties{ContentType: &s} }
	ann := func(code int8) amqp.Annotations { return amqp.Annotations{amqp.Symbol(AnnMsgType): code} }
	tests := []struct {
		name      string
		msg       *amqp.Message
		wantType  BodyType
		wantBody  string
		wantJSON  bool
		wantMeta  map[string]any
		wantError string
	}{
		{name: "text value", msg: &amqp.Message{Value: "hi"}, wantType: BodyText, wantBody: "hi"},
		{name: "text data with charset", msg: &amqp.Message{Data: [][]byte{[]byte("a"), []byte("b")}, Properties: ct("text/plain; charset=utf-8")}, wantType: BodyText, wantBody: "ab"},
		{name: "bytes data no content type", msg: &amqp.Message{Data: [][]byte{{1, 2}}}, wantType: BodyBytes, wantBody: "\x01\x02"},
		{name: "bytes annotated data despite text content type", msg: &amqp.Message{Data: [][]byte{[]byte("x")}, Annotations: ann(MsgTypeBytes), Properties: ct("text/plain")}, wantType: BodyBytes, wantBody: "x"},
		{name: "bytes value binary", msg: &amqp.Message{Value: []byte{9}}, wantType: BodyBytes, wantBody: "\x09"},
		{
			name: "map with types", wantType: BodyMap, wantJSON: true,
			msg:      &amqp.Message{Value: map[string]any{"i": int32(3), "l": int64(4), "f": float32(0.5), "d": 2.0, "b": []byte("hi"), "s": "x", "t": true, "n": nil, "nan": math.NaN()}, Annotations: ann(MsgTypeMap)},
			wantBody: `{"i":3,"l":4,"f":0.5,"d":2,"b":"aGk=","s":"x","t":true,"n":null,"nan":"NaN"}`,
			wantMeta: map[string]any{MetaMapTypes: map[string]any{"i": "int", "l": "long", "f": "float", "d": "double", "b": "bytes", "s": "string", "t": "boolean", "n": "null", "nan": "double"}},
		},
		{
			name: "stream from list", wantType: BodyStream, wantJSON: true,
			msg:      &amqp.Message{Value: []any{int16(1), "two", []byte{3}}, Annotations: ann(MsgTypeStream)},
			wantBody: `[1,"two","Aw=="]`,
			wantMeta: map[string]any{MetaStreamTypes: []any{"short", "string", "bytes"}},
		},
		{
			name: "stream from amqp-sequence", wantType: BodyStream, wantJSON: true,
			msg:      &amqp.Message{Sequence: [][]any{{int64(1)}, {true}}},
			wantBody: `[1,true]`,
			wantMeta: map[string]any{MetaStreamTypes: []any{"long", "boolean"}},
		},
		{
			name: "object serialized", wantType: BodyObject, wantBody: "\xac\xed\x00\x05",
			msg:      &amqp.Message{Data: [][]byte{{0xac, 0xed, 0, 5}}, Properties: ct(ContentTypeSerializedObject), Annotations: ann(MsgTypeObject)},
			wantMeta: map[string]any{MetaMessageType: "object", MetaContentType: ContentTypeSerializedObject},
		},
		{name: "plain message", msg: &amqp.Message{Annotations: ann(MsgTypeMessage)}, wantType: BodyMessage, wantBody: ""},
		{name: "no body inferred", msg: &amqp.Message{Properties: &amqp.MessageProperties{}}, wantType: BodyMessage, wantBody: ""},
		{
			name: "unknown type code inferred from body", msg: &amqp.Message{Value: "x", Annotations: ann(42)},
			wantType: BodyText, wantBody: "x", wantError: "unknown x-opt-jms-msg-type 42",
		},
		{
			name: "annotation says map, body is a string", msg: &amqp.Message{Value: "x", Annotations: ann(MsgTypeMap)},
			wantType: BodyText, wantBody: "x", wantError: "x-opt-jms-msg-type 2 (MapMessage) does not match a amqp-value string body",
		},
		{
			name: "annotation not a byte", msg: &amqp.Message{Value: "x", Annotations: amqp.Annotations{amqp.Symbol(AnnMsgType): "text"}},
			wantType: BodyText, wantBody: "x", wantError: "not a byte",
		},
		{
			name: "text not utf-8", msg: &amqp.Message{Data: [][]byte{{0xff}}, Annotations: ann(MsgTypeText)},
			wantType: BodyText, wantBody: "\xff", wantError: "not valid UTF-8",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := Decode(wire(t, tc.msg), &DecodeOptions{})
			assert.Equal(t, tc.wantType, in.Type)
			if tc.wantJSON {
				assert.JSONEq(t, tc.wantBody, string(in.Body))
			} else {
				assert.Equal(t, tc.wantBody, string(in.Body))
			}
			got := metaMap(in)
			for k, v := range tc.wantMeta {
				assert.Equal(t, v, got[k], "metadata %s", k)
			}
			if tc.wantError == "" {
				assert.NoError(t, in.Err)
				assert.NotContains(t, got, MetaDecodeError)
				return
			}
			require.Error(t, in.Err)
			assert.Contains(t, in.Err.Error(), tc.wantError)
			assert.Contains(t, got[MetaDecodeError], tc.wantError)
		})
	}
}

func TestDecodeHeaders(t *testing.T) {
	uuid := amqp.UUID{0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 1, 2, 3, 4, 5, 6, 7, 8}
	arrival := time.UnixMilli(1700000000000)
	tests := []struct {
		name string
		msg  *amqp.Message
		want map[string]any
		none []string
	}{
		{
			name: "no header: JMS defaults",
			msg:  &amqp.Message{Value: "x"},
			want: map[string]any{MetaPriority: int64(4), MetaDeliveryMode: DeliveryNonPersistent, MetaRedelivered: false, MetaDeliveryCount: int64(1), MetaTimestamp: int64(0), MetaExpiration: int64(0)},
			none: []string{MetaMessageID, MetaCorrelationID, MetaType, MetaReplyTo, MetaGroupID},
		},
		{
			name: "redelivered with ttl only",
			msg:  &amqp.Message{Value: "x", Header: &amqp.MessageHeader{DeliveryCount: 2, TTL: time.Second, Priority: 9}},
			want: map[string]any{MetaRedelivered: true, MetaDeliveryCount: int64(3), MetaExpiration: arrival.Add(time.Second).UnixMilli(), MetaPriority: int64(9)},
		},
		{
			name: "uuid ids",
			msg:  &amqp.Message{Value: "x", Properties: &amqp.MessageProperties{MessageID: uuid, CorrelationID: uuid}},
			want: map[string]any{MetaMessageID: "ID:AMQP_UUID:12345678-9abc-def0-0102-030405060708", MetaCorrelationID: "AMQP_UUID:12345678-9abc-def0-0102-030405060708"},
		},
		{
			name: "ulong and binary ids, unprefixed string",
			msg:  &amqp.Message{Value: "x", Properties: &amqp.MessageProperties{MessageID: uint64(42), CorrelationID: []byte{0xab, 1}}},
			want: map[string]any{MetaMessageID: "ID:AMQP_ULONG:42", MetaCorrelationID: "AMQP_BINARY:AB01"},
		},
		{
			name: "string id without ID: prefix",
			msg:  &amqp.Message{Value: "x", Properties: &amqp.MessageProperties{MessageID: "abc", UserID: []byte("alice")}},
			want: map[string]any{MetaMessageID: "ID:AMQP_NO_PREFIX:abc", MetaUserID: "alice"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := Decode(wire(t, tc.msg), &DecodeOptions{Arrival: arrival})
			require.NoError(t, in.Err)
			got := metaMap(in)
			for k, v := range tc.want {
				assert.Equal(t, v, got[k], k)
			}
			for _, k := range tc.none {
				assert.NotContains(t, got, k)
			}
		})
	}
}

func TestDecodeProperties(t *testing.T) {
	ts := time.UnixMilli(1700000000000).UTC()
	uuid := amqp.UUID{1}
	msg := &amqp.Message{Value: "x", ApplicationProperties: map[string]any{
		"big":          strings.Repeat("x", 100),
		"small":        "ok",
		"bin":          []byte("b"),
		"ts":           ts,
		"id":           uuid,
		"u16":          uint16(7),
		"jms_priority": "a property shadowed by the header",
	}}
	in := Decode(wire(t, msg), &DecodeOptions{MaxPropertyBytes: 50})
	got := metaMap(in)
	assert.Equal(t, "ok", got["small"])
	assert.Equal(t, []byte("b"), got["bin"])
	assert.Equal(t, ts, got["ts"].(time.Time).UTC())
	assert.Equal(t, "01000000-0000-0000-0000-000000000000", got["id"])
	assert.Equal(t, uint16(7), got["u16"])
	assert.Equal(t, int64(4), got[MetaPriority], "the header wins over a property of the same name")
	assert.NotContains(t, got, "big")
	require.Error(t, in.Err)
	assert.Contains(t, in.Err.Error(), `property "big" left out: 100 bytes is more than max_property_bytes (50)`)
}

// FuzzDecode feeds arbitrary bytes to the decoder, which reads the raw
// sections itself: whatever arrives, it must not panic, must report a
// message type, and a map or stream body it decoded without a problem must
// be valid JSON. Seeds are messages of each body type as go-amqp encodes
// them.
func FuzzDecode(f *testing.F) {
	seq := uint32(1)
	for _, m := range []Message{
		{Type: BodyText, Body: []byte("t")},
		{Type: BodyBytes, Body: []byte{0, 1}},
		{Type: BodyMap, Map: map[string]any{"a": int64(1), "b": []byte("x")}},
		{Type: BodyText, Body: []byte("p"), Properties: map[string]any{"k": int32(1)}, GroupSequence: &seq, CorrelationID: "c"},
	} {
		m.Destination = Destination{Address: "/queue/q"}
		b, err := AppendEncoded(nil, &m)
		require.NoError(f, err)
		f.Add(b)
	}
	for _, am := range []*amqp.Message{
		{Value: []any{int8(1), "s", map[string]any{"n": nil}}},
		{Sequence: [][]any{{1.5}}},
		{Value: map[any]any{int64(1): "k"}, Annotations: amqp.Annotations{amqp.Symbol(AnnMsgType): int8(2)}},
		{Value: []int32{1, 2, 3}, Properties: &amqp.MessageProperties{MessageID: amqp.UUID{1, 2}, CorrelationID: uint64(7)}},
	} {
		b, err := am.MarshalBinary()
		require.NoError(f, err)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in := Decode(data, &DecodeOptions{MaxPropertyBytes: 1024})
		if in.Type == BodyMap || in.Type == BodyStream {
			if in.Err == nil && !json.Valid(in.Body) {
				t.Fatalf("%s body is not JSON: %q", in.Type, in.Body)
			}
		}
		if in.Type == "" {
			t.Fatal("no message type")
		}
	})
}

// BenchmarkDecode measures the per-message cost of the JMS mapping on a
// received BytesMessage as the jms output sends it.
func BenchmarkDecode(b *testing.B) {
	rabbit, _ := NewAddresser(StyleRabbitMQ, "", "", nil)
	dest, _ := rabbit.Resolve(KindQueue, "q")
	m, err := AppendEncoded(nil, &Message{Type: BodyBytes, Body: make([]byte, 1024), Destination: dest, Priority: DefaultPriority})
	require.NoError(b, err)
	opts := &DecodeOptions{Addresser: rabbit, Kind: KindQueue, Source: dest.Address}
	b.ReportAllocs()
	for b.Loop() {
		_ = Decode(m, opts)
	}
}
