// Package prometheus registers the `prometheus` metrics exporter, which the
// Benthos v4.60.0 core omits: without it `metrics: {prometheus: {}}` fails with
// "unable to infer metrics type". Metrics are served in the Prometheus text
// exposition format at `/metrics` on the Benthos HTTP server, and can also be
// pushed to a Pushgateway.
package prometheus

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sync"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/push"
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connect-solace/connect-solace/internal/confread"
)

const (
	pmFieldPrefix             = "prefix"
	pmFieldUseHistogramTiming = "use_histogram_timing"
	pmFieldHistogramBuckets   = "histogram_buckets"
	pmFieldSummaryQuantiles   = "summary_quantiles_objectives"
	pmFieldSummaryQuantile    = "quantile"
	pmFieldSummaryError       = "error"
	pmFieldAddProcessMetrics  = "add_process_metrics"
	pmFieldAddGoMetrics       = "add_go_metrics"
	pmFieldPushURL            = "push_url"
	pmFieldPushInterval       = "push_interval"
	pmFieldPushJobName        = "push_job_name"
	pmFieldPushBasicAuth      = "push_basic_auth"
	pmFieldPushBasicAuthUser  = "username"
	pmFieldPushBasicAuthPass  = "password"
)

const (
	nanosecondsPerSecondFloat = float64(time.Second)
	// finalPushTimeout bounds the push made on Close, so that an unreachable
	// Pushgateway cannot hold up shutdown past Benthos's own deadline.
	finalPushTimeout = 5 * time.Second
)

// ExporterName is the name under which the exporter is registered, the key
// used under `metrics:` in a config.
const ExporterName = "prometheus"

// Spec describes the exporter's configuration.
func Spec() *service.ConfigSpec {
	return service.NewConfigSpec().
		Stable().
		Summary("Host endpoint `/metrics` for Prometheus scraping, in the Prometheus text exposition format.").
		Description(`
Metrics are served by the Benthos HTTP server (see the `+"`http`"+` section of the config) at `+"`/metrics`"+`. Every metric carries the labels Benthos adds: `+"`label`"+` (the component's label), `+"`path`"+` (its position in the config) and, in streams mode, `+"`stream`"+` (the stream identifier).

Timer metrics (names ending in `+"`_ns`"+`) are exported as summaries in nanoseconds by default. With `+"`use_histogram_timing`"+` they become histograms and their values are converted to seconds so that they fit the usual bucket definitions.

Metric and label names are sanitised for Prometheus: any character outside `+"`[a-zA-Z0-9_:]`"+` becomes `+"`_`"+`.`).
		Fields(
			service.NewStringField(pmFieldPrefix).
				Description("A prefix added to every metric name, joined with an underscore. Use it to keep this binary's metrics apart from other applications' in a shared Prometheus.").
				Examples("connect_solace").
				Default(""),
			service.NewBoolField(pmFieldUseHistogramTiming).
				Description("Export timer metrics as histograms (values in seconds) rather than summaries (values in nanoseconds). Histograms can be aggregated across replicas; summaries cannot.").
				Advanced().
				Default(false),
			service.NewFloatListField(pmFieldHistogramBuckets).
				Description("Upper bounds, in seconds, of the histogram buckets used for timers when `use_histogram_timing` is true. Empty means the Prometheus client's default buckets (5ms to 10s).").
				Examples([]any{0.001, 0.01, 0.1, 1.0}).
				Advanced().
				Default([]any{}),
			service.NewObjectListField(pmFieldSummaryQuantiles,
				service.NewFloatField(pmFieldSummaryQuantile).
					Description("The quantile to compute, between 0 and 1.").
					Default(0.5),
				service.NewFloatField(pmFieldSummaryError).
					Description("The allowed absolute error of the quantile.").
					Default(0.05),
			).
				Description("The quantiles (and their allowed errors) computed by summaries when `use_histogram_timing` is false.").
				Advanced().
				Default([]any{
					map[string]any{pmFieldSummaryQuantile: 0.5, pmFieldSummaryError: 0.05},
					map[string]any{pmFieldSummaryQuantile: 0.9, pmFieldSummaryError: 0.01},
					map[string]any{pmFieldSummaryQuantile: 0.99, pmFieldSummaryError: 0.001},
				}),
			service.NewBoolField(pmFieldAddProcessMetrics).
				Description("Also export the process metrics of the Prometheus client (CPU, resident memory, open file descriptors, start time).").
				Default(false),
			service.NewBoolField(pmFieldAddGoMetrics).
				Description("Also export the Go runtime metrics of the Prometheus client (goroutines, GC pauses, heap).").
				Default(false),
			service.NewURLField(pmFieldPushURL).
				Description("An optional Pushgateway URL to push metrics to, for short-lived jobs that cannot be scraped. Metrics are served on `/metrics` either way.").
				Examples("http://pushgateway.monitoring.svc:9091").
				Advanced().
				Optional(),
			service.NewDurationField(pmFieldPushInterval).
				Description("How often metrics are pushed to `push_url`. Empty means only once, when the process stops.").
				Examples("10s").
				Advanced().
				Optional(),
			service.NewStringField(pmFieldPushJobName).
				Description("The `job` label of pushed metrics.").
				Advanced().
				Default("connect-solace"),
			service.NewObjectField(pmFieldPushBasicAuth,
				service.NewStringField(pmFieldPushBasicAuthUser).
					Description("The username for the Pushgateway.").
					Default(""),
				service.NewStringField(pmFieldPushBasicAuthPass).
					Description("The password for the Pushgateway. Take it from the environment, e.g. `${PUSHGATEWAY_PASSWORD}`.").
					Secret().
					Default(""),
			).
				Description("Basic authentication for the Pushgateway.").
				Advanced().
				Optional(),
		).
		LintRule(`root = match {
  this.histogram_buckets.or([]).length() > 0 && !this.use_histogram_timing.or(false) => [ "field histogram_buckets has no effect unless use_histogram_timing is true: set use_histogram_timing: true or remove histogram_buckets" ],
  this.push_interval.or("") != "" && this.push_url.or("") == "" => [ "field push_interval has no effect without push_url: set push_url or remove push_interval" ],
}`).
		Example("Scrape with histograms", "Serve `/metrics` on port 4195 with histogram timers and the process metrics.", `
http:
  address: 0.0.0.0:4195
metrics:
  prometheus:
    use_histogram_timing: true
    histogram_buckets: [ 0.001, 0.01, 0.1, 1 ]
    add_process_metrics: true
`)
}

