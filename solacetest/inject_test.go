package solacetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace/resource"
)

// The real client reads injected messages as direct messages with the
// payload and topic given.
func TestInjectDirect(t *testing.T) {
	b := NewTestBroker(t, Config{})
	svc := connect(t, b, nil)
	rcv, err := svc.CreateDirectMessageReceiverBuilder().WithSubscriptions(resource.TopicSubscriptionOf("inj/>")).Build()
	require.NoError(t, err)
	require.NoError(t, rcv.Start())
	t.Cleanup(func() { _ = rcv.Terminate(time.Second) })

	require.NoError(t, b.InjectDirect("default", "inj/x", []byte("payload"), 3))
	require.Equal(t, 3, b.PublishedCount("inj/x"))
	for range 3 {
		m, err := rcv.ReceiveMessage(5 * time.Second)
		require.NoError(t, err)
		p, ok := m.GetPayloadAsBytes()
		require.True(t, ok)
		require.Equal(t, "payload", string(p))
		require.Equal(t, "inj/x", m.GetDestinationName())
	}
	require.Error(t, b.InjectDirect("nope", "inj/x", nil, 1))
}
