package jms

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/amqpwire"
	"github.com/connect-solace/connect-solace/internal/amqpwire/amqpwiretest"
)

// dialTestSender connects a Sender to the peer.
func dialTestSender(t *testing.T, p *amqpwiretest.Peer, relay bool, cfg SenderConfig) *Sender {
	t.Helper()
	c, err := Dial(t.Context(), DialConfig{URLs: []string{p.URL}, AnonymousRelay: relay, LinkCacheSize: 8}, p.URL)
	require.NoError(t, err)
	addr, err := NewAddresser(StyleActiveMQ, "", "", nil)
	require.NoError(t, err)
	s := NewSender(c, addr, cfg)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// batchOf makes one text message per body, to queues named by dest(i).
func batchOf(bodies []string, dest func(i int) string) []*Outgoing {
	out := make([]*Outgoing, len(bodies))
	for i, b := range bodies {
		out[i] = &Outgoing{Message: Message{Type: BodyText, Body: []byte(b), Priority: DefaultPriority, MessageID: "m" + b}, DestName: dest(i)}
	}
	return out
}

func bodies(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprint(i)
	}
	return out
}

var fastRetry = func() *backoff.ExponentialBackOff {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval, b.MaxInterval, b.MaxElapsedTime = time.Millisecond, 5*time.Millisecond, 5*time.Second
	return b
}()

func one(int) string { return "q" }

// TestSenderOutcomes checks each message gets its own broker outcome, with a
// bounded metric label, and that accepted ones around failed ones are fine.
func TestSenderOutcomes(t *testing.T) {
	actions := []amqpwiretest.Action{amqpwiretest.Accept, amqpwiretest.Reject, amqpwiretest.Accept, amqpwiretest.Release, amqpwiretest.Modify, amqpwiretest.Accept}
	for _, relay := range []bool{true, false} {
		t.Run(fmt.Sprintf("relay %v", relay), func(t *testing.T) {
			p := amqpwiretest.New(t, func(p *amqpwiretest.Peer) {
				p.OfferRelay = relay
				p.Decide = func(_ amqpwiretest.Delivery, n int) amqpwiretest.Action { return actions[n-1] }
			})
			s := dialTestSender(t, p, true, SenderConfig{})
			assert.Equal(t, relay, s.Conn().UsesRelay())
			msgs := batchOf(bodies(len(actions)), one)
			res := make([]Result, len(msgs))
			require.NoError(t, s.Send(t.Context(), msgs, res))

			want := []struct{ label, text string }{
				{}, {"amqp:precondition-failed", `broker rejected the message: amqp:precondition-failed: refused by the test peer (destination "queue://q")`},
				{}, {"released", "broker released the message"}, {"modified", "broker modified the message: undeliverable here"}, {},
			}
			for i, w := range want {
				if w.label == "" {
					assert.NoError(t, res[i].Err, "message %d", i)
					assert.Positive(t, res[i].Latency)
					continue
				}
				require.Error(t, res[i].Err, "message %d", i)
				assert.Contains(t, res[i].Err.Error(), w.text)
				assert.Equal(t, w.label, FailureLabel(res[i].Err))
			}
			assert.Equal(t, bodies(len(actions)), p.Bodies(), "each message sent once, in order")
			for _, d := range p.Deliveries() {
				assert.Equal(t, "queue://q", d.To)
			}
		})
	}
}

