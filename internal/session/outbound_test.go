package session

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace/config"
)

func TestDestinationTopic(t *testing.T) {
	assert.Equal(t, "a/b", Destination{Name: "a/b"}.Topic())
	assert.Equal(t, "#P2P/QUE/q1", Destination{Name: "q1", Queue: true}.Topic())
	assert.Equal(t, `queue "q1"`, Destination{Name: "q1", Queue: true}.String())
}

func TestOutboundProperties(t *testing.T) {
	prio, cos, dmq := 7, 1, false
	o := Outbound{
		ApplicationMessageID: "id1", CorrelationID: "c1", SenderID: "s1",
		Priority: &prio, ClassOfService: &cos, DMQEligible: &dmq, TTL: 1500 * time.Millisecond,
		PartitionKey: "pk", ReplyTo: "reply/topic",
		UserProperties: map[string]any{
			"i": int64(3), "f": 1.5, "b": true, "s": "x", "raw": []byte{1}, "n": 4,
			"solace.messaging.message.priority": int64(1), // must not override priority
		},
	}
	p := config.MessagePropertyMap{}
	require.NoError(t, o.properties(p))
	assert.Equal(t, config.MessagePropertyMap{
		config.MessagePropertyApplicationMessageID:       "id1",
		config.MessagePropertyCorrelationID:              "c1",
		config.MessagePropertySenderID:                   "s1",
		config.MessagePropertyPriority:                   7,
		config.MessagePropertyClassOfService:             1,
		config.MessagePropertyPersistentDMQEligible:      false,
		config.MessagePropertyPersistentTimeToLive:       int64(1500),
		config.MessageProperty(config.QueuePartitionKey): "pk",
		config.MessageProperty(ReplyToProperty):          "reply/topic",
		"i":                                              int64(3), "f": 1.5, "b": true, "s": "x", "raw": []byte{1}, "n": int64(4),
	}, p)

	assert.True(t, (&Outbound{}).plain(), "a plain message needs no property map")
	ack := &Outbound{AckImmediately: true}
	assert.False(t, ack.plain())
	p = config.MessagePropertyMap{}
	require.NoError(t, ack.properties(p))
	assert.Equal(t, config.MessagePropertyMap{config.MessagePropertyPersistentAckImmediately: true}, p)

	for _, bad := range []Outbound{{Priority: ptr(256)}, {ClassOfService: ptr(3)}, {TTL: -time.Second}} {
		assert.Error(t, bad.properties(config.MessagePropertyMap{}))
	}
}

func ptr[T any](v T) *T { return &v }

// TestUserPropertyValue pins the one conversion of user property values,
// the output's documented one: a nil value is sent as an empty string.
func TestUserPropertyValue(t *testing.T) {
	type custom struct{ A int }
	for _, tc := range []struct {
		in, want any
	}{
		{int64(1), int64(1)}, {1.5, 1.5}, {true, true}, {"s", "s"}, {[]byte{1}, []byte{1}},
		{3, int64(3)}, {int32(3), int64(3)}, {uint32(3), int64(3)}, {uint64(3), int64(3)},
		{int8(-3), int64(-3)}, {uint16(3), int64(3)},
		{uint64(1 << 63), "9223372036854775808"}, {float32(0.5), 0.5},
		{nil, ""}, {custom{A: 1}, "{1}"},
	} {
		assert.Equal(t, tc.want, userPropertyValue(tc.in), "%T %v", tc.in, tc.in)
	}
	p := config.MessagePropertyMap{}
	require.NoError(t, (&Outbound{UserProperties: map[string]any{"n": nil}}).properties(p))
	assert.Equal(t, config.MessagePropertyMap{"n": ""}, p)
}
