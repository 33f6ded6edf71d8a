package session

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace"

	"github.com/connect-solace/connect-solace/solacetest"
)

// TestPublisherFreesConfirmedMessages: the client's copy of every published
// message comes back with its receipt and must be freed there, not left to
// a finalizer (issue 11 finding 7: the producer's RSS grew with the message
// count while the Go heap stayed small).
func TestPublisherFreesConfirmedMessages(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	require.NoError(t, b.CreateQueue("default", solacetest.QueueConfig{Name: "mq"}))
	s, err := Connect(t.Context(), testConfig(b), nil, Events{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close(t.Context()) })
	pub, err := NewPublisher(s, PublisherOptions{Persistent: true, BackPressure: BackPressure{BufferSize: 100}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = pub.Close(t.Context()) })

	var receipts, disposed atomic.Int64
	pub.persistent.SetMessagePublishReceiptListener(func(r solace.PublishReceipt) {
		pub.onReceipt(r)
		receipts.Add(1)
		if m, ok := r.GetMessage().(interface{ IsDisposed() bool }); ok && m.IsDisposed() {
			disposed.Add(1)
		}
	})
	msgs := make([]*Outbound, 500)
	for i := range msgs {
		msgs[i] = &Outbound{Payload: []byte("m"), Destination: Destination{Name: "mq", Queue: true}}
	}
	for i, r := range pub.PublishBatch(t.Context(), msgs) {
		require.NoError(t, r.Err, "message %d", i)
	}
	// The listener counts after onReceipt returned, possibly after
	// PublishBatch did.
	require.Eventually(t, func() bool { return receipts.Load() == int64(len(msgs)) }, 5*time.Second, time.Millisecond)
	require.Equal(t, receipts.Load(), disposed.Load(), "every confirmed message's copy is freed when its receipt arrives")
}