func TestOutcomeAndLabels(t *testing.T) {
	tests := []struct {
		name  string
		err   error
		label string
	}{
		{"accepted", wireOutcome(amqpwire.State{Kind: amqpwire.StateAccepted}, "q"), ""},
		{"rejected bare", wireOutcome(amqpwire.State{Kind: amqpwire.StateRejected}, "q"), "rejected"},
		{"broker's own condition stays bounded", wireOutcome(amqpwire.State{Kind: amqpwire.StateRejected, Error: &amqpwire.Error{Condition: "com.example:quota " + time.Now().String()}}, "q"), "rejected"},
		{"known condition", wireOutcome(amqpwire.State{Kind: amqpwire.StateRejected, Error: &amqpwire.Error{Condition: amqpwire.CondResourceLimitExceeded}}, "q"), "amqp:resource-limit-exceeded"},
		{"released", wireOutcome(amqpwire.State{Kind: amqpwire.StateReleased}, "q"), "released"},
		{"modified", wireOutcome(amqpwire.State{Kind: amqpwire.StateModified, UndeliverableHere: true}, "q"), "modified"},
		{"no outcome", wireOutcome(amqpwire.State{Kind: amqpwire.StateNone}, "q"), "unknown_outcome"},
		{"refused with own condition", &RefusedError{Address: "x", Err: &amqpwire.Error{Condition: "x:y"}}, "refused"},
		{"refused with a standard condition", &RefusedError{Address: "x", Err: &amqpwire.Error{Condition: amqpwire.CondNotFound}}, "amqp:not-found"},
		{"encoding", &MessageError{Label: LabelEncoding, Err: fmt.Errorf("bad")}, "encoding"},
		{"connection", fmt.Errorf("%w: eof", ErrConnectionLost), "connection"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.label == "" {
				require.NoError(t, tc.err)
				return
			}
			assert.Equal(t, tc.label, FailureLabel(tc.err))
		})
	}
}

// TestSenderRefusedAddress sends to three queues, one of which the broker
// refuses: only its messages fail, and the link cache keeps the others.
func TestSenderRefusedAddress(t *testing.T) {
	p := amqpwiretest.New(t, func(p *amqpwiretest.Peer) {
		p.Refuse = func(target string) bool { return target == "queue://bad" }
	})
	s := dialTestSender(t, p, false, SenderConfig{Retry: fastRetry})
	dests := []string{"a", "a", "bad", "bad", "b", "a"}
	msgs := batchOf(bodies(len(dests)), func(i int) string { return dests[i] })
	res := make([]Result, len(msgs))
	require.NoError(t, s.Send(t.Context(), msgs, res))
	for i, d := range dests {
		if d != "bad" {
			assert.NoError(t, res[i].Err, "message %d", i)
			continue
		}
		var re *RefusedError
		require.ErrorAs(t, res[i].Err, &re, "message %d", i)
		assert.Equal(t, "queue://bad", re.Address)
		assert.Equal(t, "amqp:not-found", FailureLabel(res[i].Err))
	}
	assert.Equal(t, []string{"0", "1", "4", "5"}, p.Bodies())
	assert.Equal(t, 2, s.Conn().OpenLinks())
	assert.Equal(t, 1, p.Connections())
}

// TestSenderAttachFailsMidBatch fails the attach of the second destination
// once with a condition that is not a refusal: the messages already in
// flight on the first link still get their own outcome (here rejected), and
// the rest are sent on a second attempt.
func TestSenderAttachFailsMidBatch(t *testing.T) {
	var refused atomic.Bool
	p := amqpwiretest.New(t, func(p *amqpwiretest.Peer) {
		p.RefuseCondition = "amqp:internal-error"
		p.Refuse = func(target string) bool { return target == "queue://b" && refused.CompareAndSwap(false, true) }
		p.Decide = func(d amqpwiretest.Delivery, _ int) amqpwiretest.Action {
			if d.To == "queue://a" {
				return amqpwiretest.Reject
			}
			return amqpwiretest.Accept
		}
	})
	s := dialTestSender(t, p, false, SenderConfig{Retry: fastRetry})
	dests := []string{"a", "a", "b", "b"}
	msgs := batchOf(bodies(len(dests)), func(i int) string { return dests[i] })
	res := make([]Result, len(msgs))
	require.NoError(t, s.Send(t.Context(), msgs, res))
	for i := range 2 {
		var oe *OutcomeError
		require.ErrorAs(t, res[i].Err, &oe, "message %d was in flight when the attach failed", i)
		assert.Equal(t, "rejected", oe.Outcome)
	}
	assert.NoError(t, res[2].Err)
	assert.NoError(t, res[3].Err)
	assert.Equal(t, []string{"0", "1", "2", "3"}, p.Bodies())
}

