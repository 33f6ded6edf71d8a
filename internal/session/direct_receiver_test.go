package session

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace/resource"
)

// The direct receiver takes its batches from the client's own buffer: what
// waits there is handed over at once, up to the batch bound, in order; a
// read with nothing waiting ends with its context; Close ends a read that
// waits and every read after it.
func TestDirectReceiverTakesWaitingMessages(t *testing.T) {
	f := newRxFixture(t)
	r, err := f.sess.NewDirectReceiver(t.Context(), DirectReceiverConfig{Subscriptions: []string{"dr/>"}})
	require.NoError(t, err)
	require.NotNil(t, r.backlog, "the client's buffer must be readable (ccsmp.DirectBacklogOf) on the linked client")

	pub, err := f.svc.CreateDirectMessagePublisherBuilder().Build()
	require.NoError(t, err)
	require.NoError(t, pub.Start())
	t.Cleanup(func() { _ = pub.Terminate(time.Second) })
	const n = 100
	for i := range n {
		require.NoError(t, pub.PublishBytes(fmt.Appendf(nil, "m%d", i), resource.TopicOf("dr/a")))
	}
	// The broker offers no signal for what a consumer's client holds: poll
	// its buffer until the whole burst is there.
	require.Eventually(t, func() bool { return r.backlog() == n }, 10*time.Second, time.Millisecond)

	var got []string
	for _, want := range []int{64, n - 64} {
		ins, err := r.ReceiveBatch(t.Context(), nil, 64)
		require.NoError(t, err)
		require.Len(t, ins, want)
		for _, in := range ins {
			got = append(got, string(in.Payload))
		}
	}
	for i, p := range got {
		require.Equal(t, fmt.Sprintf("m%d", i), p)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	ins, err := r.ReceiveBatch(ctx, nil, 64)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Empty(t, ins)

	done := make(chan error, 1)
	go func() {
		_, err := r.ReceiveBatch(t.Context(), nil, 64)
		done <- err
	}()
	require.NoError(t, r.Close(t.Context()))
	select {
	case err := <-done:
		require.ErrorIs(t, err, ErrReceiverClosed)
	case <-time.After(5 * time.Second):
		t.Fatal("a waiting read did not end with Close")
	}
	_, err = r.ReceiveBatch(t.Context(), nil, 64)
	require.ErrorIs(t, err, ErrReceiverClosed)
}

// Recycle keeps a message for the next conversion unless one of its string
// attributes lives in the message's own storage; a reused message's
// earlier attribute values, kept by the caller, are not touched.
func TestDirectReceiverRecyclesMessages(t *testing.T) {
	f := newRxFixture(t)
	r, err := f.sess.NewDirectReceiver(t.Context(), DirectReceiverConfig{Subscriptions: []string{"rc/>"}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close(context.Background()) })
	pub, err := f.svc.CreateDirectMessagePublisherBuilder().Build()
	require.NoError(t, err)
	require.NoError(t, pub.Start())
	t.Cleanup(func() { _ = pub.Terminate(time.Second) })
	send := func(body, corr string) {
		b := f.svc.MessageBuilder()
		if corr != "" {
			b = b.WithCorrelationID(corr)
		}
		msg, err := b.BuildWithByteArrayPayload([]byte(body))
		require.NoError(t, err)
		require.NoError(t, pub.Publish(msg, resource.TopicOf("rc/"+body)))
	}
	receive := func() *Inbound {
		ins, err := r.ReceiveBatch(t.Context(), nil, 1)
		require.NoError(t, err)
		require.Len(t, ins, 1)
		return ins[0]
	}

	send("a", "corr-a")
	a := receive()
	aMeta := metaMap(a.Meta)
	require.Equal(t, "corr-a", aMeta[MetaCorrelationID])
	r.Recycle([]*Inbound{a})
	require.Empty(t, r.spare, "a message whose correlation id lives in its own storage is not reused")

	send("b", "")
	b := receive()
	bMeta, bPayload := metaMap(b.Meta), b.Payload
	r.Recycle([]*Inbound{b})
	require.Len(t, r.spare, 1)

	send("c", "corr-c")
	c := receive()
	require.Same(t, b, c, "the recycled message is converted into")
	require.Equal(t, "c", string(c.Payload))
	require.Equal(t, "corr-c", metaMap(c.Meta)[MetaCorrelationID])
	require.Equal(t, "b", string(bPayload), "a payload handed out stays")
	require.Equal(t, "rc/b", bMeta[MetaDestination], "attribute values handed out stay")
	require.Equal(t, "corr-a", aMeta[MetaCorrelationID])
}
