package input

// This file is the solace input's settlement: what the pipeline's ack makes
// of the messages it covers, counted, and which failures are no failure.

import (
	"context"
	"errors"

	"github.com/connect-solace/connect-solace/internal/session"
)

// settleBatch settles a batch as the pipeline's ack says: accepted, or the
// nack outcome on an error.
func (r *solaceReader) settleBatch(ctx context.Context, recv *siReceiver, ins []*siDelivery, err error) error {
	outcome := session.Accepted
	if err != nil {
		outcome = r.nack
	} else if r.dedup {
		r.remember(ctx, ins)
	}
	// One call for the batch: the receiver settles it in one crossing into
	// CCSMP rather than one per message.
	failed := recv.SettleBatch(ins, outcome)
	r.settled(outcome, len(ins)-len(failed))
	var errs []error
	for _, e := range failed {
		if e = r.settleFailed(e); e != nil {
			errs = append(errs, e)
		}
	}
	if r.dedup {
		r.endFlights(ins, err == nil)
	}
	return errors.Join(errs...)
}

// settleOne is settleBatch for a batch of one, without a slice for it.
func (r *solaceReader) settleOne(ctx context.Context, recv *siReceiver, in *siDelivery, err error) error {
	if r.dedup {
		return r.settleBatch(ctx, recv, []*siDelivery{in}, err)
	}
	outcome := session.Accepted
	if err != nil {
		outcome = r.nack
	}
	return r.settle(recv, in, outcome)
}

// settle settles one message and counts it. A failure for a message whose
// flow was lost is not an error: the broker redelivers that message.
func (r *solaceReader) settle(recv *siReceiver, in *siDelivery, o session.Outcome) error {
	if err := recv.Settle(in, o); err != nil {
		return r.settleFailed(err)
	}
	r.settled(o, 1)
	return nil
}

// settled counts n messages settled with o.
func (r *solaceReader) settled(o session.Outcome, n int) {
	switch {
	case n == 0:
	case o == session.Accepted:
		r.mAcked.Add(int64(n))
	default:
		r.mNacked.Incr(int64(n), o.String())
	}
}

// settleFailed returns the failure to settle a message, or nil for one whose
// flow was lost (counted and logged).
func (r *solaceReader) settleFailed(err error) error {
	if errors.Is(err, session.ErrStaleFlow) {
		r.mStale.Incr(1)
		r.log.Debugf("Dropping settlement of a message from a lost flow (the broker redelivers it): %v", err)
		return nil
	}
	return err
}
