package tests

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// freeLoopbackAddr returns a 127.0.0.1 address with a port that was free a moment
// ago, for servers started by the binary.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// lockedBuffer collects a process's output while it runs.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// proc is a connect-solace process running in the background.
type proc struct {
	cmd  *exec.Cmd
	out  *lockedBuffer
	done chan struct{}
	err  error
}

// startBinary starts the shared binary with args and stops it (SIGTERM, then
// kill) when the test ends.
func startBinary(t *testing.T, args ...string) *proc {
	t.Helper()
	return startBinaryCmd(t, nil, args...)
}

// startBinaryCmd is startBinary with a hook to adjust the command (its
// environment, say) before it starts.
func startBinaryCmd(t *testing.T, adjust func(*exec.Cmd), args ...string) *proc {
	t.Helper()
	p := &proc{out: &lockedBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(binPath(t), args...)
	if adjust != nil {
		adjust(p.cmd)
	}
	p.cmd.Stdout = p.out
	p.cmd.Stderr = p.out
	require.NoError(t, p.cmd.Start())
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
			return
		default:
		}
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("connect-solace output:\n%s", p.out.String())
		}
	})
	return p
}

// wait blocks until the process exits by itself and returns its error.
func (p *proc) wait(t *testing.T, timeout time.Duration) error {
	t.Helper()
	select {
	case <-p.done:
		return p.err
	case <-time.After(timeout):
		t.Fatalf("connect-solace did not exit within %v; output:\n%s", timeout, p.out.String())
		return nil
	}
}

// httpGet returns the status and body of a GET, or an error while the server
// is not up yet.
func httpGet(url string) (int, string, error) {
	resp, err := http.Get(url) //nolint:noctx // short test requests
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// parseMetrics parses a Prometheus text exposition as a scraper would.
func parseMetrics(t *testing.T, body string) map[string]*dto.MetricFamily {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(body))
	require.NoError(t, err, body)
	return families
}

func metricLabels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, lp := range m.GetLabel() {
		out[lp.GetName()] = lp.GetValue()
	}
	return out
}

// metricValue returns the counter or gauge value of the series in fam whose
// labels include want, and whether there is one.
func metricValue(fam *dto.MetricFamily, want map[string]string) (float64, bool) {
	if fam == nil {
		return 0, false
	}
next:
	for _, m := range fam.GetMetric() {
		got := metricLabels(m)
		for k, v := range want {
			if got[k] != v {
				continue next
			}
		}
		switch {
		case m.GetCounter() != nil:
			return m.GetCounter().GetValue(), true
		case m.GetGauge() != nil:
			return m.GetGauge().GetValue(), true
		case m.GetSummary() != nil:
			return float64(m.GetSummary().GetSampleCount()), true
		case m.GetHistogram() != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

func TestPrometheusMetricsScrape(t *testing.T) {
	tests := []struct {
		name    string
		metrics string
		prefix  string
		timer   dto.MetricType
		extra   []string
	}{
		{name: "defaults", metrics: "prometheus: {}", timer: dto.MetricType_SUMMARY},
		{
			name:    "prefix histograms runtime",
			metrics: "prometheus:\n    prefix: cs\n    use_histogram_timing: true\n    histogram_buckets: [0.001, 0.1, 1]\n    add_process_metrics: true\n    add_go_metrics: true",
			prefix:  "cs_", timer: dto.MetricType_HISTOGRAM,
			extra: []string{"go_goroutines", "process_start_time_seconds"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := freeLoopbackAddr(t)
			conf := filepath.Join(t.TempDir(), "config.yaml")
			require.NoError(t, writeFile(conf, fmt.Sprintf(`
http:
  address: %s
input:
  label: gen
  generate:
    interval: 1ms
    mapping: 'root = "hello"'
pipeline:
  processors:
    - label: upper
      mapping: 'root = content().uppercase()'
output:
  label: sink
  drop: {}
metrics:
  %s
logger:
  level: warn
`, addr, tt.metrics)))
			p := startBinary(t, "run", conf)

			var families map[string]*dto.MetricFamily
			require.Eventually(t, func() bool {
				code, body, err := httpGet("http://" + addr + "/metrics")
				if err != nil || code != http.StatusOK {
					return false
				}
				families = parseMetrics(t, body)
				sent, ok := metricValue(families[tt.prefix+"output_sent"], map[string]string{"label": "sink"})
				return ok && sent >= 10
			}, 20*time.Second, 50*time.Millisecond, "no output_sent >= 10 on /metrics; output:\n%s", p.out.String())

			for _, c := range []struct {
				family, label, path string
			}{
				{"input_received", "gen", "root.input"},
				{"processor_received", "upper", "root.pipeline.processors.0"},
				{"output_sent", "sink", "root.output"},
				{"input_connection_up", "gen", "root.input"},
			} {
				v, ok := metricValue(families[tt.prefix+c.family], map[string]string{"label": c.label, "path": c.path})
				require.True(t, ok, "no %s{label=%q,path=%q}", tt.prefix+c.family, c.label, c.path)
				require.Positive(t, v, c.family)
			}
			lat := families[tt.prefix+"output_latency_ns"]
			require.NotNil(t, lat)
			require.Equal(t, tt.timer, lat.GetType())
			for _, name := range tt.extra {
				require.Contains(t, families, name)
			}
			if tt.prefix != "" {
				require.NotContains(t, families, "output_sent", "prefix must apply to every Benthos metric")
			}
		})
	}
}

// TestTracingReachesCollector runs a finite pipeline with the
// open_telemetry_collector tracer pointed at a local OTLP/HTTP receiver: the
// spans Benthos opens for the input, processor and output must arrive by the
// time the process has exited.
func TestTracingReachesCollector(t *testing.T) {
	var mu sync.Mutex
	var posts int
	spans := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/traces" {
			http.NotFound(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var req coltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		posts++
		for _, rs := range req.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				for _, s := range ss.GetSpans() {
					spans[s.GetName()]++
				}
			}
		}
		mu.Unlock()
		out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)

	conf := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, writeFile(conf, fmt.Sprintf(`
http:
  enabled: false
input:
  label: gen
  generate:
    count: 5
    interval: ""
    mapping: 'root = "hello"'
pipeline:
  processors:
    - label: upper
      mapping: 'root = content().uppercase()'
output:
  label: sink
  drop: {}
tracer:
  open_telemetry_collector:
    http:
      - address: %s
logger:
  level: warn
`, strings.TrimPrefix(srv.URL, "http://"))))
	p := startBinary(t, "run", conf)
	require.NoError(t, p.wait(t, 20*time.Second), p.out.String())

	mu.Lock()
	defer mu.Unlock()
	require.Positive(t, posts, "no OTLP POST reached /v1/traces")
	// Benthos names spans after the component type.
	for _, name := range []string{"input_generate", "mapping", "output_drop"} {
		require.GreaterOrEqual(t, spans[name], 5, "%s spans: %v", name, spans)
	}
}
