package solacetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/config"
	"solace.dev/go/messaging/pkg/solace/resource"
	"solace.dev/go/messaging/pkg/solace/subcode"
)

func TestSelectorEvaluation(t *testing.T) {
	env := selEnv(func(name string) any {
		return map[string]any{
			"color": "red", "n": int64(5), "f": 2.5, "ok": true, "name": "order_42%",
		}[name]
	})
	tests := []struct {
		sel  string
		want bool
	}{
		{"color = 'red'", true},
		{"color <> 'red'", false},
		{"color = 'blue' OR n > 4", true},
		{"color = 'red' AND n > 5", false},
		{"n >= 5 AND n <= 5", true},
		{"n BETWEEN 1 AND 10", true},
		{"n NOT BETWEEN 1 AND 10", false},
		{"f > 2", true},
		{"n * 2 = 10", true},
		{"n / 2 = 2", true},
		{"-n < 0", true},
		{"n + f = 7.5", true},
		{"color IN ('green', 'red')", true},
		{"color NOT IN ('green', 'red')", false},
		{"color LIKE 'r%'", true},
		{"color LIKE '_ed'", true},
		{"color LIKE 'r_'", false},
		{"name LIKE 'order\\_42\\%' ESCAPE '\\'", true},
		{"name LIKE 'orderx42%' ESCAPE 'x'", false},
		{"color NOT LIKE 'b%'", true},
		{"missing IS NULL", true},
		{"color IS NOT NULL", true},
		{"missing = 'x'", false},
		{"NOT (missing = 'x')", false}, // unknown stays unknown
		{"missing = 'x' OR ok", true},
		{"ok = TRUE", true},
		{"ok", true},
		{"color = 5", false}, // type mismatch is unknown
		{"color > 'a'", false},
		{"(color = 'red' OR n = 1) AND NOT ok = FALSE", true},
		{"color = 'it''s'", false},
	}
	for _, tc := range tests {
		s, err := compileSelector(tc.sel)
		require.NoError(t, err, tc.sel)
		v, _ := s.root(env).(bool)
		require.Equal(t, tc.want, v, tc.sel)
	}
	for _, bad := range []string{"", "color =", "color = 'x", "n BETWEEN 1", "x IN (1, 2)", "a LIKE 5", "a IS 5", "(a = 1", "a = 1 b", "a # 1"} {
		_, err := compileSelector(bad)
		require.Error(t, err, bad)
	}
}

func TestSelectorThroughClient(t *testing.T) {
	b := newBroker(t)
	svc := connect(t, b, nil)
	pub := startPublisher(t, svc)
	send := func(payload, color string, n int32, corr string) {
		msg, err := svc.MessageBuilder().WithCorrelationID(corr).
			FromConfigurationProvider(config.MessagePropertyMap{"color": color, "n": n}).
			BuildWithByteArrayPayload([]byte(payload))
		require.NoError(t, err)
		require.NoError(t, pub.PublishAwaitAcknowledgement(msg, resource.TopicOf("orders/s"), 5*time.Second, nil))
	}
	send("red-1", "red", 1, "c1")
	send("blue-2", "blue", 2, "c2")
	send("red-3", "red", 3, "c3")
	send("red-4", "red", 4, "special")

	rcv := startReceiver(t, svc, resource.QueueDurableExclusive("q1"), func(bld solace.PersistentMessageReceiverBuilder) {
		bld.WithMessageSelector("color = 'red' AND n > 1 AND JMSCorrelationID <> 'special'")
	})
	m := receive(t, rcv)
	require.Equal(t, "red-3", payloadOf(t, m))
	require.NoError(t, rcv.Ack(m))
	_, err := rcv.ReceiveMessage(200 * time.Millisecond)
	require.Error(t, err, "nothing else matches")
	require.Eventually(t, func() bool {
		msgs, _ := b.QueueMessages("default", "q1")
		return len(msgs) == 3
	}, 5*time.Second, 10*time.Millisecond, "unselected messages stay queued")

	bad, err := svc.CreatePersistentMessageReceiverBuilder().WithMessageSelector("color = ").Build(resource.QueueDurableNonExclusive("q1"))
	require.NoError(t, err)
	err = bad.Start()
	var nerr *solace.NativeError
	require.ErrorAs(t, err, &nerr)
	require.Equal(t, subcode.InvalidSelector, nerr.SubCode(), err.Error())
}
