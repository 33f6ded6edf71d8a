package jms

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCreditWindow drives the credit policy with sequences of hand-outs
// ('r') and settlements ('s') and checks the credit granted after each.
func TestCreditWindow(t *testing.T) {
	tests := []struct {
		name     string
		prefetch int
		overlap  bool
		steps    string
		grants   []uint32 // per step
	}{
		{
			// The next message is asked for as soon as one is handed out,
			// before it is settled.
			name: "prefetch 1 renews at hand-out", prefetch: 1,
			steps: "rsrsrs", grants: []uint32{1, 0, 1, 0, 1, 0},
		},
		{
			// Two handed out and unsettled is the cap at prefetch 1: the
			// third message's credit waits for a settlement.
			name: "prefetch 1 caps unsettled", prefetch: 1,
			steps: "rrsss", grants: []uint32{1, 0, 1, 0, 0},
		},
		{
			// No grant while credit is outstanding: the whole window is
			// renewed once the last granted message is handed out.
			name: "prefetch 4 renews whole windows", prefetch: 4,
			steps: "rrrrssssrrrr", grants: []uint32{0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 4},
		},
		{
			name: "prefetch 2 with a slow pipeline", prefetch: 2,
			steps: "rrrrssss", grants: []uint32{0, 2, 0, 0, 1, 0, 0, 0},
		},
		{
			// Settlements while credit is outstanding grant nothing; the
			// cap then grants the part of a window the settlements allow.
			name: "partial window after the cap", prefetch: 3,
			steps: "rrrrrrsr", grants: []uint32{0, 0, 3, 0, 0, 0, 1, 0},
		},
		{
			// A broker that counts credit as AMQP defines it gets the
			// window renewed once half of it is used, while the rest is
			// still on its way.
			name: "overlap renews half windows", prefetch: 4, overlap: true,
			steps: "rsrsrsrs", grants: []uint32{0, 0, 2, 0, 0, 0, 2, 0},
		},
		{
			name: "overlap at prefetch 1 is the same", prefetch: 1, overlap: true,
			steps: "rsrsrs", grants: []uint32{1, 0, 1, 0, 1, 0},
		},
		{
			// The unsettled cap holds with overlap too.
			name: "overlap caps unsettled", prefetch: 4, overlap: true,
			steps: "rrrrrrrrss", grants: []uint32{0, 2, 0, 2, 0, 0, 0, 0, 1, 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := NewCreditWindow(tt.prefetch, tt.overlap)
			require.Len(t, tt.grants, len(tt.steps))
			for i, step := range tt.steps {
				var got uint32
				if step == 'r' {
					got = w.OnReceive()
				} else {
					got = w.OnSettle()
				}
				require.Equal(t, tt.grants[i], got, "step %d (%c) of %q", i, step, tt.steps)
				require.LessOrEqual(t, w.granted-w.settled, uint64(2*tt.prefetch), "at most 2×prefetch unsettled or in flight")
			}
		})
	}
}

// TestCreditWindowOverDelivery: a broker that sent more than the window
// (RabbitMQ 3.10 does when a flow overlaps deliveries) gets no grant until
// the limit passes what it sent, and then one counted from what it was
// granted, so the flow go-amqp sends (our grant plus its link credit, which
// went below zero) is exactly what the limit allows.
func TestCreditWindowOverDelivery(t *testing.T) {
	w := NewCreditWindow(2, false)
	require.Zero(t, w.OnReceive())
	require.Equal(t, uint32(2), w.OnReceive())
	// Three arrive on a window of two: received 5, granted 4, and the
	// limit is 2×prefetch unsettled.
	require.Zero(t, w.OnReceive())
	require.Zero(t, w.OnReceive())
	require.Zero(t, w.OnReceive())
	// Limit 5 = sent: a grant of 1 would be a flow of link credit 0.
	require.Zero(t, w.OnSettle())
	got := w.OnSettle()
	require.Equal(t, uint32(2), got, "limit (settled 2 + 2×prefetch) 6 - granted 4")
	// go-amqp's link credit is 4-5 = -1, so the flow carries 2-1 = 1:
	// the broker may send the sixth message.
	require.Equal(t, int64(1), int64(got)+int64(4)-int64(5))
}
