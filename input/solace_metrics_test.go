package input

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/semp"
	"github.com/connect-solace/connect-solace/solacetest"
)

// siMetrics records, per metric name (summed over labels), the sum of a
// counter's increments or the last value set on a gauge, for the resources
// built by siResourcesWithMetrics, so a test reads what a metrics exporter
// sees. Each set of resources gets its own recorder, named by its id.
type siMetrics struct {
	mu     sync.Mutex
	values map[string]*atomic.Int64
}

// get is the value of the metric name (0 before any).
func (m *siMetrics) get(name string) int64 {
	return m.metric(name).Load()
}

func (m *siMetrics) metric(name string) *atomic.Int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.values[name]
	if !ok {
		v = new(atomic.Int64)
		m.values[name] = v
	}
	return v
}

var (
	siMetricRecorders sync.Map // id -> *siMetrics
	siMetricIDs       atomic.Int64
)

type siMetricExporter struct{ m *siMetrics }

type siMetric struct{ v *atomic.Int64 }

func (s siMetric) Incr(n int64)          { s.v.Add(n) }
func (s siMetric) IncrFloat64(f float64) { s.v.Add(int64(f)) }
func (s siMetric) Timing(int64)          {}
func (s siMetric) Set(v int64)           { s.v.Store(v) }

func (e siMetricExporter) NewCounterCtor(name string, _ ...string) service.MetricsExporterCounterCtor {
	return func(...string) service.MetricsExporterCounter { return siMetric{e.m.metric(name)} }
}

func (e siMetricExporter) NewTimerCtor(string, ...string) service.MetricsExporterTimerCtor {
	return func(...string) service.MetricsExporterTimer { return siMetric{new(atomic.Int64)} }
}

func (e siMetricExporter) NewGaugeCtor(name string, _ ...string) service.MetricsExporterGaugeCtor {
	return func(...string) service.MetricsExporterGauge { return siMetric{e.m.metric(name)} }
}

func (siMetricExporter) Close(context.Context) error { return nil }

func init() {
	service.MustRegisterMetricsExporter("solace_input_test_metrics",
		service.NewConfigSpec().Field(service.NewStringField("id")),
		func(conf *service.ParsedConfig, _ *service.Logger) (service.MetricsExporter, error) {
			id, err := conf.FieldString("id")
			if err != nil {
				return nil, err
			}
			m, _ := siMetricRecorders.LoadOrStore(id, &siMetrics{values: map[string]*atomic.Int64{}})
			return siMetricExporter{m.(*siMetrics)}, nil
		})
}

// siResourcesWithMetrics returns resources whose metrics the returned
// recorder reads.
func siResourcesWithMetrics(t *testing.T) (*service.Resources, *siMetrics) {
	t.Helper()
	// The id is unique per call, not just per test: with -count N a test's
	// name repeats, and a recorder carried over made waits such as
	// "reconnects >= 1" pass before the reconnect.
	id := fmt.Sprintf("%s#%d", t.Name(), siMetricIDs.Add(1))
	rb := service.NewResourceBuilder()
	require.NoError(t, rb.SetMetricsYAML("solace_input_test_metrics: { id: "+strconv.Quote(id)+" }"))
	res, stop, err := rb.Build()
	require.NoError(t, err)
	t.Cleanup(func() { _ = stop(context.Background()) })
	m, _ := siMetricRecorders.Load(id)
	return res, m.(*siMetrics)
}

// newSiReaderWithMetrics is newSiReader with resources whose metrics the
// returned recorder reads.
func newSiReaderWithMetrics(t *testing.T, b interface{ SMFURL() string }, yaml string) (*solaceReader, *siMetrics) {
	t.Helper()
	res, m := siResourcesWithMetrics(t)
	return newSiReaderAt(t, b.SMFURL(), res, yaml), m
}

// The received and acked counters are added up (tally) and reach the
// exporter within tally.Interval, and at once when the input closes.
func TestSolaceInputCountsReceivedAndAcked(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	createQueueSEMP(t, b, semp.Queue{QueueName: "counted"}, "counted")
	newSiPublisher(t, b).send(t, "counted", []string{"a", "b", "c"}, nil)
	r, m := newSiReaderWithMetrics(t, b, "queue: counted\nbatch_size: 1\n")
	for range 2 {
		_, ack := readBatch(t, r)
		require.NoError(t, ack(t.Context(), nil))
	}
	require.Eventually(t, func() bool {
		return m.get("solace_input_received") == 2 && m.get("solace_input_acked") == 2
	}, 5*time.Second, 10*time.Millisecond)
	_, ack := readBatch(t, r)
	require.NoError(t, ack(t.Context(), nil))
	require.NoError(t, r.Close(t.Context()))
	require.Equal(t, int64(3), m.get("solace_input_received"))
	require.Equal(t, int64(3), m.get("solace_input_acked"))
}

// A batch is settled in one call to the receiver (SettleBatch), and its
// messages are counted as one: acked on success, nacked with the nack
// outcome on a pipeline error, and stale, without an error, once the
// receiver behind the batch is gone.
func TestSolaceInputCountsBatchSettlements(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	createQueueSEMP(t, b, semp.Queue{QueueName: "batched"}, "batched")
	const sent = 9
	newSiPublisher(t, b).send(t, "batched", siPayloads("m", sent), nil)
	r, m := newSiReaderWithMetrics(t, b, "queue: batched\nbatch_size: 3\n")
	// The input batches what has arrived, up to batch_size, so a step that
	// reads until it has three messages may take up to five: each step
	// counts what it read, and nine messages leave the next step at least
	// four whatever the first took.
	read3 := func() (int64, service.AckFunc) {
		t.Helper()
		var acks []service.AckFunc
		n := 0
		for n < 3 {
			batch, ack := readBatch(t, r)
			n += len(batch)
			acks = append(acks, ack)
		}
		return int64(n), func(ctx context.Context, err error) error {
			for _, ack := range acks {
				if e := ack(ctx, err); e != nil {
					return e
				}
			}
			return nil
		}
	}
	acked, ack := read3()
	require.NoError(t, ack(t.Context(), nil))
	require.Eventually(t, func() bool { return m.get("solace_input_acked") == acked }, 5*time.Second, 10*time.Millisecond)
	left := sent - int(acked)
	require.Eventually(t, func() bool { return stats(t, b, "batched").SpooledMsgCount == left }, 5*time.Second, 10*time.Millisecond)

	nacked, nack := read3()
	require.NoError(t, nack(t.Context(), errors.New("pipeline failed")))
	require.Equal(t, nacked, m.get("solace_input_nacked"))
	// FAILED: the broker redelivers them.
	stale, late := read3()
	require.NoError(t, r.Close(t.Context()))
	require.NoError(t, late(t.Context(), nil), "settling after the receiver closed is not an error")
	require.Equal(t, stale, m.get("solace_input_stale_settlements"))
	require.Equal(t, acked, m.get("solace_input_acked"))
	require.Eventually(t, func() bool {
		st := stats(t, b, "batched")
		return st.SpooledMsgCount == left && st.Unacked == 0
	}, 5*time.Second, 10*time.Millisecond, "nothing settled after Close")
}
