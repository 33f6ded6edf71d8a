package input

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/redpanda-data/benthos/v4/public/service/integration"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/jms"
	"github.com/connect-solace/connect-solace/internal/testkit/jmskit"
)

// jmsBridgeOutput is the jms output configured as one hop of a jms → jms
// bridge: every header from the input's metadata, every other metadata key
// (not starting with jms_) as a property.
const jmsBridgeOutput = `
message_type: '%s'
delivery_mode: persistent
priority: '${! meta("jms_priority") }'
message_id: '${! meta("jms_message_id") }'
correlation_id: '${! meta("jms_correlation_id").or("") }'
jms_type: '${! meta("jms_type").or("") }'
reply_to: '${! meta("jms_reply_to").or("") }'
reply_to_type: topic
group_id: '${! meta("jms_group_id").or("") }'
group_sequence: '${! meta("jms_group_seq").or("") }'
metadata:
  include_patterns: [ '^([^j]|j[^m]|jm[^s]|jms[^_])' ]
`

// sendThroughOutput runs the jms output in a stream and writes msgs.
func sendThroughOutput(t *testing.T, b jmskit.Broker, outYAML string, msgs ...*service.Message) {
	t.Helper()
	sb := service.NewStreamBuilder()
	require.NoError(t, sb.SetLoggerYAML("level: none"))
	require.NoError(t, sb.AddOutputYAML("jms:\n"+indent(b.YAML()+outYAML)))
	produce, err := sb.AddProducerFunc()
	require.NoError(t, err)
	stream, err := sb.Build()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- stream.Run(ctx) }()
	for _, m := range msgs {
		require.NoError(t, produce(ctx, m))
	}
	require.NoError(t, stream.Stop(ctx))
	<-done
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ") + "\n"
}

// TestIntegrationJMSRoundTrip sends text, bytes and map messages with every
// header and a property of every JMS type through the jms output to
// RabbitMQ and reads them with the jms input: headers and typed properties
// arrive as sent. The messages then take a second hop, jms input metadata →
// jms output (configured as a bridge) → broker → jms input, and must arrive
// with the same headers and properties again: the bridge is lossless.
func TestIntegrationJMSRoundTrip(t *testing.T) {
	integration.CheckSkip(t)
	b := jmskit.TestBroker(t)
	props := map[string]any{
		"p_str": "s", "p_bool": true, "p_int8": int8(-8), "p_int16": int16(-16),
		"p_int32": int32(-32), "p_int64": int64(1) << 40, "p_float32": float32(0.25), "p_float64": 1.5,
	}
	for _, tc := range []struct {
		msgType, payload, want string
	}{
		{"text", "héllo", "héllo"},
		{"bytes", "\x00\x01\xff", "\x00\x01\xff"},
		{"map", `{"a":1,"b":"x","c":1.5,"d":true}`, `{"a":1,"b":"x","c":1.5,"d":true}`},
	} {
		t.Run(tc.msgType, func(t *testing.T) {
			q1, q2 := jmskit.RandName("jmsin-rt1-"), jmskit.RandName("jmsin-rt2-")
			msg := service.NewMessage([]byte(tc.payload))
			for k, v := range props {
				msg.MetaSetMut(k, v)
			}
			sendThroughOutput(t, b, fmt.Sprintf(`queue: %s
message_type: %s
priority: "7"
ttl: 1m
message_id: order-1
correlation_id: corr-1
jms_type: OrderCreated
reply_to: replies
reply_to_type: topic
group_id: g1
group_sequence: "3"
metadata:
  include_patterns: [ "^p_" ]
`, q1, tc.msgType), msg)

			r1 := newTestJMSReader(t, b.YAML()+"queue: "+q1+"\n", nil)
			connectReader(t, r1)
			got1, ack1 := readOne(t, r1)
			checkBody(t, tc.msgType, tc.want, got1)
			want := map[string]any{
				jms.MetaMessageID: "ID:order-1", jms.MetaCorrelationID: "corr-1", jms.MetaType: "OrderCreated",
				jms.MetaDeliveryMode: jms.DeliveryPersistent, jms.MetaPriority: int64(7),
				jms.MetaReplyTo: "replies", jms.MetaReplyToType: "topic",
				jms.MetaGroupID: "g1", jms.MetaGroupSeq: int64(3),
				jms.MetaDestination: q1, jms.MetaDestinationType: "queue",
				jms.MetaRedelivered: false, jms.MetaDeliveryCount: int64(1), jms.MetaMessageType: tc.msgType,
			}
			for k, v := range props {
				want[k] = v
			}
			for k, v := range want {
				assert.Equal(t, v, meta(t, got1, k), "%s after one hop", k)
			}
			ts := meta(t, got1, jms.MetaTimestamp).(int64)
			assert.InDelta(t, time.Now().UnixMilli(), ts, 60000, "JMSTimestamp is the send time")
			assert.Equal(t, ts+60000, meta(t, got1, jms.MetaExpiration), "JMSExpiration is JMSTimestamp + ttl")
			_, hasErr := got1.MetaGetMut(jms.MetaDecodeError)
			assert.False(t, hasErr)

			// Second hop: the received message, metadata and all, through a
			// bridge output.
			sendThroughOutput(t, b, "queue: "+q2+"\n"+fmt.Sprintf(jmsBridgeOutput, tc.msgType), got1.Copy())
			require.NoError(t, ack1(t.Context(), nil))
			r2 := newTestJMSReader(t, b.YAML()+"queue: "+q2+"\n", nil)
			connectReader(t, r2)
			got2, ack2 := readOne(t, r2)
			checkBody(t, tc.msgType, tc.want, got2)
			want[jms.MetaDestination] = q2
			for k, v := range want {
				assert.Equal(t, v, meta(t, got2, k), "%s after the bridge", k)
			}
			require.NoError(t, ack2(t.Context(), nil))
		})
	}
}

func checkBody(t *testing.T, msgType, want string, m *service.Message) {
	t.Helper()
	if msgType == "map" {
		assert.JSONEq(t, want, body(t, m))
		return
	}
	assert.Equal(t, want, body(t, m))
}

// TestIntegrationJMSInputStreams runs Benthos's stream suite with the jms
// output and the jms input as the pair, over RabbitMQ.
func TestIntegrationJMSInputStreams(t *testing.T) {
	integration.CheckSkip(t)
	b := jmskit.TestBroker(t)
	template := jmsStreamsTemplate
	suite := integration.StreamTests(
		integration.StreamTestOpenClose(),
		integration.StreamTestMetadata(),
		integration.StreamTestSendBatch(10),
		integration.StreamTestSendBatches(10, 20, 4),
		integration.StreamTestStreamSequential(200),
		integration.StreamTestStreamParallel(200),
		integration.StreamTestStreamParallelLossy(200),
		integration.StreamTestStreamParallelLossyThroughReconnect(200),
	)
	b.RunStreamSuite(t, suite, template)
}

// jmsStreamsTemplate is the suite's config: the jms output sends to a
// per-test queue that the jms input consumes.
const jmsStreamsTemplate = `
output:
  jms:
    urls: [ $URL ]
    username: $USER
    password: $PASS
    queue: jmsin-stream-$ID
    max_in_flight: $MAX_IN_FLIGHT
    metadata:
      include_patterns: [ '.*' ]
    batching:
      count: $OUTPUT_BATCH_COUNT
      period: "$BATCH_PERIOD"
input:
  jms:
    urls: [ $URL ]
    username: $USER
    password: $PASS
    queue: jmsin-stream-$ID
    prefetch: 64
    nack_outcome: released
`
