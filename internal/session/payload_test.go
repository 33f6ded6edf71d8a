package session

import (
	"bytes"
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/logging"
	"solace.dev/go/messaging/pkg/solace/message"
	"solace.dev/go/messaging/pkg/solace/message/sdt"
	"solace.dev/go/messaging/pkg/solace/resource"

	"github.com/connect-solace/connect-solace/solacetest"
)

// syncBuffer collects the client's log, written from its threads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A byte payload is delivered as its bytes whatever its first byte, on the
// native path and through the Go API alone: one that starts like an SDT tag
// (0x1c-0x1f string, 0x28-0x2f map and stream) is not handed to the client as
// structured data, which would log "Bad Length in structured data TLV" for
// each. Real SDT payloads still arrive as text and JSON.
func TestReceiverKeepsBinaryPayloads(t *testing.T) {
	type want struct {
		build   func(b solace.OutboundMessageBuilder) (message.OutboundMessage, error)
		payload []byte
	}
	var cases []want
	for _, c := range []byte{0x1c, 0x1d, 0x1e, 0x1f, 0x28, 0x29, 0x2a, 0x2b, 0x2c, 0x2d, 0x2e, 0x2f} {
		for _, p := range [][]byte{{c}, {c, 1, 2, 3, 4, 5, 6, 7}, {c, 0, 0, 0, 0, 0, 0, 0, 0}} {
			cases = append(cases, want{func(b solace.OutboundMessageBuilder) (message.OutboundMessage, error) {
				return b.BuildWithByteArrayPayload(p)
			}, p})
		}
	}
	cases = append(cases,
		want{func(b solace.OutboundMessageBuilder) (message.OutboundMessage, error) {
			return b.BuildWithStringPayload("hello")
		}, []byte("hello")},
		want{func(b solace.OutboundMessageBuilder) (message.OutboundMessage, error) {
			return b.BuildWithMapPayload(sdt.Map{"a": int32(1)})
		}, []byte(`{"a":1}`)},
		want{func(b solace.OutboundMessageBuilder) (message.OutboundMessage, error) {
			return b.BuildWithStreamPayload(sdt.Stream{"x", int32(2)})
		}, []byte(`["x",2]`)},
	)

	for _, native := range []bool{true, false} {
		t.Run(map[bool]string{true: "native", false: "go_api"}[native], func(t *testing.T) {
			var clientLog syncBuffer
			logging.SetLogOutput(&clientLog)
			t.Cleanup(func() { logging.SetLogOutput(os.Stderr) })
			f := newRxFixture(t, solacetest.QueueConfig{Name: "q1", Subscriptions: []string{"t"}})
			for _, c := range cases {
				msg, err := c.build(f.svc.MessageBuilder())
				require.NoError(t, err)
				require.NoError(t, f.pub.PublishAwaitAcknowledgement(msg, resource.TopicOf("t"), 5*time.Second, nil))
			}
			var r *rcv
			var err error
			if native {
				r, err = NewReceiver[struct{}](t.Context(), f.sess, ReceiverConfig{Queue: "q1"})
			} else {
				r, err = newReceiver[struct{}](t.Context(), f.sess.svc, ReceiverConfig{Queue: "q1"}, nil, nil)
			}
			require.NoError(t, err)
			t.Cleanup(func() { _ = r.Close(context.Background()) })
			for i, in := range receiveN(t, r, len(cases)) {
				require.Equal(t, cases[i].payload, in.Payload, "message %d", i)
				require.NoError(t, r.Settle(in, Accepted))
			}
			require.NotContains(t, clientLog.String(), "structured data")
		})
	}
}
