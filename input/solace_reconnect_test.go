package input

// This file is the solace input's tests of connection loss, shutdown and
// reconnecting.

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/semp"
	"github.com/connect-solace/connect-solace/internal/testkit/componenttest"
	"github.com/connect-solace/connect-solace/internal/testkit/solacekit"
	"github.com/connect-solace/connect-solace/solacetest"
)

// TestSolaceInputConnectionDrop drops every connection twice while a
// consumer acks as it goes: not one message may be lost, and every broker
// redelivery must carry solace_redelivered, so each message arrives at most
// once without the flag (its first delivery). The unflagged copy may come
// after a flagged one: a copy the client had buffered before the drop can
// reach the pipeline after the broker's redelivery of it.
func TestSolaceInputConnectionDrop(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	createQueueSEMP(t, b, semp.Queue{QueueName: "q", AccessType: semp.AccessTypeNonExclusive}, "t")
	const n = 300
	newSiPublisher(t, b).send(t, "t", siPayloads("m", n), nil)
	r := newSiReader(t, b, "queue: q\nflows: 2\nbatch_size: 5\n")

	var mu sync.Mutex
	seen := map[string]int{}
	unflagged := map[string]int{}
	var pending sync.WaitGroup
	drops := 0
	deadline := time.Now().Add(30 * time.Second)
	for stats(t, b, "q").SpooledMsgCount > 0 {
		require.True(t, time.Now().Before(deadline), "stuck: %+v, %d distinct seen", stats(t, b, "q"), len(seen))
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		batch, ack, err := r.ReadBatch(ctx)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			continue
		}
		require.NoError(t, err)
		mu.Lock()
		for _, m := range batch {
			body, _ := m.AsBytes()
			p := string(body)
			if metaOf(t, m)["solace_redelivered"] != true {
				unflagged[p]++
			}
			seen[p]++
		}
		total := len(seen)
		mu.Unlock()
		// Ack asynchronously, as a pipeline does, some of them after the drop.
		pending.Add(1)
		go func() {
			defer pending.Done()
			assert.NoError(t, ack(context.Background(), nil))
		}()
		if (drops == 0 && total >= n/3) || (drops == 1 && total >= 2*n/3) {
			drops++
			b.Faults().DropConnections()
		}
	}
	pending.Wait()
	require.Equal(t, 2, drops)
	require.Len(t, seen, n, "every message must arrive")
	for p, c := range unflagged {
		require.Equal(t, 1, c, "%s arrived %d times without the redelivered flag", p, c)
	}
	waitDepth(t, b, "q", 0)
}

// TestSolaceInputShutdownInFlight closes the input while the pipeline holds
// unacked messages: none may be acked, all come back flagged.
func TestSolaceInputShutdownInFlight(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	createQueueSEMP(t, b, semp.Queue{QueueName: "q"}, "t")
	newSiPublisher(t, b).send(t, "t", siPayloads("m", 10), nil)
	r := newSiReader(t, b, "queue: q\nbatch_size: 4\n")

	batch1, ack1 := readBatch(t, r)
	batch2, ack2 := readBatch(t, r)
	require.NoError(t, ack1(t.Context(), nil))
	waitDepth(t, b, "q", 10-len(batch1))
	require.NoError(t, r.Close(t.Context()))
	// The pipeline finishes after the input closed: the ack must neither fail
	// nor reach the broker.
	require.NoError(t, ack2(t.Context(), nil))
	require.Eventually(t, func() bool {
		st := stats(t, b, "q")
		return st.Consumers == 0 && st.Unacked == 0
	}, 5*time.Second, 20*time.Millisecond)
	require.Equal(t, 10-len(batch1), stats(t, b, "q").SpooledMsgCount)

	r2 := newSiReader(t, b, "queue: q\nbatch_size: 10\n")
	inFlight := map[string]bool{}
	for _, m := range batch2 {
		body, _ := m.AsBytes()
		inFlight[string(body)] = true
	}
	got := 0
	for got < 10-len(batch1) {
		batch, ack := readBatch(t, r2)
		for _, m := range batch {
			body, _ := m.AsBytes()
			if inFlight[string(body)] {
				require.Equal(t, true, metaOf(t, m)["solace_redelivered"], string(body))
			}
		}
		got += len(batch)
		require.NoError(t, ack(t.Context(), nil))
	}
	waitDepth(t, b, "q", 0)
}

// TestSolaceInputSessionLostReconnects lets the client give up reconnecting:
// the input must report ErrNotConnected and come back on Connect.
func TestSolaceInputSessionLostReconnects(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	createQueueSEMP(t, b, semp.Queue{QueueName: "q"}, "t")
	pub := newSiPublisher(t, b)
	r := newSiReader(t, b, "queue: q\nreconnect_attempts: 0\n")
	pub.send(t, "t", []string{"one"}, nil)
	_, ack := readBatch(t, r)
	require.NoError(t, ack(t.Context(), nil))
	waitDepth(t, b, "q", 0)

	b.Faults().DropConnections()
	require.Eventually(t, func() bool {
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		_, _, err := r.ReadBatch(ctx)
		return errors.Is(err, service.ErrNotConnected)
	}, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, r.Connect(t.Context()))
	pub.send(t, "t", []string{"two"}, nil)
	batch, ack := readBatch(t, r)
	body, _ := batch[0].AsBytes()
	require.Equal(t, "two", string(body))
	require.NoError(t, ack(t.Context(), nil))
	waitDepth(t, b, "q", 0)
}

// TestSolaceInputStreamReconnectsByItself runs the input in a Benthos stream
// with client reconnection off: when the broker drops the connection and
// refuses logins for a while, the stream must reconnect on its own (Benthos
// calls Connect with backoff) and deliver everything, old and new.
func TestSolaceInputStreamReconnectsByItself(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	createQueueSEMP(t, b, semp.Queue{QueueName: "q"}, "t")
	pub := newSiPublisher(t, b)

	sb := service.NewStreamBuilder()
	require.NoError(t, sb.SetLoggerYAML("level: off"))
	require.NoError(t, sb.AddInputYAML("solace:\n"+componenttest.IndentYAML(solacekit.ConnectionYAML(b.SMFURL())+"reconnect_attempts: 0\nqueue: q\n")))
	var mu sync.Mutex
	got := map[string]int{}
	require.NoError(t, sb.AddConsumerFunc(func(_ context.Context, m *service.Message) error {
		body, _ := m.AsBytes()
		mu.Lock()
		got[string(body)]++
		mu.Unlock()
		return nil
	}))
	componenttest.RunStream(t, t.Context(), sb, 10*time.Second)
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(got)
	}

	pub.send(t, "t", siPayloads("before", 10), nil)
	require.Eventually(t, func() bool { return count() == 10 }, 10*time.Second, 10*time.Millisecond)

	b.Faults().RefuseLogins(1500 * time.Millisecond)
	b.Faults().DropConnections()
	pub.send(t, "t", siPayloads("after", 10), nil)
	require.Eventually(t, func() bool { return count() == 20 }, 30*time.Second, 10*time.Millisecond)
	waitDepth(t, b, "q", 0)
	mu.Lock()
	defer mu.Unlock()
	for _, p := range append(siPayloads("before", 10), siPayloads("after", 10)...) {
		require.Positive(t, got[p], p)
	}
}
