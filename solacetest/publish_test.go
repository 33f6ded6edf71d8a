package solacetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace/message"
	"solace.dev/go/messaging/pkg/solace/resource"
)

func TestPublishReachesGoClientWithAttributes(t *testing.T) {
	b := newBroker(t)
	svc := connect(t, b, nil)
	tests := []struct {
		name string
		msg  Message
	}{
		{name: "to a queue", msg: Message{Queue: "q1", Payload: []byte("to the queue"), Priority: 7, TTL: time.Minute, DMQEligible: true,
			CorrelationID: "corr-1", ApplicationMessageID: "app-1", ApplicationMessageType: "order.created",
			UserProperties: map[string]string{"region": "eu", "tenant": "t1"}}},
		{name: "persistent to a topic", msg: Message{Topic: "orders/new", Persistent: true, Payload: []byte(`{"id":2}`)}},
		{name: "direct to a topic spools to subscribed queues", msg: Message{Topic: "orders/direct", Payload: []byte("direct"),
			UserProperties: map[string]string{"k": "v"}}},
		{name: "empty payload with properties", msg: Message{Queue: "q1", UserProperties: map[string]string{"only": "props"}}},
	}
	rcv := startReceiver(t, svc, resource.QueueDurableExclusive("q1"), nil)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, err := b.Publish("default", tc.msg)
			require.NoError(t, err)
			require.Equal(t, 1, n)
			in := receive(t, rcv)
			require.NoError(t, rcv.Ack(in))
			payload, _ := in.GetPayloadAsBytes()
			require.Equal(t, string(tc.msg.Payload), string(payload))
			for _, attr := range []struct {
				want string
				get  func() (string, bool)
			}{
				{tc.msg.CorrelationID, in.GetCorrelationID}, {tc.msg.ApplicationMessageID, in.GetApplicationMessageID},
				{tc.msg.ApplicationMessageType, in.GetApplicationMessageType},
			} {
				got, ok := attr.get()
				require.Equal(t, attr.want != "", ok)
				require.Equal(t, attr.want, got)
			}
			props := map[string]string{}
			for k, v := range in.GetProperties() {
				props[k] = v.(string)
			}
			if tc.msg.UserProperties == nil {
				require.Empty(t, props)
			} else {
				require.Equal(t, tc.msg.UserProperties, props)
			}
			if tc.msg.Priority > 0 {
				prio, ok := in.GetPriority()
				require.True(t, ok)
				require.Equal(t, tc.msg.Priority, prio)
			}
			if tc.msg.TTL > 0 {
				require.Regexp(t, `TimeToLive:\s+60000`, in.String())
				require.Contains(t, in.String(), "DMQ Eligible")
			}
		})
	}
}

func TestPublishDirectReachesSubscriber(t *testing.T) {
	b := newBroker(t)
	svc := connect(t, b, nil)
	rcv, err := svc.CreateDirectMessageReceiverBuilder().WithSubscriptions(resource.TopicSubscriptionOf("news/>")).Build()
	require.NoError(t, err)
	require.NoError(t, rcv.Start())
	t.Cleanup(func() { _ = rcv.Terminate(time.Second) })
	n, err := b.Publish("default", Message{Topic: "news/today", Payload: []byte("hello"), CorrelationID: "c"})
	require.NoError(t, err)
	require.Zero(t, n, "no queue subscribes to news/>")
	var in message.InboundMessage
	in, err = rcv.ReceiveMessage(5 * time.Second)
	require.NoError(t, err)
	payload, _ := in.GetPayloadAsBytes()
	require.Equal(t, "hello", string(payload))
	require.Equal(t, "news/today", in.GetDestinationName())
	cid, _ := in.GetCorrelationID()
	require.Equal(t, "c", cid)
}

func TestPublishRefusals(t *testing.T) {
	b := newBroker(t)
	tests := []struct {
		name string
		vpn  string
		msg  Message
		want string
	}{
		{name: "no destination", vpn: "default", msg: Message{}, want: "exactly one of topic and queue"},
		{name: "two destinations", vpn: "default", msg: Message{Topic: "a", Queue: "q1"}, want: "exactly one of topic and queue"},
		{name: "bad priority", vpn: "default", msg: Message{Topic: "a", Priority: 300}, want: "priority 300"},
		{name: "unknown queue", vpn: "default", msg: Message{Queue: "nope"}, want: "Queue Not Found"},
		{name: "unknown vpn", vpn: "other", msg: Message{Topic: "a"}, want: ErrUnknownVPN.Error()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := b.Publish(tc.vpn, tc.msg)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestEncodeBinaryMetadataAsTheGoClient(t *testing.T) {
	// What the Go client v1.10 sent for a message with correlation id c1,
	// application message id m1 and type t1.
	fromClient := []byte{
		0x01, 0x00, 0x00, 0x00, 0x35, 0x2f, 0x00, 0x00, 0x00, 0x35, 0x18, 0x04, 0x07, 0x00, 0x2b, 0x00,
		0x00, 0x00, 0x2c, 0x1c, 0x04, 0x68, 0x00, 0x2b, 0x00, 0x00, 0x00, 0x23, 0x1c, 0x05, 0x63, 0x69,
		0x00, 0x1c, 0x05, 0x63, 0x31, 0x00, 0x1c, 0x05, 0x6d, 0x69, 0x00, 0x1c, 0x05, 0x6d, 0x31, 0x00,
		0x1c, 0x05, 0x6d, 0x74, 0x00, 0x1c, 0x05, 0x74, 0x31, 0x00,
	}
	headers := map[string]string{"ci": "c1", "mi": "m1", "mt": "t1"}
	require.Equal(t, fromClient, encodeBinaryMetadata(headers, nil))

	props := map[string]string{"k": "v", "long": string(make([]byte, 300))}
	h, p := binaryMetadata(encodeBinaryMetadata(headers, props))
	require.Equal(t, map[string]any{"ci": "c1", "mi": "m1", "mt": "t1"}, h)
	require.Equal(t, map[string]any{"k": "v", "long": string(make([]byte, 300))}, p)
	require.Nil(t, encodeBinaryMetadata(nil, nil))
}
