package output

// This file is how the solace output reports messages it could not publish:
// each failure's bounded metric reason, and the batch error Benthos logs.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connect-solace/connect-solace/internal/session"
)

// soFailure is one message of a batch that was not published.
type soFailure struct {
	idx    int
	reason string // the bounded metric label
	err    error  // names the destination and the reason
}

// batchError logs the failures of a batch and reports them per message. The
// batch error's own text carries the first failure, destination and reason
// included, because Benthos logs only that text.
func (w *solaceWriter) batchError(batch service.MessageBatch, fails []soFailure) error {
	if len(fails) == 0 {
		return nil
	}
	first := fails[0]
	summary := fmt.Errorf("solace: %d of %d messages not published; first (%s): %w", len(fails), len(batch), first.reason, first.err)
	w.log.Errorf("%v", summary)
	for _, f := range fails[1:] {
		w.log.Debugf("solace: message %d not published (%s): %v", f.idx, f.reason, f.err)
	}
	be := service.NewBatchError(batch, summary)
	for _, f := range fails {
		be.Failed(f.idx, f.err)
	}
	return be
}

// soClassify names the metric reason of a failed publish and wraps the error
// with its destination.
func soClassify(dest session.Destination, err error) (string, error) {
	var rej *session.RejectError
	switch {
	case errors.As(err, &rej):
		if dest.Queue && (rej.UnknownQueue() || strings.EqualFold(rej.Reason, "Unknown Queue")) {
			return "unknown_queue", fmt.Errorf("publishing to %s: the queue does not exist (broker: %s)", dest, rej.Reason)
		}
		return rej.Label(), fmt.Errorf("publishing to %s: %w (subcode %d)", dest, err, rej.SubCode)
	case errors.Is(err, session.ErrConnectionLost):
		return session.ErrorLabel(err), fmt.Errorf("publishing to %s: %w", dest, err)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return "timeout", fmt.Errorf("publishing to %s: %w", dest, err)
	default:
		return "error", fmt.Errorf("publishing to %s: %w", dest, err)
	}
}
