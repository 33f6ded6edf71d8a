package input

import (
	"context"
	"errors"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connect-solace/connect-solace/internal/jms"
)

// This file is the jms input's settlement: what a batch's acknowledgement
// does to its deliveries.

// ackOne settles a batch of one message: accepted, or on any error the
// nack outcome.
func (r *jmsReader) ackOne(rcv *jms.Receiver, d jms.Delivery) service.AckFunc {
	id, presettled := d.ID, d.Settled
	return func(_ context.Context, err error) error {
		if err != nil {
			return r.settle(rcv, id, id, presettled, r.nack, err.Error())
		}
		return r.settle(rcv, id, id, presettled, jms.Accepted, "")
	}
}

func (r *jmsReader) ackFunc(rcv *jms.Receiver, batch service.MessageBatch, ds []jms.Delivery) service.AckFunc {
	var ix *service.Indexer
	if len(batch) > 1 {
		ix = batch.Index()
	}
	return func(_ context.Context, err error) error {
		var failed []bool
		reason := ""
		if err != nil {
			failed, reason = r.failedIndexes(ix, len(ds), err), err.Error()
		}
		outcome := func(i int) jms.Outcome {
			if failed != nil && failed[i] {
				return r.nack
			}
			return jms.Accepted
		}
		// Runs of consecutive delivery ids with one outcome settle in one
		// disposition.
		var errs []error
		for i := 0; i < len(ds); {
			o, j := outcome(i), i+1
			for j < len(ds) && ds[j].ID == ds[j-1].ID+1 && ds[j].Settled == ds[i].Settled && outcome(j) == o {
				j++
			}
			if e := r.settle(rcv, ds[i].ID, ds[j-1].ID, ds[i].Settled, o, reason); e != nil {
				errs = append(errs, e)
			}
			i = j
		}
		return errors.Join(errs...)
	}
}

// failedIndexes says which messages of the batch the pipeline rejected: all
// of them for a plain error, those a batch error names otherwise (a message
// the batch error does not account for counts as failed).
func (r *jmsReader) failedIndexes(ix *service.Indexer, n int, err error) []bool {
	failed := make([]bool, n)
	if err == nil {
		return failed
	}
	var bErr *service.BatchError
	if ix == nil || !errors.As(err, &bErr) {
		for i := range failed {
			failed[i] = true
		}
		return failed
	}
	seen := make([]bool, n)
	bErr.WalkMessagesIndexedBy(ix, func(i int, _ *service.Message, e error) bool {
		if i >= 0 && i < n {
			seen[i] = true
			failed[i] = failed[i] || e != nil
		}
		return true
	})
	for i := range failed {
		failed[i] = failed[i] || !seen[i]
	}
	return failed
}

// settle settles the deliveries first..last and counts them. A delivery
// whose link is gone is not an error: the broker redelivers it.
func (r *jmsReader) settle(rcv *jms.Receiver, first, last uint32, presettled bool, o jms.Outcome, reason string) error {
	err := rcv.Settle(first, last, presettled, o, reason)
	n := int64(last-first) + 1
	switch {
	case err == nil:
		if o == jms.Accepted {
			r.mAcked.Add(n)
		} else {
			r.mNacked.Incr(n, o.String())
		}
		return nil
	case errors.Is(err, jms.ErrStaleDelivery):
		r.mStale.Incr(n)
		r.log.Debugf("Dropping settlement of %d deliveries from a lost link (the broker redelivers them): %v", n, err)
		return nil
	}
	return err
}