// TestSenderLinkLoss cuts the link or the session in the middle of a
// pipelined batch: the messages whose fate is unknown are resent on a new
// link (and session) of the same connection, and every message ends up
// accepted, with no reconnect.
func TestSenderLinkLoss(t *testing.T) {
	for _, cut := range []amqpwiretest.Action{amqpwiretest.DetachLink, amqpwiretest.EndSession} {
		t.Run(fmt.Sprint(cut), func(t *testing.T) {
			p := amqpwiretest.New(t, func(p *amqpwiretest.Peer) {
				p.Decide = func(_ amqpwiretest.Delivery, n int) amqpwiretest.Action {
					if n == 4 {
						return cut
					}
					return amqpwiretest.Accept
				}
			})
			var retries atomic.Int32
			s := dialTestSender(t, p, false, SenderConfig{Retry: fastRetry, OnRetry: func(int, time.Duration, error) { retries.Add(1) }})
			msgs := batchOf(bodies(10), one)
			res := make([]Result, len(msgs))
			require.NoError(t, s.Send(t.Context(), msgs, res))
			for i, r := range res {
				assert.NoError(t, r.Err, "message %d", i)
			}
			assert.Equal(t, int32(1), retries.Load())
			got := p.Bodies()
			// 0-2 accepted, 3 cut off, then 3 onwards again on the new link.
			assert.Equal(t, []string{"0", "1", "2", "3"}, got[:4])
			assert.Equal(t, bodies(10)[3:], got[len(got)-7:])
			assert.Equal(t, 1, p.Connections(), "no reconnect for a link or session failure")
		})
	}
}

// TestSenderOrderedResend holds message 2, accepts 3 and cuts the link at 4.
// Unordered, only 2, 4, ... are resent (2 then lands after 3); ordered, every
// message from 2 on is resent in order.
func TestSenderOrderedResend(t *testing.T) {
	for _, ordered := range []bool{false, true} {
		t.Run(fmt.Sprintf("ordered %v", ordered), func(t *testing.T) {
			p := amqpwiretest.New(t, func(p *amqpwiretest.Peer) {
				p.Decide = func(_ amqpwiretest.Delivery, n int) amqpwiretest.Action {
					switch n {
					case 3:
						return amqpwiretest.Hold
					case 5:
						return amqpwiretest.DetachLink
					}
					return amqpwiretest.Accept
				}
			})
			s := dialTestSender(t, p, false, SenderConfig{Retry: fastRetry, Ordered: ordered})
			msgs := batchOf(bodies(6), one)
			res := make([]Result, len(msgs))
			require.NoError(t, s.Send(t.Context(), msgs, res))
			for i, r := range res {
				assert.NoError(t, r.Err, "message %d", i)
			}
			got := p.Bodies()
			require.GreaterOrEqual(t, len(got), 5)
			assert.Equal(t, []string{"0", "1", "2", "3", "4"}, got[:5])
			resent := got[len(got)-len(got[5:]):]
			// Message 5 may or may not have reached the peer before the
			// detach; the peer drops transfers on a detached link.
			if resent[0] == "5" {
				resent = resent[1:]
			}
			if ordered {
				assert.Equal(t, []string{"2", "3", "4", "5"}, resent)
			} else {
				assert.Equal(t, []string{"2", "4", "5"}, resent)
			}
		})
	}
}

// TestSenderConnectionLoss drops the TCP connection mid-batch: Send reports
// ErrConnectionLost, and every message not known to be accepted carries it.
func TestSenderConnectionLoss(t *testing.T) {
	p := amqpwiretest.New(t, func(p *amqpwiretest.Peer) {
		p.Decide = func(_ amqpwiretest.Delivery, n int) amqpwiretest.Action {
			if n == 3 {
				return amqpwiretest.DropConn
			}
			return amqpwiretest.Accept
		}
	})
	s := dialTestSender(t, p, false, SenderConfig{Retry: fastRetry})
	msgs := batchOf(bodies(6), one)
	res := make([]Result, len(msgs))
	err := s.Send(t.Context(), msgs, res)
	require.ErrorIs(t, err, ErrConnectionLost)
	// The peer settled 0 and 1 before it vanished (it closes its side
	// after writing them): the reader takes them before the end of stream.
	for i := range 2 {
		assert.NoError(t, res[i].Err, "message %d", i)
	}
	for i := 2; i < 6; i++ {
		assert.ErrorIs(t, res[i].Err, ErrConnectionLost, "message %d", i)
	}
	assert.True(t, s.Conn().Lost())
	assert.Equal(t, 1, p.Connections(), "the Sender never dials: reconnecting is the caller's job")
}

