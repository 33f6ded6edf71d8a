package input

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/semp"
	"github.com/connect-solace/connect-solace/solacetest"
)

// TestSolaceInputDedupHoldsCopyInFlight drops the connection while the
// pipeline holds a message: the broker redelivers it before the pipeline
// acks the first copy, so the window cannot know the key yet. The copy must
// be held back, then acknowledged and dropped when the pipeline acks the
// first copy, or handed out when it rejects it. Without holding it back the
// pipeline got both copies (TestSolaceInputNetworkResets under load: a whole
// batch of 20 duplicates with deduplicate: true).
func TestSolaceInputDedupHoldsCopyInFlight(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ackErr error
	}{
		{name: "first copy acked"},
		{name: "first copy rejected", ackErr: errors.New("try again")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := solacetest.NewTestBroker(t, solacetest.Config{})
			createQueueSEMP(t, b, semp.Queue{QueueName: "q"}, "t")
			newSiPublisher(t, b).send(t, "t", []string{"a"}, nil)
			r, metrics := newSiReaderWithMetrics(t, b, "queue: q\ndeduplicate: true\n")

			batch, ack := readBatch(t, r)
			require.Len(t, batch, 1)
			b.Faults().DropConnections()
			require.Eventually(t, func() bool { return metrics.get("solace_input_reconnects") >= 1 }, 10*time.Second, 20*time.Millisecond)

			type read struct {
				batch service.MessageBatch
				ack   service.AckFunc
				err   error
			}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			next := make(chan read, 1)
			go func() {
				batch, ack, err := r.ReadBatch(ctx)
				next <- read{batch, ack, err}
			}()
			held := func() int {
				r.inFlight.mu.Lock()
				defer r.inFlight.mu.Unlock()
				n := 0
				for _, h := range r.inFlight.keys {
					n += len(h)
				}
				return n
			}
			require.Eventually(t, func() bool {
				select {
				case got := <-next:
					next <- got
					return true // fails below
				default:
					return held() == 1
				}
			}, 10*time.Second, 10*time.Millisecond, "the redelivered copy should be held back")
			select {
			case got := <-next:
				require.Failf(t, "the redelivered copy was passed on while its first copy was in flight", "batch %d, err %v", len(got.batch), got.err)
			default:
			}

			require.NoError(t, ack(t.Context(), tc.ackErr), "settling the lost flow's copy must not fail the pipeline")
			if tc.ackErr == nil {
				waitDepth(t, b, "q", 0)
				require.Equal(t, int64(1), metrics.get("solace_input_duplicates_dropped"))
				cancel()
				got := <-next
				require.ErrorIs(t, got.err, context.Canceled, "nothing more to read")
				return
			}
			var got read
			select {
			case got = <-next:
			case <-time.After(10 * time.Second):
				t.Fatal("the held copy should be handed out after the first copy was rejected")
			}
			require.NoError(t, got.err)
			require.Len(t, got.batch, 1)
			body, _ := got.batch[0].AsBytes()
			require.Equal(t, "a", string(body))
			require.Equal(t, true, metaOf(t, got.batch[0])["solace_redelivered"])
			require.NoError(t, got.ack(t.Context(), nil))
			waitDepth(t, b, "q", 0)
			require.Zero(t, metrics.get("solace_input_duplicates_dropped"))
		})
	}
}
