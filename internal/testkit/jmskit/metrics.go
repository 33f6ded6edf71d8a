package jmskit

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// Metrics records what the components of a stream report to the metrics
// exporter RegisterMetrics registers: per metric and label values, the sum of
// counter increments, or the number of timings.
type Metrics struct {
	mu     sync.Mutex
	counts map[string]int64 // name{k=v,...} -> sum
}

// RegisterMetrics registers a metrics exporter, named name, that records
// into the Metrics returned: a stream selects it with
// SetMetricsYAML(name + ": {}"). Call it from a package variable's
// initialiser, once per name.
func RegisterMetrics(name string) *Metrics {
	m := &Metrics{counts: map[string]int64{}}
	service.MustRegisterMetricsExporter(name, service.NewConfigSpec(),
		func(*service.ParsedConfig, *service.Logger) (service.MetricsExporter, error) {
			return exporter{m}, nil
		})
	return m
}

// Reset forgets everything recorded.
func (m *Metrics) Reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.counts = map[string]int64{}
}

// Get sums the metric name over every label set that includes labels,
// given as "key=value" (Benthos adds labels of its own, such as path).
func (m *Metrics) Get(name string, labels ...string) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var n int64
	for k, v := range m.counts {
		kn, set, _ := strings.Cut(strings.TrimSuffix(k, "}"), "{")
		if kn != name {
			continue
		}
		have := strings.Split(set, ",")
		if !slices.ContainsFunc(labels, func(l string) bool { return !slices.Contains(have, l) }) {
			n += v
		}
	}
	return n
}

func (m *Metrics) add(key string, n int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.counts[key] += n
}

type exporter struct{ m *Metrics }

type counter struct {
	m   *Metrics
	key string
}

func (c counter) Incr(n int64)          { c.m.add(c.key, n) }
func (c counter) IncrFloat64(f float64) { c.m.add(c.key, int64(f)) }
func (c counter) Timing(int64)          { c.m.add(c.key, 1) }
func (c counter) Set(int64)             {}

func (e exporter) counter(name string, keys, values []string) counter {
	labels := make([]string, len(keys))
	for i, k := range keys {
		labels[i] = k + "=" + values[i]
	}
	return counter{e.m, name + "{" + strings.Join(labels, ",") + "}"}
}

func (e exporter) NewCounterCtor(name string, keys ...string) service.MetricsExporterCounterCtor {
	return func(values ...string) service.MetricsExporterCounter { return e.counter(name, keys, values) }
}

func (e exporter) NewTimerCtor(name string, keys ...string) service.MetricsExporterTimerCtor {
	return func(values ...string) service.MetricsExporterTimer { return e.counter(name, keys, values) }
}

func (e exporter) NewGaugeCtor(name string, keys ...string) service.MetricsExporterGaugeCtor {
	return func(values ...string) service.MetricsExporterGauge { return e.counter(name, keys, values) }
}

func (exporter) Close(context.Context) error { return nil }