// TestSenderSendTimeout has the peer never settle: the watchdog closes the
// connection after send_timeout and says so.
func TestSenderSendTimeout(t *testing.T) {
	p := amqpwiretest.New(t, func(p *amqpwiretest.Peer) {
		p.Decide = func(amqpwiretest.Delivery, int) amqpwiretest.Action { return amqpwiretest.Hold }
	})
	s := dialTestSender(t, p, false, SenderConfig{SendTimeout: 200 * time.Millisecond})
	msgs := batchOf(bodies(3), one)
	res := make([]Result, len(msgs))
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	err := s.Send(ctx, msgs, res)
	require.ErrorIs(t, err, ErrConnectionLost)
	assert.Contains(t, err.Error(), "no settlement within send_timeout 200ms")
}

// TestSenderUnencodableMessage sends a message AMQP cannot carry (an
// application property that is not UTF-8, bypassing Properties' check): it
// fails alone, the others are delivered once, and the connection stays.
func TestSenderUnencodableMessage(t *testing.T) {
	p := amqpwiretest.New(t, nil)
	s := dialTestSender(t, p, false, SenderConfig{Retry: fastRetry})
	msgs := batchOf(bodies(4), one)
	msgs[1].Properties = map[string]any{"k": "a\xffb"}
	res := make([]Result, len(msgs))
	require.NoError(t, s.Send(t.Context(), msgs, res))
	var me *MessageError
	require.ErrorAs(t, res[1].Err, &me)
	assert.Equal(t, "encoding", FailureLabel(res[1].Err))
	for _, i := range []int{0, 2, 3} {
		assert.NoError(t, res[i].Err)
	}
	assert.Equal(t, []string{"0", "2", "3"}, p.Bodies())
	assert.False(t, s.Conn().Lost())
	assert.Equal(t, 1, p.Connections())
}

// TestDialAuthRefused checks a refused SASL login is reported as ErrAuth,
// from the sasl-outcome code rather than an error text.
func TestDialAuthRefused(t *testing.T) {
	p := amqpwiretest.New(t, func(p *amqpwiretest.Peer) { p.RefuseAuth = true })
	_, err := Dial(t.Context(), DialConfig{Username: "u", Password: "hunter2"}, p.URL)
	require.ErrorIs(t, err, ErrAuth)
	assert.NotContains(t, err.Error(), "hunter2")
}

// TestSenderConcurrentBatches sends many batches at once over one link and
// checks every message is accepted exactly once, each batch contiguous.
func TestSenderConcurrentBatches(t *testing.T) {
	p := amqpwiretest.New(t, nil)
	s := dialTestSender(t, p, false, SenderConfig{})
	const batches, size = 16, 8
	errs := make(chan error, batches)
	for b := range batches {
		go func() {
			bs := make([]string, size)
			for i := range bs {
				bs[i] = fmt.Sprintf("%02d-%d", b, i)
			}
			msgs := batchOf(bs, one)
			res := make([]Result, size)
			err := s.Send(t.Context(), msgs, res)
			for _, r := range res {
				if err == nil {
					err = r.Err
				}
			}
			errs <- err
		}()
	}
	for range batches {
		require.NoError(t, <-errs)
	}
	got := p.Bodies()
	require.Len(t, got, batches*size)
	for k := 0; k < len(got); k += size {
		for i := range size {
			assert.Equal(t, fmt.Sprintf("%s-%d", got[k][:2], i), got[k+i], "batch transfers are contiguous and in order")
		}
	}
}

// TestWorkComesZeroed checks a pooled Work hands out zeroed messages and
// results however its last user left them.
func TestWorkComesZeroed(t *testing.T) {
	for range 3 {
		w := GetWork(3)
		require.Len(t, w.Msgs, 3)
		require.Len(t, w.Res, 3)
		for i, m := range w.Msgs {
			require.NotNil(t, m, "message %d", i)
			require.Zero(t, *m, "message %d", i)
			require.Zero(t, w.Res[i], "result %d", i)
		}
		w.Msgs[1].Body, w.Msgs[2].MessageID = []byte("x"), "ID:1"
		w.Res[2].Err = errors.New("failed")
		w.Msgs[0] = nil // a message not to send
		w.Release()
	}
}
