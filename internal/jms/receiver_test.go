package jms

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/amqpwire/amqpwiretest"
)

// TestReceiverSettleAfterLossIsStale settles a received message after its
// link, session or connection is gone, by the broker or by the client: the
// broker redelivers it, so Settle reports ErrStaleDelivery (which the input
// counts and drops) rather than an error the pipeline would retry.
func TestReceiverSettleAfterLossIsStale(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  amqpwiretest.Action // what the peer does after sending
		lose func(t *testing.T, r *Receiver)
	}{
		{name: "link detached by the broker", end: amqpwiretest.DetachLink},
		{name: "session ended by the broker", end: amqpwiretest.EndSession},
		{name: "connection dropped by the broker", end: amqpwiretest.DropConn},
		{name: "link closed by the client", end: -1, lose: func(t *testing.T, r *Receiver) {
			require.NoError(t, r.Close(t.Context(), true))
		}},
		{name: "connection closed by the client", end: -1, lose: func(t *testing.T, r *Receiver) {
			require.NoError(t, r.Conn().Close())
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := amqpwiretest.New(t, func(p *amqpwiretest.Peer) {
				p.Send = []string{"m1"}
				p.SourceEnd = tc.end
			})
			c, err := Dial(t.Context(), DialConfig{}, p.URL)
			require.NoError(t, err)
			t.Cleanup(func() { _ = c.Close() })
			addr, err := NewAddresser(StyleActiveMQ, "", "", nil)
			require.NoError(t, err)
			src, err := addr.Resolve(KindQueue, "stale")
			require.NoError(t, err)
			r, err := c.NewReceiver(t.Context(), ReceiverConfig{Source: src, Prefetch: 1})
			require.NoError(t, err)
			d, err := r.Receive(t.Context())
			require.NoError(t, err)
			require.False(t, d.Settled)
			if tc.lose != nil {
				tc.lose(t, r)
			} else {
				// Receiving it renewed the credit; that flow makes the peer
				// end what the case says, which the next Receive reports.
				_, err := r.Receive(t.Context())
				require.Error(t, err)
			}
			for _, o := range []Outcome{Accepted, Released, Modified, Rejected} {
				require.ErrorIs(t, r.Settle(d.ID, d.ID, false, o, "x"), ErrStaleDelivery, "outcome %v", o)
			}
		})
	}
}

// TestReceiverPresettledAfterLoss: settling a message the broker sent
// settled is no stale delivery after the connection is lost, but a no-op
// (the broker never sends it again), even when it would have renewed the
// credit.
func TestReceiverPresettledAfterLoss(t *testing.T) {
	p := amqpwiretest.New(t, func(p *amqpwiretest.Peer) {
		p.Send = []string{"m1", "m2"}
		p.Presettle = true
		p.SourceEnd = -1
	})
	c, err := Dial(t.Context(), DialConfig{}, p.URL)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	addr, err := NewAddresser(StyleActiveMQ, "", "", nil)
	require.NoError(t, err)
	src, err := addr.Resolve(KindQueue, "presettled")
	require.NoError(t, err)
	r, err := c.NewReceiver(t.Context(), ReceiverConfig{Source: src, Prefetch: 1})
	require.NoError(t, err)
	var ds []Delivery
	for range 2 {
		d, err := r.Receive(t.Context())
		require.NoError(t, err)
		require.True(t, d.Settled)
		ds = append(ds, d)
	}
	// Two handed out, none settled: settling the first renews the credit.
	require.NoError(t, c.Close())
	for _, d := range ds {
		require.NoError(t, r.Settle(d.ID, d.ID, true, Accepted, ""))
	}
}