func init() {
	service.MustRegisterMetricsExporter(ExporterName, Spec(), func(conf *service.ParsedConfig, log *service.Logger) (service.MetricsExporter, error) {
		return NewFromParsed(conf, log)
	})
}

// Exporter implements service.MetricsExporter on a private Prometheus
// registry, so that two exporters in one process (tests, streams builders)
// never collide on the global default registry.
type Exporter struct {
	prefix          string
	useHistogram    bool
	buckets         []float64
	quantiles       map[float64]float64
	reg             *prom.Registry
	handler         http.Handler
	log             *service.Logger
	pusher          *push.Pusher
	pushStop        chan struct{}
	pushDone        chan struct{}
	closeOnce       sync.Once
	collectorsMut   sync.Mutex
	collectorLabels map[string][]string
	collectors      map[string]prom.Collector
}

// NewFromParsed builds an exporter from a parsed `prometheus` config.
func NewFromParsed(conf *service.ParsedConfig, log *service.Logger) (*Exporter, error) {
	e := &Exporter{
		reg:             prom.NewRegistry(),
		log:             log,
		quantiles:       map[float64]float64{},
		collectorLabels: map[string][]string{},
		collectors:      map[string]prom.Collector{},
	}
	rd := confread.New(conf)
	rd.String(&e.prefix, pmFieldPrefix)
	rd.Bool(&e.useHistogram, pmFieldUseHistogramTiming)
	rd.FloatList(&e.buckets, pmFieldHistogramBuckets)
	if err := rd.Err(); err != nil {
		return nil, err
	}
	if len(e.buckets) == 0 {
		e.buckets = prom.DefBuckets
	}
	if !slices.IsSorted(e.buckets) {
		return nil, fmt.Errorf("field %s must be in increasing order, got %v", pmFieldHistogramBuckets, e.buckets)
	}
	qConfs, err := conf.FieldObjectList(pmFieldSummaryQuantiles)
	if err != nil {
		return nil, err
	}
	for i, qc := range qConfs {
		q, err := qc.FieldFloat(pmFieldSummaryQuantile)
		if err != nil {
			return nil, err
		}
		if q < 0 || q > 1 {
			return nil, fmt.Errorf("%s[%d].%s must be between 0 and 1, got %v", pmFieldSummaryQuantiles, i, pmFieldSummaryQuantile, q)
		}
		qe, err := qc.FieldFloat(pmFieldSummaryError)
		if err != nil {
			return nil, err
		}
		e.quantiles[q] = qe
	}

	if addProc, err := conf.FieldBool(pmFieldAddProcessMetrics); err != nil {
		return nil, err
	} else if addProc {
		if err := e.reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
			return nil, fmt.Errorf("registering process metrics: %w", err)
		}
	}
	if addGo, err := conf.FieldBool(pmFieldAddGoMetrics); err != nil {
		return nil, err
	} else if addGo {
		if err := e.reg.Register(collectors.NewGoCollector()); err != nil {
			return nil, fmt.Errorf("registering Go runtime metrics: %w", err)
		}
	}
	e.handler = promhttp.HandlerFor(e.reg, promhttp.HandlerOpts{ErrorLog: promErrLogger{log}})

	if conf.Contains(pmFieldPushURL) {
		if err := e.initPush(conf); err != nil {
			return nil, err
		}
	}
	return e, nil
}

