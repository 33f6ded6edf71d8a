package solacetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace/config"
	"solace.dev/go/messaging/pkg/solace/message"
	"solace.dev/go/messaging/pkg/solace/resource"
)

func TestAttributesRoundTrip(t *testing.T) {
	b := newBroker(t)
	svc := connect(t, b, config.ServicePropertyMap{config.ServicePropertyGenerateSendTimestamps: true})
	pub := startPublisher(t, svc)
	userProps := config.MessagePropertyMap{
		"p-string": "text",
		"p-int8":   int8(-8),
		"p-int16":  int16(-16),
		"p-int32":  int32(-32),
		"p-int64":  int64(-64),
		"p-uint8":  uint8(8),
		"p-uint16": uint16(16),
		"p-uint32": uint32(32),
		"p-uint64": uint64(64),
		"p-bool":   true,
		"p-float":  float32(1.5),
		"p-double": 2.25,
		"p-bytes":  []byte{0, 1, 2},
		"p-char":   'c',
	}
	msg, err := svc.MessageBuilder().
		WithApplicationMessageID("app-id-1").
		WithCorrelationID("corr-1").
		WithSenderID("sender-1").
		WithSequenceNumber(42).
		WithPriority(7).
		WithApplicationMessageType("order.created").
		WithHTTPContentHeader("application/json", "gzip").
		WithProperty(config.MessagePropertyClassOfService, 2).
		WithProperty(config.MessagePropertyPersistentTimeToLive, 60000).
		WithProperty(config.MessagePropertyPersistentDMQEligible, true).
		FromConfigurationProvider(userProps).
		BuildWithStringPayload(`{"id":1}`)
	require.NoError(t, err)
	before := time.Now().Add(-time.Second)
	require.NoError(t, pub.PublishAwaitAcknowledgement(msg, resource.TopicOf("orders/attr"), 5*time.Second, nil))

	msgs, err := b.QueueMessages("default", "q1")
	require.NoError(t, err)
	require.Equal(t, [][]byte{[]byte(`{"id":1}`)}, msgs, "QueueMessages unwraps string payloads")

	rcv := startReceiver(t, svc, resource.QueueDurableExclusive("q1"), nil)
	in := receive(t, rcv)
	defer func() { require.NoError(t, rcv.Ack(in)) }()

	payload, ok := in.GetPayloadAsString()
	require.True(t, ok)
	require.Equal(t, `{"id":1}`, payload)
	require.Equal(t, "orders/attr", in.GetDestinationName())
	str := func(v string, ok bool) string { require.True(t, ok); return v }
	require.Equal(t, "app-id-1", str(in.GetApplicationMessageID()))
	require.Equal(t, "corr-1", str(in.GetCorrelationID()))
	require.Equal(t, "sender-1", str(in.GetSenderID()))
	require.Equal(t, "order.created", str(in.GetApplicationMessageType()))
	require.Equal(t, "application/json", str(in.GetHTTPContentType()))
	require.Equal(t, "gzip", str(in.GetHTTPContentEncoding()))
	seq, ok := in.GetSequenceNumber()
	require.True(t, ok)
	require.EqualValues(t, 42, seq)
	prio, ok := in.GetPriority()
	require.True(t, ok)
	require.Equal(t, 7, prio)
	require.Equal(t, 2, in.GetClassOfService())
	ts, ok := in.GetSenderTimestamp()
	require.True(t, ok)
	require.True(t, ts.After(before) && ts.Before(time.Now().Add(time.Second)), "sender timestamp %v", ts)
	_, ok = in.GetReplicationGroupMessageID()
	require.True(t, ok)
	dump := in.String()
	require.Contains(t, dump, "DMQ Eligible")
	require.Regexp(t, `TimeToLive:\s+60000`, dump)

	props := in.GetProperties()
	for k, want := range userProps {
		got, ok := props[string(k)]
		require.True(t, ok, "property %s", k)
		require.EqualValues(t, want, got, "property %s", k)
	}
	_ = message.InboundMessage(in)
}

func TestTTLExpiry(t *testing.T) {
	tests := []struct {
		name        string
		respectTTL  bool
		dmqEligible bool
		wantQ1      int
		wantDMQ     int
	}{
		{name: "expired to dmq", respectTTL: true, dmqEligible: true, wantDMQ: 1},
		{name: "expired and dropped when not dmq-eligible", respectTTL: true},
		{name: "kept when the queue ignores ttl", dmqEligible: true, wantQ1: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := NewTestBroker(t, Config{})
			require.NoError(t, b.CreateQueue("default", QueueConfig{Name: "dmq"}))
			require.NoError(t, b.CreateQueue("default", QueueConfig{Name: "q1", Subscriptions: []string{"ttl/>"},
				RespectTTL: tc.respectTTL, DeadMsgQueue: "dmq"}))
			svc := connect(t, b, nil)
			pub := startPublisher(t, svc)
			msg, err := svc.MessageBuilder().
				WithProperty(config.MessagePropertyPersistentTimeToLive, 100).
				WithProperty(config.MessagePropertyPersistentDMQEligible, tc.dmqEligible).
				BuildWithByteArrayPayload([]byte("short-lived"))
			require.NoError(t, err)
			require.NoError(t, pub.PublishAwaitAcknowledgement(msg, resource.TopicOf("ttl/1"), 5*time.Second, nil))
			publish(t, svc, pub, "ttl/2", "marker") // no TTL: never expires
			count := func(q string) int {
				_, st, err := b.Queue("default", q)
				require.NoError(t, err)
				return st.SpooledMsgCount
			}
			require.Eventually(t, func() bool {
				return count("q1") == tc.wantQ1+1 && count("dmq") == tc.wantDMQ
			}, 5*time.Second, 20*time.Millisecond)
			if tc.wantQ1 == 1 {
				// Give the janitor time to (wrongly) expire it before checking again.
				time.Sleep(300 * time.Millisecond)
				require.Equal(t, 2, count("q1"))
			}
		})
	}
}
