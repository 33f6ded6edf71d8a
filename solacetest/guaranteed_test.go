package solacetest

import (
	"testing"

	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace/resource"
)

func TestPersistentPublishBindReceiveAck(t *testing.T) {
	b := newBroker(t)
	svc := connect(t, b, nil)
	pub := startPublisher(t, svc)
	publish(t, svc, pub, "orders/eu/1", "m1")
	publish(t, svc, pub, "#P2P/QUE/q1", "m2")
	publish(t, svc, pub, "other/topic", "m3") // matches no queue: acked, not spooled

	msgs, err := b.QueueMessages("default", "q1")
	require.NoError(t, err)
	require.Equal(t, [][]byte{[]byte("m1"), []byte("m2")}, msgs)
	require.Equal(t, 1, b.PublishedCount("orders/eu/1"))

	rcv := startReceiver(t, svc, resource.QueueDurableExclusive("q1"), nil)
	for _, want := range []string{"m1", "m2"} {
		msg := receive(t, rcv)
		require.Equal(t, want, payloadOf(t, msg))
		require.False(t, msg.IsRedelivered())
		require.NoError(t, rcv.Ack(msg))
	}
	require.Eventually(t, func() bool {
		_, st, err := b.Queue("default", "q1")
		return err == nil && st.SpooledMsgCount == 0 && st.Unacked == 0
	}, 5e9, 1e7)
}
