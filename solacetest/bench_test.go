package solacetest

import (
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/message"
	"solace.dev/go/messaging/pkg/solace/resource"
)

// These benchmarks drive the broker through the real client so that we know
// it is never the bottleneck of plugin benchmarks. Run with
//
//	go test -run '^$' -bench . -benchtime 20000x ./solacetest/

// BenchmarkQueueConsume spools b.N messages, then times one client-ack
// consumer draining them.
func BenchmarkQueueConsume(b *testing.B) {
	br := newBroker(b)
	svc := connect(b, br, nil)
	pub, err := svc.CreatePersistentMessagePublisherBuilder().OnBackPressureWait(10000).Build()
	require.NoError(b, err)
	require.NoError(b, pub.Start())
	b.Cleanup(func() { _ = pub.Terminate(time.Second) })
	acked := make(chan error, b.N)
	pub.SetMessagePublishReceiptListener(func(r solace.PublishReceipt) { acked <- r.GetError() })
	for i := range b.N {
		msg, err := svc.MessageBuilder().BuildWithByteArrayPayload([]byte(strconv.Itoa(i)))
		require.NoError(b, err)
		require.NoError(b, pub.Publish(msg, resource.TopicOf("orders/bench"), nil, nil))
	}
	for range b.N {
		require.NoError(b, <-acked)
	}

	rcv, err := svc.CreatePersistentMessageReceiverBuilder().Build(resource.QueueDurableExclusive("q1"))
	require.NoError(b, err)
	b.Cleanup(func() { _ = rcv.Terminate(time.Second) })
	done := make(chan struct{})
	var n atomic.Int64
	b.ResetTimer()
	start := time.Now()
	require.NoError(b, rcv.ReceiveAsync(func(m message.InboundMessage) {
		_ = rcv.Ack(m)
		if n.Add(1) == int64(b.N) {
			close(done)
		}
	}))
	require.NoError(b, rcv.Start())
	select {
	case <-done:
	case <-time.After(5 * time.Minute):
		b.Fatalf("consumed %d of %d", n.Load(), b.N)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
}
