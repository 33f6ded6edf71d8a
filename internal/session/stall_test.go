package session

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/solacetest"
)

// TestStallDetectorNeedsTwoReadingsWithTheBufferEmpty checks the decision
// rule: a flow is stalled only when CCSMP received more than the client
// holds and handed over, with the client's buffer empty, in two readings in
// a row.
func TestStallDetectorNeedsTwoReadingsWithTheBufferEmpty(t *testing.T) {
	for _, tc := range []struct {
		name     string
		readings []stallReading
		want     []bool
	}{
		{"all handed over", []stallReading{{received: 5, seen: 5}, {received: 5, seen: 5}}, []bool{false, false}},
		{"gap twice, buffer empty", []stallReading{{received: 9, seen: 5}, {received: 9, seen: 5}}, []bool{false, true}},
		{"gap once, then caught up", []stallReading{{received: 9, seen: 5}, {received: 9, seen: 9}, {received: 12, seen: 9}},
			[]bool{false, false, false}},
		{"gap while the buffer holds messages", []stallReading{{received: 9, buffered: 2, seen: 5}, {received: 9, buffered: 1, seen: 5}},
			[]bool{false, false}},
		{"the buffer explains the gap", []stallReading{{received: 9, buffered: 4, seen: 5}, {received: 9, buffered: 4, seen: 5}},
			[]bool{false, false}},
		{"buffer empties on the second reading", []stallReading{{received: 9, buffered: 3, seen: 5}, {received: 9, seen: 5}, {received: 9, seen: 5}},
			[]bool{false, false, true}},
		{"starts over after a stall", []stallReading{{received: 9, seen: 5}, {received: 9, seen: 5}, {received: 9, seen: 5}, {received: 9, seen: 5}},
			[]bool{false, true, false, true}},
		{"more seen than received (a count read late)", []stallReading{{received: 5, seen: 6}, {received: 5, seen: 6}}, []bool{false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d stallDetector
			for i, rd := range tc.readings {
				require.Equal(t, tc.want[i], d.observe(rd), "reading %d: %+v", i, rd)
			}
		})
	}
}

// TestReceiverRecoversAFlowTheClientStranded drives the Go client into the
// stall of its stopFlow/startFlow race with IgnoreConsumerWindows: while the
// reader holds back, the broker delivers past the client's window and the
// client drops what overflows its buffer. The receiver must find the stall
// from CCSMP's receive count, rebind the flow within a bounded time and
// count it, and the broker must then redeliver every dropped message,
// flagged, so that the reader gets all of them and the queue ends empty.
func TestReceiverRecoversAFlowTheClientStranded(t *testing.T) {
	const n = 1500
	f := newRxFixture(t, solacetest.QueueConfig{Name: "q1", Subscriptions: []string{"t"}})
	f.publish(t, "t", n, nil)
	// Delivery starts once the client has set its flow up (see
	// solacetest's TestIgnoredWindowStallsTheGoClient).
	f.b.Faults().PauseDelivery()
	var recovered atomic.Int64
	const every = 100 * time.Millisecond
	r, err := NewReceiver[struct{}](t.Context(), f.sess, ReceiverConfig{
		Queue: "q1", Buffer: 50, StallCheck: every,
		OnStallRecovered: func() { recovered.Add(1) },
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close(context.Background()) })
	require.Eventually(t, func() bool { return strings.Contains(f.b.FlowState("default", "q1"), "window=") }, 5*time.Second, time.Millisecond)
	f.b.Faults().IgnoreConsumerWindows(true)
	f.b.Faults().ResumeDelivery()
	require.Eventually(t, func() bool { return f.stats(t, "q1").Unacked == n }, 10*time.Second, time.Millisecond,
		"state: %s", f.b.FlowState("default", "q1"))
	require.Zero(t, recovered.Load(), "a client whose buffer is full is not stalled")
	// The broker honours windows again, as a real one always does: what the
	// client dropped stays delivered and unsettled on the bound flow. (With
	// the fault on, the redelivery burst would arrive with the new flow's
	// bind response and trip the client's own bind-time race in stopFlow.)
	f.b.Faults().IgnoreConsumerWindows(false)

	seen := map[string]bool{}
	var first, redelivered int
	start := time.Now()
	var recoveredAfter time.Duration
	for len(seen) < n {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		before := recovered.Load()
		ins, err := r.ReceiveBatch(ctx, nil, 64)
		cancel()
		require.NoError(t, err, "%d of %d received, %d recoveries; state: %s", len(seen), n, recovered.Load(), f.b.FlowState("default", "q1"))
		for _, in := range ins {
			in.Read(nil)
			p := string(in.Payload)
			require.False(t, seen[p], "%s delivered again after it was acked", p)
			seen[p] = true
			if in.Redelivered {
				if redelivered == 0 {
					recoveredAfter = time.Since(start)
				}
				redelivered++
			} else {
				// Only the stalled flow delivers unflagged.
				require.Zero(t, before, "%s came after the rebind unflagged", p)
				first++
			}
			if err := r.Settle(in, Accepted); err != nil {
				// Taken from the stalled flow just before it was
				// terminated: not acked, so the broker sends it again.
				require.ErrorIs(t, err, ErrStaleFlow)
				delete(seen, p)
			}
		}
	}
	require.Positive(t, recovered.Load())
	require.Positive(t, redelivered, "the client dropped nothing")
	require.Less(t, recoveredAfter, 10*time.Second)
	t.Logf("%d delivered first, %d redelivered after %d recoveries; first redelivery %v after reading began (check every %v)",
		first, redelivered, recovered.Load(), recoveredAfter, every)
	require.Eventually(t, func() bool { return f.stats(t, "q1").SpooledMsgCount == 0 }, 5*time.Second, time.Millisecond)
}
