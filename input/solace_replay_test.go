package input

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/semp"
	"github.com/connect-solace/connect-solace/internal/testkit/solacekit"
	"github.com/connect-solace/connect-solace/solacetest"
)

// nextSecond waits until the wall clock has passed the next whole-second
// boundary and returns that boundary.
func nextSecond() time.Time {
	b := time.Now().Truncate(time.Second).Add(time.Second)
	for time.Now().Before(b) {
		time.Sleep(time.Until(b))
	}
	return b
}

// replayed is one message read from the input.
type replayed struct {
	body, rgmid string
}

// readAcked reads and acks batches until at least n messages came out. A
// replay is complete once the flow is bound (the broker re-spools the log
// into the queue before answering the bind), so a caller proves that
// nothing else was replayed by waiting for the queue to drain afterwards:
// an extra message would stay spooled.
func readAcked(t *testing.T, r *solaceReader, n int) []replayed {
	t.Helper()
	var got []replayed
	for len(got) < n {
		batch, ack := readBatch(t, r)
		for _, m := range batch {
			body, err := m.AsBytes()
			require.NoError(t, err)
			id, _ := metaOf(t, m)["solace_replication_group_message_id"].(string)
			require.NotEmpty(t, id)
			got = append(got, replayed{body: string(body), rgmid: id})
		}
		require.NoError(t, ack(t.Context(), nil))
	}
	return got
}

func bodies(ms []replayed) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.body
	}
	return out
}

// TestSolaceInputReplay consumes and acks four messages, two spooled in one
// second and two in a later one, then asks new inputs for replays of them.
func TestSolaceInputReplay(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	// Client-initiated replay needs an exclusive queue.
	createQueueSEMP(t, b, semp.Queue{QueueName: "q", AccessType: semp.AccessTypeExclusive}, "t")
	pub := newSiPublisher(t, b)
	pub.send(t, "t", []string{"m0", "m1"}, nil)
	// The client sends a replay start time in whole seconds, so the only
	// way to have messages on both sides of a start time is to let the clock
	// pass a second boundary between them; no broker signal can stand in
	// for the passing of time.
	boundary := nextSecond()
	pub.send(t, "t", []string{"m2", "m3"}, nil)

	r := newSiReader(t, b, "queue: q\nbatch_size: 10\n")
	first := readAcked(t, r, 4)
	require.Equal(t, []string{"m0", "m1", "m2", "m3"}, bodies(first))
	waitDepth(t, b, "q", 0)
	require.NoError(t, r.Close(t.Context()))

	tests := []struct {
		name   string
		replay string
		want   []replayed
	}{
		{"from the start", "{ from: start }", first},
		{"after a message id", fmt.Sprintf("{ from: message_id, message_id: '%s' }", first[0].rgmid), first[1:]},
		{"after the last message id", fmt.Sprintf("{ from: message_id, message_id: '%s' }", first[3].rgmid), nil},
		{"from a time", fmt.Sprintf("{ from: time, time: '%s' }", boundary.UTC().Format(time.RFC3339)), first[2:]},
		{"from a time in another zone", fmt.Sprintf("{ from: time, time: '%s' }", boundary.In(time.FixedZone("", -5*3600)).Format(time.RFC3339)), first[2:]},
		{"from a time before everything", fmt.Sprintf("{ from: time, time: '%s' }", boundary.Add(-time.Hour).Format(time.RFC3339)), first},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newSiReader(t, b, "queue: q\nbatch_size: 10\nreplay: "+tc.replay+"\n")
			got := readAcked(t, r, len(tc.want))
			// Replayed messages keep their replication group message ids.
			require.Equal(t, tc.want, got)
			waitDepth(t, b, "q", 0)
			require.NoError(t, r.Close(t.Context()))
		})
	}
}

// TestSolaceInputReplayOnce checks that a replay happens once, when the
// input first connects. It copied the log into the queue, so after a
// connection loss the flows must resume from the queue rather than replay,
// and duplicate, the log again: whether the client reconnects by itself or
// gives up and Benthos connects the input again.
func TestSolaceInputReplayOnce(t *testing.T) {
	tests := []struct {
		name      string
		reconnect string
		// recover waits until r consumes again after the drop.
		recover func(t *testing.T, r *solaceReader, reconnects func() int)
	}{
		{
			name:      "client reconnects",
			reconnect: "reconnect_attempts: 20\n",
			recover: func(t *testing.T, _ *solaceReader, reconnects func() int) {
				require.Eventually(t, func() bool { return reconnects() >= 1 }, 10*time.Second, 20*time.Millisecond)
			},
		},
		{
			name:      "Benthos reconnects",
			reconnect: "reconnect_attempts: 0\n",
			recover: func(t *testing.T, r *solaceReader, _ func() int) {
				require.Eventually(t, func() bool {
					ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
					defer cancel()
					_, _, err := r.ReadBatch(ctx)
					return errors.Is(err, service.ErrNotConnected)
				}, 10*time.Second, 10*time.Millisecond)
				require.NoError(t, r.Connect(t.Context()))
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := solacetest.NewTestBroker(t, solacetest.Config{})
			createQueueSEMP(t, b, semp.Queue{QueueName: "q", AccessType: semp.AccessTypeExclusive}, "t")
			pub := newSiPublisher(t, b)
			pub.send(t, "t", []string{"old-0", "old-1"}, nil)
			r := newSiReader(t, b, "queue: q\nbatch_size: 10\n")
			readAcked(t, r, 2)
			waitDepth(t, b, "q", 0)
			require.NoError(t, r.Close(t.Context()))

			r, metrics := newSiReaderWithMetrics(t, b, "queue: q\nbatch_size: 10\nreplay: { from: start }\n"+tc.reconnect)
			require.Equal(t, []string{"old-0", "old-1"}, bodies(readAcked(t, r, 2)))
			waitDepth(t, b, "q", 0)

			b.Faults().DropConnections()
			tc.recover(t, r, func() int { return int(metrics.get("solace_input_reconnects")) })
			pub.send(t, "t", []string{"new"}, nil)
			require.Equal(t, []string{"new"}, bodies(readAcked(t, r, 1)))
			waitDepth(t, b, "q", 0)
		})
	}
}

// TestSolaceInputReplayRefused checks that the broker's refusal of a replay
// reaches Benthos as a connect error naming the cause.
func TestSolaceInputReplayRefused(t *testing.T) {
	tests := []struct {
		name   string
		access string
		replay string
		want   string
	}{
		{"non-exclusive queue", semp.AccessTypeNonExclusive, "{ from: start }", "Non-Exclusive"},
		{"unknown message id", semp.AccessTypeExclusive, "{ from: message_id, message_id: 'rmid1:00001-00000000001-00000000-00000063' }", "Replay Start Message Unavailable"},
		{"malformed message id", semp.AccessTypeExclusive, "{ from: message_id, message_id: 'not-an-id' }", "not-an-id"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := solacetest.NewTestBroker(t, solacetest.Config{})
			createQueueSEMP(t, b, semp.Queue{QueueName: "q", AccessType: tc.access}, "t")
			pc, err := solaceInputSpec().ParseYAML(solacekit.ConnectionYAML(b.SMFURL())+"queue: q\nreplay: "+tc.replay+"\n", nil)
			require.NoError(t, err)
			r, err := newSolaceReaderFromParsed(pc, service.MockResources())
			require.NoError(t, err)
			err = r.Connect(t.Context())
			require.ErrorContains(t, err, tc.want)
			require.NoError(t, r.Close(t.Context()))
		})
	}
}
