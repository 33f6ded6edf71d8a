package amqpwire

import (
	"testing"
	"time"
)

// The codec's hot path, as the jms input and output drive it: a received
// transfer's frame and message, a settlement, an application property's
// values, and a sent message and its transfer.

func BenchmarkDecodeTransfer(b *testing.B) {
	body, err := AppendMessage(nil, benchMessage())
	if err != nil {
		b.Fatal(err)
	}
	var m Received
	benchDecode(b, appendTransfer(nil, 1, 3, 123456, true, false, body), func(fr *frame) bool {
		t, err := decodeTransfer(fr.fields)
		return err == nil && t.deliveryID == 123456 &&
			ParseMessage(fr.payload, &m) == nil && m.HasHeader && m.HasProperties
	})
}

func BenchmarkDecodeDisposition(b *testing.B) {
	benchDecode(b, appendDisposition(nil, 1, 100, 163, State{Kind: StateAccepted}), func(fr *frame) bool {
		d, err := decodeDisposition(fr.fields)
		return err == nil && d.last == 163 && d.terminal
	})
}

func BenchmarkDecodeFlow(b *testing.B) {
	benchDecode(b, appendFlow(nil, 1, 1000, 5000, 2000, 5000, &linkFlow{handle: 3, deliveryCount: 700, credit: 300}), func(fr *frame) bool {
		fl, err := decodeFlow(fr.fields)
		return err == nil && fl.linkCredit != nil
	})
}

// benchDecode parses the frame buf and decodes it with decode, which says
// whether it read what was sent.
func benchDecode(b *testing.B, buf []byte, decode func(*frame) bool) {
	var fr frame
	b.ReportAllocs()
	for b.Loop() {
		if err := parseFrame(buf, &fr); err != nil {
			b.Fatal(err)
		}
		if !decode(&fr) {
			b.Fatal("decoded other than sent")
		}
	}
}

func BenchmarkValue(b *testing.B) {
	var vals [][]byte
	for _, v := range []any{int32(-7), int64(1 << 40), 2.5, float32(1.5), true, uint16(9), time.UnixMilli(1700000000000), "text"} {
		enc, err := AppendValue(nil, v)
		if err != nil {
			b.Fatal(err)
		}
		vals = append(vals, enc)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, enc := range vals {
			if _, err := Value(enc); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkEncodeTransfer(b *testing.B) {
	m := benchMessage()
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		body, err := AppendMessage(buf[:0], m)
		if err != nil {
			b.Fatal(err)
		}
		frame := appendTransfer(body[len(body):], 1, 3, 123456, true, false, body)
		frame = appendFlow(frame, 1, 1000, 5000, 2000, 5000, &linkFlow{handle: 3, deliveryCount: 700, credit: 300})
		_ = appendDisposition(frame, 1, 100, 163, State{Kind: StateAccepted})
	}
}

// benchMessage is a JMS text message as the jms output sends one.
func benchMessage() *Message {
	seq := uint32(300)
	return &Message{
		Durable:  true,
		Priority: 6,
		TTL:      time.Minute,
		Annotations: []Annotation{
			{Key: "x-opt-jms-msg-type", Value: int8(5)},
			{Key: "x-opt-jms-dest", Value: int8(0)},
		},
		MessageID:             "ID:4f1c2a9e-0b7d-4a8e-9c1f-6d2e3b4a5c6d:1:1:1-42",
		To:                    "orders",
		ReplyTo:               "replies",
		CorrelationID:         "corr-42",
		ContentType:           "text/plain",
		CreationTime:          time.UnixMilli(1700000000000),
		AbsoluteExpiryTime:    time.UnixMilli(1700000060000),
		GroupID:               "g1",
		GroupSequence:         &seq,
		ApplicationProperties: map[string]any{"count": int32(7), "region": "eu", "big": int64(1 << 40)},
		Text:                  "a JMS text message body of modest length",
		HasText:               true,
	}
}
