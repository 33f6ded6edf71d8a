package prometheus

import (
	"testing"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"
)

// BenchmarkExporterOverhead compares the exporter's counter and timer paths,
// as Benthos calls them per message, with the same operations on bare
// client_golang metrics. It reports overhead_ratio (exporter ns/op divided
// by bare ns/op); the adapter should stay close to 1.
func BenchmarkExporterOverhead(b *testing.B) {
	pConf, err := Spec().ParseYAML(`{}`, nil)
	if err != nil {
		b.Fatal(err)
	}
	e, err := NewFromParsed(pConf, nil)
	if err != nil {
		b.Fatal(err)
	}
	counter := e.NewCounterCtor("output_sent", "label", "path")("out", "root.output")
	timer := e.NewTimerCtor("output_latency_ns", "label", "path")("out", "root.output")

	bareCounter := prom.NewCounterVec(prom.CounterOpts{Name: "c", Help: "c"}, []string{"label", "path"}).WithLabelValues("out", "root.output")
	bareSummary := prom.NewSummaryVec(prom.SummaryOpts{Name: "s", Help: "s", Objectives: map[float64]float64{0.5: 0.05, 0.9: 0.01, 0.99: 0.001}},
		[]string{"label", "path"}).WithLabelValues("out", "root.output")

	run := func(f func(i int)) time.Duration {
		start := time.Now()
		for i := range b.N {
			f(i)
		}
		return time.Since(start)
	}
	b.ResetTimer()
	// Interleave rounds so that machine noise hits both sides alike.
	var viaExporter, bare time.Duration
	for range 3 {
		viaExporter += run(func(i int) { counter.Incr(1); timer.Timing(int64(i)) })
		bare += run(func(i int) { bareCounter.Add(1); bareSummary.Observe(float64(i)) })
	}
	b.StopTimer()
	if bare > 0 {
		b.ReportMetric(float64(viaExporter)/float64(bare), "overhead_ratio")
	}
	b.ReportMetric(float64(viaExporter.Nanoseconds())/float64(3*b.N), "exporter_ns/msg")
}
