package session

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace"

	"github.com/connect-solace/connect-solace/solacetest"
)

func TestReceiverReportsStaleDrops(t *testing.T) {
	var reported int
	r := &rcv{onStale: func() { reported++ }, base: time.Now()}
	r.lostAt.Store(math.MinInt64)
	before := &dlv{Inbound: Inbound{at: r.since(time.Now())}}
	require.True(t, r.fresh(before), "nothing is stale before a loss")
	reported = 0
	lost := time.Now()
	after := &dlv{Inbound: Inbound{at: r.since(lost.Add(time.Millisecond))}}
	r.noteLoss(lost)
	r.noteLoss(lost.Add(-time.Second)) // an older event changes nothing
	require.False(t, r.fresh(before), "a message from before the loss is dropped")
	require.True(t, r.fresh(after), "a message dispatched after the loss is kept, even if the listener ran later")
	require.Equal(t, 1, reported)
}

// lateLossService delays the receiver's reconnection-attempt listener until
// gate closes, as a loaded machine does: the Go client runs listeners on its
// event goroutine, at some point after the event.
type lateLossService struct {
	solace.MessagingService
	gate chan struct{}
}

func (s lateLossService) AddReconnectionAttemptListener(l solace.ReconnectionAttemptListener) uint64 {
	return s.MessagingService.AddReconnectionAttemptListener(func(ev solace.ServiceEvent) {
		<-s.gate
		l(ev)
	})
}

// TestReceiverLateLossListenerStrandsNothing drops the connection while the
// receiver's loss listener is held back until the flow has been bound again
// and the broker's redeliveries are waiting in the receiver. Those copies
// belong to the new binding and must be handed out (and, settled, empty the
// queue); the copies from before the drop are the ones to drop. Tagging
// messages with a loss count bumped by the listener dropped the new copies
// too, and the broker held them as unacknowledged for good.
func TestReceiverLateLossListenerStrandsNothing(t *testing.T) {
	const n = 20
	f := newRxFixture(t, solacetest.QueueConfig{Name: "q1", Subscriptions: []string{"t"}})
	f.publish(t, "t", n, nil)
	gate := make(chan struct{})
	var open sync.Once
	release := func() { open.Do(func() { close(gate) }) }
	t.Cleanup(release)
	native, _ := probeNative(f.sess.svc)
	r, err := newReceiver[struct{}](t.Context(), lateLossService{f.sess.svc, gate}, ReceiverConfig{Queue: "q1"}, native, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close(context.Background()) })

	waiting := func() int {
		r.mu.Lock()
		defer r.mu.Unlock()
		return len(r.waiting) - r.head
	}
	first := receiveN(t, r, 5)
	require.Eventually(t, func() bool { return waiting() == n-5 }, 5*time.Second, 10*time.Millisecond)
	f.b.Faults().DropConnections()
	// The rebound flow's copies arrive while the listener is held back.
	require.Eventually(t, func() bool { return waiting() == 2*n-5 }, 10*time.Second, 10*time.Millisecond,
		"the broker's redeliveries should reach the receiver (stats %+v)", f.stats(t, "q1"))
	release()
	require.Eventually(t, func() bool { return r.stale(&first[0].Inbound) }, 5*time.Second, 5*time.Millisecond,
		"the listener records the loss")

	got := map[string]bool{}
	for len(got) < n {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		in, err := r.Receive(ctx)
		cancel()
		require.NoError(t, err, "only %d of %d redelivered copies handed out; queue %+v", len(got), n, f.stats(t, "q1"))
		in.Read(nil)
		require.True(t, in.Redelivered, "%s: copies from before the drop must be dropped", in.Payload)
		require.False(t, got[string(in.Payload)], "%s handed out twice", in.Payload)
		got[string(in.Payload)] = true
		require.NoError(t, r.Settle(in, Accepted))
	}
	require.Eventually(t, func() bool { return f.stats(t, "q1").SpooledMsgCount == 0 }, 5*time.Second, 20*time.Millisecond)
}

// TestReceiverUnread gives a message back: it is handed out again before
// the ones still waiting, can be settled as usual, and after Close it is
// released instead.
func TestReceiverUnread(t *testing.T) {
	f := newRxFixture(t, solacetest.QueueConfig{Name: "q1", Subscriptions: []string{"t"}})
	f.publish(t, "t", 3, nil)
	r, err := NewReceiver[struct{}](t.Context(), f.sess, ReceiverConfig{Queue: "q1"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close(context.Background()) })

	first := receiveN(t, r, 1)[0]
	require.Equal(t, "m0", string(first.Payload))
	r.Unread(first)
	var got []string
	for _, in := range receiveN(t, r, 3) {
		got = append(got, string(in.Payload))
		require.NoError(t, r.Settle(in, Accepted))
	}
	require.Equal(t, []string{"m0", "m1", "m2"}, got)
	require.Eventually(t, func() bool { return f.stats(t, "q1").SpooledMsgCount == 0 }, 5*time.Second, 20*time.Millisecond)

	f.publish(t, "t", 1, nil)
	last := receiveN(t, r, 1)[0]
	require.NoError(t, r.Close(t.Context()))
	r.Unread(last)
	_, ok := r.TryReceive()
	require.False(t, ok, "a closed receiver hands nothing out")
}

// TestReceiverSettleBatchMixedStale settles, in one SettleBatch call of more
// than one native chunk, the messages handed out before a connection drop
// interleaved with their redelivered copies: the copies are settled (the
// queue empties), a failure is only ever a stale one, and every message of
// the batch is freed, the stale ones as much as the rest.
func TestReceiverSettleBatchMixedStale(t *testing.T) {
	f := newRxFixture(t, solacetest.QueueConfig{Name: "q-mixed", Subscriptions: []string{"mixed"}})
	const n = settleChunk/2 + 8
	f.publish(t, "mixed", n, nil)
	r, err := NewReceiver[struct{}](t.Context(), f.sess, ReceiverConfig{Queue: "q-mixed"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close(context.Background()) })
	old := receiveN(t, r, n)
	f.b.Faults().DropConnections()
	require.Eventually(t, func() bool { return f.reconnects.Load() >= 1 }, 10*time.Second, 20*time.Millisecond)
	copies := receiveN(t, r, n)
	mixed := make([]*dlv, 0, 2*n)
	for i := range n {
		require.True(t, copies[i].Redelivered, "%s is a redelivered copy", copies[i].Payload)
		mixed = append(mixed, old[i], copies[i])
	}
	require.Greater(t, len(mixed), settleChunk)
	for _, err := range r.SettleBatch(mixed, Accepted) {
		require.ErrorIs(t, err, ErrStaleFlow)
	}
	for i, in := range mixed {
		require.True(t, in.msg.(interface{ IsDisposed() bool }).IsDisposed(), "message %d freed", i)
	}
	require.Eventually(t, func() bool {
		st := f.stats(t, "q-mixed")
		return st.SpooledMsgCount == 0 && st.Unacked == 0
	}, 5*time.Second, 20*time.Millisecond, "every copy settled")
}
