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