func (e *Exporter) initPush(conf *service.ParsedConfig) error {
	rd := confread.New(conf)
	var pushURL, job, user, pass string
	rd.String(&pushURL, pmFieldPushURL)
	rd.String(&job, pmFieldPushJobName)
	if rd.Contains(pmFieldPushBasicAuth) {
		auth := rd.In(pmFieldPushBasicAuth)
		auth.String(&user, pmFieldPushBasicAuthUser)
		auth.String(&pass, pmFieldPushBasicAuthPass)
	}
	var interval time.Duration
	pushes := rd.Contains(pmFieldPushInterval)
	if pushes {
		rd.Duration(&interval, pmFieldPushInterval)
	}
	if err := rd.Err(); err != nil {
		return err
	}
	e.pusher = push.New(pushURL, job).Gatherer(e.reg)
	if user != "" || pass != "" {
		e.pusher = e.pusher.BasicAuth(user, pass)
	}
	if !pushes {
		return nil
	}
	if interval <= 0 {
		return fmt.Errorf("field %s must be positive, got %v", pmFieldPushInterval, interval)
	}
	e.pushStop = make(chan struct{})
	e.pushDone = make(chan struct{})
	go e.pushLoop(interval)
	return nil
}

func (e *Exporter) pushLoop(interval time.Duration) {
	defer close(e.pushDone)
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ticker.C:
			// Push (not Add) replaces the group, so metrics of components that
			// went away do not linger at the gateway.
			if err := e.pusher.Push(); err != nil {
				e.log.Warnf("Pushing metrics to the Pushgateway: %v", err)
			}
		case <-e.pushStop:
			return
		}
	}
}

// HandlerFunc serves the metrics; Benthos mounts it at `/metrics` (and
// `/stats`) on its HTTP server.
func (e *Exporter) HandlerFunc() http.HandlerFunc {
	return e.handler.ServeHTTP
}

// Registry exposes the underlying registry, for tests and for gathering
// metrics without HTTP.
func (e *Exporter) Registry() *prom.Registry {
	return e.reg
}

var invalidNameChars = regexp.MustCompile(`[^a-zA-Z0-9_:]`)

// sanitiseName makes a Benthos metric or label name a legal Prometheus one.
// Benthos names are already snake_case, but custom `metric` processor names
// are free text.
func sanitiseName(name string) string {
	name = invalidNameChars.ReplaceAllString(name, "_")
	if name == "" || (name[0] >= '0' && name[0] <= '9') {
		name = "_" + name
	}
	return name
}

func (e *Exporter) fullName(name string) string {
	if e.prefix != "" {
		name = e.prefix + "_" + name
	}
	return sanitiseName(name)
}

func sanitiseLabels(keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = sanitiseName(k)
	}
	return out
}

// collector returns the collector registered under name, creating it with
// mk on first use. Benthos asks for the same metric once per component (every
// input asks for `input_received`), always with the same label keys, so the
// vector is shared. A metric requested again with different label keys
// cannot be registered in Prometheus; it is logged and dropped (nil).
func (e *Exporter) collector(name string, labels []string, mk func() prom.Collector) prom.Collector {
	e.collectorsMut.Lock()
	defer e.collectorsMut.Unlock()
	if c, ok := e.collectors[name]; ok {
		if !slices.Equal(e.collectorLabels[name], labels) {
			e.log.Warnf("Metric %q was registered with labels %v and is now requested with %v: the new one is dropped", name, e.collectorLabels[name], labels)
			return nil
		}
		return c
	}
	c := mk()
	if err := e.reg.Register(c); err != nil {
		// A name clash with the process or Go collectors, for example.
		e.log.Warnf("Registering metric %q: %v", name, err)
		return nil
	}
	e.collectors[name] = c
	e.collectorLabels[name] = labels
	return c
}

// vec is a Prometheus vector collector whose child, for one set of label
// values, is a C.
type vec[C any] interface {
	prom.Collector
	WithLabelValues(lvs ...string) C
}

