package input

import (
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connect-solace/connect-solace/internal/tally"
)

// inputMetrics are the counters both inputs keep under the same names, their
// own prefix first (solace_input_received, jms_input_received, ...).
// received and acked are counted per message, so they are added up and
// handed over within tally.Interval: a MetricCounter resolves its path per
// Incr.
type inputMetrics struct {
	mReceived   *tally.Tally
	mAcked      *tally.Tally
	mNacked     *service.MetricCounter // labelled with the outcome
	mStale      *service.MetricCounter // settlements of a lost flow or link
	mReconnects *service.MetricCounter
}

// newInputMetrics makes the counters of the input whose metrics start with
// prefix.
func newInputMetrics(m *service.Metrics, prefix string) inputMetrics {
	return inputMetrics{
		mReceived:   tally.New(m.NewCounter(prefix + "_received")),
		mAcked:      tally.New(m.NewCounter(prefix + "_acked")),
		mNacked:     m.NewCounter(prefix+"_nacked", "outcome"),
		mStale:      m.NewCounter(prefix + "_stale_settlements"),
		mReconnects: m.NewCounter(prefix + "_reconnects"),
	}
}

// flush hands over what received and acked added up. Benthos closes an
// input once its pending acks resolved, so Close calls it: nothing is
// counted after.
func (m *inputMetrics) flush() {
	m.mReceived.Flush()
	m.mAcked.Flush()
}
