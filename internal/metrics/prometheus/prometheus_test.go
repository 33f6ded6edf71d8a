package prometheus

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/require"
)

func newExporter(t *testing.T, yaml string) *Exporter {
	t.Helper()
	pConf, err := Spec().ParseYAML(yaml, nil)
	require.NoError(t, err)
	e, err := NewFromParsed(pConf, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close(t.Context()) })
	return e
}

// scrape fetches the exporter's handler output and parses it as a scraper
// would.
func scrape(t *testing.T, e *Exporter) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	e.HandlerFunc()(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(rec.Body.String()))
	require.NoError(t, err, rec.Body.String())
	return families
}

func labelsOf(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, lp := range m.GetLabel() {
		out[lp.GetName()] = lp.GetValue()
	}
	return out
}

func TestExporterKinds(t *testing.T) {
	tests := []struct {
		name     string
		conf     string
		family   string
		wantType dto.MetricType
		check    func(t *testing.T, m *dto.Metric)
	}{
		{
			name: "counter", conf: `{}`, family: "input_received", wantType: dto.MetricType_COUNTER,
			check: func(t *testing.T, m *dto.Metric) { require.InDelta(t, 7.0, m.GetCounter().GetValue(), 0) },
		},
		{
			name: "prefixed counter", conf: `prefix: connect_solace`, family: "connect_solace_input_received", wantType: dto.MetricType_COUNTER,
			check: func(t *testing.T, m *dto.Metric) { require.InDelta(t, 7.0, m.GetCounter().GetValue(), 0) },
		},
		{
			name: "gauge", conf: `{}`, family: "input_connection_up", wantType: dto.MetricType_GAUGE,
			check: func(t *testing.T, m *dto.Metric) { require.InDelta(t, 1.0, m.GetGauge().GetValue(), 0) },
		},
		{
			name: "summary timer in ns", conf: `{}`, family: "output_latency_ns", wantType: dto.MetricType_SUMMARY,
			check: func(t *testing.T, m *dto.Metric) {
				require.Equal(t, uint64(2), m.GetSummary().GetSampleCount())
				require.InDelta(t, 3e9, m.GetSummary().GetSampleSum(), 1)
				require.Len(t, m.GetSummary().GetQuantile(), 3)
			},
		},
		{
			name: "histogram timer in seconds", conf: "use_histogram_timing: true\nhistogram_buckets: [0.5, 1.5, 5]",
			family: "output_latency_ns", wantType: dto.MetricType_HISTOGRAM,
			check: func(t *testing.T, m *dto.Metric) {
				h := m.GetHistogram()
				require.Equal(t, uint64(2), h.GetSampleCount())
				require.InDelta(t, 3.0, h.GetSampleSum(), 1e-9)
				// 1s and 2s: nothing under 0.5, one under 1.5, both under 5
				// (the text format adds the +Inf bucket).
				got := map[float64]uint64{}
				for _, b := range h.GetBucket() {
					got[b.GetUpperBound()] = b.GetCumulativeCount()
				}
				require.Equal(t, uint64(0), got[0.5])
				require.Equal(t, uint64(1), got[1.5])
				require.Equal(t, uint64(2), got[5])
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newExporter(t, tt.conf)
			e.NewCounterCtor("input_received", "label", "path")("in", "root.input").Incr(7)
			e.NewGaugeCtor("input_connection_up", "label", "path")("in", "root.input").Set(1)
			tm := e.NewTimerCtor("output_latency_ns", "label", "path")("out", "root.output")
			tm.Timing(1e9)
			tm.Timing(2e9)

			families := scrape(t, e)
			fam, ok := families[tt.family]
			require.True(t, ok, "family %q missing; have %v", tt.family, keys(families))
			require.Equal(t, tt.wantType, fam.GetType())
			require.Len(t, fam.GetMetric(), 1)
			tt.check(t, fam.GetMetric()[0])
		})
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestExporterSharesVectorsAcrossComponents(t *testing.T) {
	e := newExporter(t, `{}`)
	e.NewCounterCtor("input_received", "label", "path")("a", "root.input.broker.inputs.0").Incr(1)
	e.NewCounterCtor("input_received", "label", "path")("b", "root.input.broker.inputs.1").Incr(2)
	fam := scrape(t, e)["input_received"]
	require.NotNil(t, fam)
	got := map[string]float64{}
	for _, m := range fam.GetMetric() {
		got[labelsOf(m)["label"]] = m.GetCounter().GetValue()
	}
	require.Equal(t, map[string]float64{"a": 1, "b": 2}, got)
}

func TestExporterDropsConflictingLabels(t *testing.T) {
	e := newExporter(t, `{}`)
	e.NewCounterCtor("x", "label")("a").Incr(1)
	// Same name, different label keys: Prometheus would reject it; the
	// exporter must not panic and must keep the first definition.
	c := e.NewCounterCtor("x", "label", "path")("a", "b")
	c.Incr(5)
	fam := scrape(t, e)["x"]
	require.Len(t, fam.GetMetric(), 1)
	require.InDelta(t, 1.0, fam.GetMetric()[0].GetCounter().GetValue(), 0)
}

func TestExporterSanitisesNames(t *testing.T) {
	e := newExporter(t, `{}`)
	e.NewCounterCtor("my.custom-metric", "weird key")("v").Incr(1)
	e.NewGaugeCtor("9lives")().Set(9)
	families := scrape(t, e)
	fam := families["my_custom_metric"]
	require.NotNil(t, fam, "have %v", keys(families))
	require.Equal(t, map[string]string{"weird_key": "v"}, labelsOf(fam.GetMetric()[0]))
	require.NotNil(t, families["_9lives"], "have %v", keys(families))
}

func TestExporterRuntimeCollectors(t *testing.T) {
	tests := []struct {
		conf       string
		wantGo     bool
		wantProces bool
	}{
		{conf: `{}`},
		{conf: `add_go_metrics: true`, wantGo: true},
		{conf: `add_process_metrics: true`, wantProces: true},
	}
	for _, tt := range tests {
		t.Run(tt.conf, func(t *testing.T) {
			families := scrape(t, newExporter(t, tt.conf))
			_, hasGo := families["go_goroutines"]
			_, hasProc := families["process_start_time_seconds"]
			require.Equal(t, tt.wantGo, hasGo)
			require.Equal(t, tt.wantProces, hasProc)
		})
	}
}

func TestExporterRejectsBadConfig(t *testing.T) {
	for _, conf := range []string{
		"histogram_buckets: [1, 0.5]\nuse_histogram_timing: true",
		"summary_quantiles_objectives: [{quantile: 1.5, error: 0.1}]",
	} {
		t.Run(conf, func(t *testing.T) {
			pConf, err := Spec().ParseYAML(conf, nil)
			require.NoError(t, err)
			_, err = NewFromParsed(pConf, nil)
			require.Error(t, err)
		})
	}
}

func TestExporterLintRules(t *testing.T) {
	tests := []struct {
		conf string
		want string
	}{
		{conf: "histogram_buckets: [0.1]", want: "use_histogram_timing"},
		{conf: "push_interval: 1s", want: "push_url"},
		{conf: "use_histogram_timing: true\nhistogram_buckets: [0.1]"},
	}
	env := service.NewEnvironment()
	for _, tt := range tests {
		t.Run(tt.conf, func(t *testing.T) {
			indented := "    " + strings.ReplaceAll(tt.conf, "\n", "\n    ")
			lints, err := env.FullConfigSchema("", "").NewStreamConfigLinter().
				LintYAML([]byte("metrics:\n  " + ExporterName + ":\n" + indented + "\n"))
			require.NoError(t, err)
			if tt.want == "" {
				require.Empty(t, lints)
				return
			}
			require.Len(t, lints, 1)
			require.Contains(t, lints[0].What, tt.want)
		})
	}
}

func TestExporterPushesOnClose(t *testing.T) {
	var pushes atomic.Int32
	var body atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		body.Store(string(b))
		user, pass, _ := r.BasicAuth()
		if user != "u" || pass != "p" || !strings.Contains(r.URL.Path, "/job/myjob") {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		pushes.Add(1)
	}))
	t.Cleanup(srv.Close)

	pConf, err := Spec().ParseYAML("push_url: "+srv.URL+"\npush_job_name: myjob\npush_basic_auth: {username: u, password: p}", nil)
	require.NoError(t, err)
	e, err := NewFromParsed(pConf, nil)
	require.NoError(t, err)
	e.NewCounterCtor("output_sent")().Incr(3)
	require.NoError(t, e.Close(t.Context()))
	require.Equal(t, int32(1), pushes.Load())
	require.NotEmpty(t, body.Load())
}

func TestExporterPushesPeriodically(t *testing.T) {
	pushed := make(chan struct{}, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		select {
		case pushed <- struct{}{}:
		default:
		}
	}))
	t.Cleanup(srv.Close)
	pConf, err := Spec().ParseYAML("push_url: "+srv.URL+"\npush_interval: 10ms", nil)
	require.NoError(t, err)
	e, err := NewFromParsed(pConf, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close(t.Context()) })
	for range 2 {
		select {
		case <-pushed:
		case <-t.Context().Done():
			t.Fatal("no periodic push")
		}
	}
}