// vecCtor returns the constructor of the metric name's children: build
// makes the vector collector, under the full name and with the sanitised
// labels, when the name is new (collector); adapt makes Benthos's metric of
// a child. Where the name is taken by another kind of collector, or
// registering failed, the children are noops.
func vecCtor[V vec[C], C, M any](e *Exporter, name string, labelKeys []string, build func(name string, labels []string) V, adapt func(C) M) func(labelValues ...string) M {
	name = e.fullName(name)
	labels := sanitiseLabels(labelKeys)
	vec, ok := e.collector(name, labels, func() prom.Collector { return build(name, labels) }).(V)
	none := any(noop{}).(M)
	return func(labelValues ...string) M {
		if !ok {
			return none
		}
		return adapt(vec.WithLabelValues(labelValues...))
	}
}

// NewCounterCtor implements service.MetricsExporter.
func (e *Exporter) NewCounterCtor(name string, labelKeys ...string) service.MetricsExporterCounterCtor {
	return vecCtor(e, name, labelKeys, func(name string, labels []string) *prom.CounterVec {
		return prom.NewCounterVec(prom.CounterOpts{Name: name, Help: "Benthos Counter metric"}, labels)
	}, func(c prom.Counter) service.MetricsExporterCounter { return &counter{c: c} })
}

// NewTimerCtor implements service.MetricsExporter: a histogram in seconds
// or a summary in nanoseconds.
func (e *Exporter) NewTimerCtor(name string, labelKeys ...string) service.MetricsExporterTimerCtor {
	if e.useHistogram {
		return vecCtor(e, name, labelKeys, func(name string, labels []string) *prom.HistogramVec {
			return prom.NewHistogramVec(prom.HistogramOpts{Name: name, Help: "Benthos Timing metric (seconds)", Buckets: e.buckets}, labels)
		}, func(o prom.Observer) service.MetricsExporterTimer { return &histogramTimer{o: o} })
	}
	return vecCtor(e, name, labelKeys, func(name string, labels []string) *prom.SummaryVec {
		return prom.NewSummaryVec(prom.SummaryOpts{Name: name, Help: "Benthos Timing metric (nanoseconds)", Objectives: e.quantiles}, labels)
	}, func(o prom.Observer) service.MetricsExporterTimer { return &summaryTimer{o: o} })
}

// NewGaugeCtor implements service.MetricsExporter.
func (e *Exporter) NewGaugeCtor(name string, labelKeys ...string) service.MetricsExporterGaugeCtor {
	return vecCtor(e, name, labelKeys, func(name string, labels []string) *prom.GaugeVec {
		return prom.NewGaugeVec(prom.GaugeOpts{Name: name, Help: "Benthos Gauge metric"}, labels)
	}, func(g prom.Gauge) service.MetricsExporterGauge { return &gauge{g: g} })
}

// Close stops the push loop and, when a Pushgateway is configured, pushes
// the final values so that a job's last counts are not lost.
func (e *Exporter) Close(ctx context.Context) error {
	var err error
	e.closeOnce.Do(func() {
		if e.pushStop != nil {
			close(e.pushStop)
			select {
			case <-e.pushDone:
			case <-ctx.Done():
				err = ctx.Err()
				return
			}
		}
		if e.pusher != nil {
			pushCtx, cancel := context.WithTimeout(ctx, finalPushTimeout)
			defer cancel()
			if pErr := e.pusher.PushContext(pushCtx); pErr != nil {
				err = fmt.Errorf("final push of metrics to the Pushgateway: %w", pErr)
			}
		}
	})
	return err
}

// counter, histogramTimer, summaryTimer and gauge adapt Prometheus metrics to
// Benthos's exporter interfaces; the Float64 variants are picked up by
// Benthos when present, so float increments are not truncated.
type counter struct{ c prom.Counter }

func (c *counter) Incr(n int64)          { c.c.Add(float64(n)) }
func (c *counter) IncrFloat64(n float64) { c.c.Add(n) }

type histogramTimer struct{ o prom.Observer }

func (h *histogramTimer) Timing(d int64) { h.o.Observe(float64(d) / nanosecondsPerSecondFloat) }

type summaryTimer struct{ o prom.Observer }

func (s *summaryTimer) Timing(d int64) { s.o.Observe(float64(d)) }

type gauge struct{ g prom.Gauge }

func (g *gauge) Set(v int64)          { g.g.Set(float64(v)) }
func (g *gauge) SetFloat64(v float64) { g.g.Set(v) }

// noop stands in for a metric that could not be registered, so components
// keep working when one metric is dropped.
type noop struct{}

func (noop) Incr(int64)          {}
func (noop) IncrFloat64(float64) {}
func (noop) Timing(int64)        {}
func (noop) Set(int64)           {}
func (noop) SetFloat64(float64)  {}

// promErrLogger routes the HTTP handler's gathering errors to Benthos's log.
type promErrLogger struct{ l *service.Logger }

func (l promErrLogger) Println(v ...any) { l.l.Error(fmt.Sprint(v...)) }
