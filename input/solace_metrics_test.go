package input

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/require"
)

// siGauges records the last value of every gauge of the resources built by
// siResourcesWithGauges, so a test reads a gauge as a metrics exporter
// sees it. Each set of resources gets its own recorder, named by its id.
type siGauges struct {
	mu     sync.Mutex
	values map[string]*atomic.Int64
}

// get is the last value set on the gauge name (0 before any).
func (g *siGauges) get(name string) int64 {
	return g.gauge(name).Load()
}

func (g *siGauges) gauge(name string) *atomic.Int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	v, ok := g.values[name]
	if !ok {
		v = new(atomic.Int64)
		g.values[name] = v
	}
	return v
}

var siGaugeRecorders sync.Map // id -> *siGauges

type siGaugeExporter struct{ g *siGauges }

type siGauge struct{ v *atomic.Int64 }

func (siGauge) Incr(int64)          {}
func (siGauge) IncrFloat64(float64) {}
func (siGauge) Timing(int64)        {}
func (s siGauge) Set(v int64)       { s.v.Store(v) }

func (e siGaugeExporter) NewCounterCtor(string, ...string) service.MetricsExporterCounterCtor {
	return func(...string) service.MetricsExporterCounter { return siGauge{new(atomic.Int64)} }
}

func (e siGaugeExporter) NewTimerCtor(string, ...string) service.MetricsExporterTimerCtor {
	return func(...string) service.MetricsExporterTimer { return siGauge{new(atomic.Int64)} }
}

func (e siGaugeExporter) NewGaugeCtor(name string, _ ...string) service.MetricsExporterGaugeCtor {
	return func(...string) service.MetricsExporterGauge { return siGauge{e.g.gauge(name)} }
}

func (siGaugeExporter) Close(context.Context) error { return nil }

func init() {
	service.MustRegisterMetricsExporter("solace_input_test_gauges",
		service.NewConfigSpec().Field(service.NewStringField("id")),
		func(conf *service.ParsedConfig, _ *service.Logger) (service.MetricsExporter, error) {
			id, err := conf.FieldString("id")
			if err != nil {
				return nil, err
			}
			g, _ := siGaugeRecorders.LoadOrStore(id, &siGauges{values: map[string]*atomic.Int64{}})
			return siGaugeExporter{g.(*siGauges)}, nil
		})
}

// siResourcesWithGauges returns resources whose gauges the returned
// recorder reads.
func siResourcesWithGauges(t *testing.T) (*service.Resources, *siGauges) {
	t.Helper()
	rb := service.NewResourceBuilder()
	require.NoError(t, rb.SetMetricsYAML("solace_input_test_gauges: { id: "+t.Name()+" }"))
	res, stop, err := rb.Build()
	require.NoError(t, err)
	t.Cleanup(func() { _ = stop(context.Background()) })
	g, _ := siGaugeRecorders.Load(t.Name())
	return res, g.(*siGauges)
}
