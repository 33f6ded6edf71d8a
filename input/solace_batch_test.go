package input

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/solacetest"
)

// TestSolaceInputHandsOverWaitingMessages reads with the defaults: a lone
// message is handed over at once and alone, and a backlog the broker has
// already delivered is handed over in batches of what is waiting, at most
// batch_size each, so that a busy pipeline pays its costs per batch rather
// than per message.
func TestSolaceInputHandsOverWaitingMessages(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	require.NoError(t, b.CreateQueue("default", solacetest.QueueConfig{Name: "waiting", Subscriptions: []string{"waiting"}}))
	pub := newSiPublisher(t, b)
	r := newSiReader(t, b, "queue: waiting\n")

	pub.send(t, "waiting", []string{"lone"}, nil)
	batch, ack := readBatch(t, r)
	require.Len(t, batch, 1)
	require.NoError(t, ack(t.Context(), nil))

	const n = 100
	pub.send(t, "waiting", siPayloads("m", n), nil)
	// The broker offers no signal for what a consumer's client holds: poll
	// until it has delivered the whole backlog to the input.
	require.Eventually(t, func() bool { return stats(t, b, "waiting").Unacked == n }, 10*time.Second, time.Millisecond)
	var sizes []int
	for got := 0; got < n; {
		batch, ack := readBatch(t, r)
		require.LessOrEqual(t, len(batch), siDefaultBatchSize)
		sizes = append(sizes, len(batch))
		got += len(batch)
		require.NoError(t, ack(t.Context(), nil))
	}
	require.Less(t, len(sizes), n, "every read handed over one message: %v", sizes)
	waitDepth(t, b, "waiting", 0)
}
