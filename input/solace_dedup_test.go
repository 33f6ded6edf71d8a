package input

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace"

	"github.com/connect-solace/connect-solace/internal/semp"
	"github.com/connect-solace/connect-solace/solacetest"
)

func TestDedupWindowBounds(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	tests := []struct {
		name     string
		size     int
		age      time.Duration
		add      []string
		addEvery time.Duration
		checkAt  time.Duration // after t0 + last add
		seen     []string
		unseen   []string
	}{
		{
			name: "size evicts oldest", size: 2,
			add: []string{"a", "b", "c"}, seen: []string{"b", "c"}, unseen: []string{"a"},
		},
		{
			name: "age evicts expired", age: 10 * time.Second, addEvery: 4 * time.Second,
			add: []string{"a", "b", "c"}, checkAt: 3 * time.Second,
			// a added at 0 s, b at 4 s, c at 8 s; checked at 11 s.
			seen: []string{"b", "c"}, unseen: []string{"a"},
		},
		{
			name: "both bounds, size binds first", size: 1, age: time.Hour,
			add: []string{"a", "b"}, seen: []string{"b"}, unseen: []string{"a"},
		},
		{
			name: "re-adding refreshes position", size: 2,
			add: []string{"a", "b", "a", "c"}, seen: []string{"a", "c"}, unseen: []string{"b"},
		},
		{
			name: "empty key is never a duplicate", size: 10,
			add: []string{""}, unseen: []string{""},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newDedupWindow(tc.size, tc.age)
			now := t0
			for i, k := range tc.add {
				if i > 0 {
					now = now.Add(tc.addEvery)
				}
				w.Add(k, now)
			}
			check := now.Add(tc.checkAt)
			for _, k := range tc.seen {
				require.True(t, w.Seen(k, check), "key %q should be in the window", k)
			}
			for _, k := range tc.unseen {
				require.False(t, w.Seen(k, check), "key %q should not be in the window", k)
			}
			if tc.size > 0 {
				require.LessOrEqual(t, w.Len(), tc.size)
			}
		})
	}
}

func TestDedupWindowConcurrent(t *testing.T) {
	w := newDedupWindow(1000, 0)
	done := make(chan struct{})
	for g := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 500 {
				k := fmt.Sprintf("%d-%d", g, i)
				w.Add(k, time.Now())
				_ = w.Seen(k, time.Now())
			}
		}()
	}
	for range 4 {
		<-done
	}
	require.Equal(t, 1000, w.Len())
}

// TestSolaceInputDedup covers a redelivery whose ack was lost with the
// connection, a republished copy, and a nacked message (not remembered).
func TestSolaceInputDedup(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	createQueueSEMP(t, b, semp.Queue{QueueName: "q"}, "t")
	pub := newSiPublisher(t, b)
	withID := func(i int, bld solace.OutboundMessageBuilder) solace.OutboundMessageBuilder {
		return bld.WithApplicationMessageID(fmt.Sprintf("id-%d", i))
	}
	pub.send(t, "t", []string{"a"}, withID)
	r, metrics := newSiReaderWithMetrics(t, b, "queue: q\ndeduplicate: true\ndedup_window: { size: 100 }\n")

	// The pipeline processes "a", but the connection drops first, so the
	// broker never sees the ack and redelivers "a".
	batch, ack := readBatch(t, r)
	require.Len(t, batch, 1)
	b.Faults().DropConnections()
	require.Eventually(t, func() bool { return metrics.get("solace_input_reconnects") >= 1 }, 10*time.Second, 20*time.Millisecond)
	require.NoError(t, ack(t.Context(), nil), "an ack for a lost flow must not fail the pipeline")

	// Republish "a" (same id) and publish "b"; only "b" may come out.
	pub.send(t, "t", []string{"a-again"}, withID)
	pub.send(t, "t", []string{"b"}, func(_ int, bld solace.OutboundMessageBuilder) solace.OutboundMessageBuilder {
		return bld.WithApplicationMessageID("id-b")
	})
	batch, ack = readBatch(t, r)
	require.Len(t, batch, 1)
	body, _ := batch[0].AsBytes()
	require.Equal(t, "b", string(body), "the redelivered and the republished copy of id-0 are dropped")
	// A nack is not remembered: the redelivery of "b" must come through.
	require.NoError(t, ack(t.Context(), errors.New("try again")))
	batch, ack = readBatch(t, r)
	body, _ = batch[0].AsBytes()
	require.Equal(t, "b", string(body))
	require.NoError(t, ack(t.Context(), nil))
	waitDepth(t, b, "q", 0)
}

// TestSolaceInputDedupByReplicationGroupID covers messages without an
// application message id: the replication group message id, stable across
// redeliveries, is the key.
func TestSolaceInputDedupByReplicationGroupID(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	createQueueSEMP(t, b, semp.Queue{QueueName: "q"}, "t")
	pub := newSiPublisher(t, b)
	pub.send(t, "t", []string{"no-id"}, nil)
	r, metrics := newSiReaderWithMetrics(t, b, "queue: q\ndeduplicate: true\n")
	batch, ack := readBatch(t, r)
	rgmid := metaOf(t, batch[0])["solace_replication_group_message_id"]
	require.NotEmpty(t, rgmid)

	b.Faults().DropConnections()
	require.Eventually(t, func() bool { return metrics.get("solace_input_reconnects") >= 1 }, 10*time.Second, 20*time.Millisecond)
	require.NoError(t, ack(t.Context(), nil))

	pub.send(t, "t", []string{"next"}, nil)
	batch, ack = readBatch(t, r)
	body, _ := batch[0].AsBytes()
	require.Equal(t, "next", string(body), "the redelivery of %v is a duplicate", rgmid)
	require.NoError(t, ack(t.Context(), nil))
	waitDepth(t, b, "q", 0)
}

// TestSolaceInputDedupCache shares the window through a cache resource.
func TestSolaceInputDedupCache(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	createQueueSEMP(t, b, semp.Queue{QueueName: "q", AccessType: semp.AccessTypeNonExclusive}, "t")
	pub := newSiPublisher(t, b)
	res := service.MockResources(service.MockResourcesOptAddCache("seen"))
	yaml := "queue: q\ndeduplicate: true\ndedup_cache: seen\n"
	r1 := newSiReaderWith(t, b, res, yaml)
	pub.send(t, "t", []string{"x"}, func(_ int, bld solace.OutboundMessageBuilder) solace.OutboundMessageBuilder {
		return bld.WithApplicationMessageID("id-x")
	})
	batch, ack := readBatch(t, r1)
	require.Len(t, batch, 1)
	require.NoError(t, ack(t.Context(), nil))
	require.NoError(t, r1.Close(t.Context()))

	r2 := newSiReaderWith(t, b, res, yaml)
	pub.send(t, "t", []string{"x-copy", "y"}, func(i int, bld solace.OutboundMessageBuilder) solace.OutboundMessageBuilder {
		return bld.WithApplicationMessageID([]string{"id-x", "id-y"}[i])
	})
	batch, ack = readBatch(t, r2)
	body, _ := batch[0].AsBytes()
	require.Equal(t, "y", string(body), "a key remembered by another instance is a duplicate")
	require.NoError(t, ack(t.Context(), nil))
	waitDepth(t, b, "q", 0)
}
