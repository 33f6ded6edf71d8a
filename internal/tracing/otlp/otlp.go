// Package otlp registers the `open_telemetry_collector` tracer, which the
// Benthos v4.60.0 core omits. It sends the spans Benthos creates around
// inputs, processors and outputs to one or more OpenTelemetry collectors over
// OTLP, by gRPC and/or HTTP, in the same shape as the mainstream Redpanda
// Connect tracer so that existing configs keep working.
package otlp

import (
	"context"
	"fmt"
	"net/url"
	"sort"

	"github.com/redpanda-data/benthos/v4/public/service"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/connect-solace/connect-solace/internal/confread"
)

const (
	ocFieldHTTP            = "http"
	ocFieldGRPC            = "grpc"
	ocFieldAddress         = "address"
	ocFieldSecure          = "secure"
	ocFieldTags            = "tags"
	ocFieldService         = "service"
	ocFieldSampling        = "sampling"
	ocFieldSamplingEnabled = "enabled"
	ocFieldSamplingRatio   = "ratio"
)

// TracerName is the name under which the tracer is registered, the key used
// under `tracer:` in a config.
const TracerName = "open_telemetry_collector"

func collectorListField(name, proto, example string) *service.ConfigField {
	return service.NewObjectListField(name,
		service.NewStringField(ocFieldAddress).
			Description("The host and port of the collector's OTLP/"+proto+" receiver.").
			Examples(example),
		service.NewBoolField(ocFieldSecure).
			Description("Connect with TLS, verifying the collector's certificate against the system roots. Off by default because collectors usually run as a local agent or sidecar.").
			Default(false),
	).
		Description("Collectors to send spans to over OTLP/" + proto + ".").
		Default([]any{})
}

// Spec describes the tracer's configuration.
func Spec() *service.ConfigSpec {
	return service.NewConfigSpec().
		Stable().
		Summary("Send tracing events to one or more [OpenTelemetry collectors](https://opentelemetry.io/docs/collector/) over OTLP (gRPC or HTTP).").
		Description(`
Benthos opens a span for every message at the input and child spans for each processor and output, so a trace shows where a message spent its time. Spans are exported in batches in the background; the last batch is flushed when the process stops.

The standard `+"`OTEL_EXPORTER_OTLP_*`"+` environment variables (headers, timeouts, certificates) are honoured for anything not set here.`).
		Fields(
			collectorListField(ocFieldHTTP, "HTTP", "localhost:4318"),
			collectorListField(ocFieldGRPC, "gRPC", "localhost:4317"),
			service.NewStringField(ocFieldService).
				Description("The `service.name` resource attribute of every span.").
				Default("connect-solace"),
			service.NewStringMapField(ocFieldTags).
				Description("Extra resource attributes added to every span, such as the deployment environment.").
				Examples(map[string]any{"deployment.environment": "prod"}).
				Advanced().
				Default(map[string]any{}),
			service.NewObjectField(ocFieldSampling,
				service.NewBoolField(ocFieldSamplingEnabled).
					Description("Sample a fraction of traces instead of all of them.").
					Default(false),
				service.NewFloatField(ocFieldSamplingRatio).
					Description("The fraction of traces kept, between 0 and 1. A trace whose parent (for example one extracted from a message) was sampled is always kept.").
					Examples(0.85, 0.5).
					Optional(),
			).
				Description("Head sampling: which traces to keep. By default every trace is kept.").
				Advanced(),
		).
		LintRule(`root = match {
  this.http.or([]).length() == 0 && this.grpc.or([]).length() == 0 => [ "no collector configured: add an address under http or grpc" ],
  this.sampling.enabled.or(false) && this.sampling.ratio.or(null) == null => [ "field sampling.ratio is required when sampling.enabled is true: set a ratio between 0 and 1" ],
  this.sampling.ratio.or(0) < 0 || this.sampling.ratio.or(0) > 1 => [ "field sampling.ratio must be between 0 and 1" ],
}`).
		Example("Local agent", "Send all traces to a collector running as a sidecar.", `
tracer:
  open_telemetry_collector:
    grpc:
      - address: localhost:4317
    tags:
      deployment.environment: prod
`)
}

func init() {
	service.MustRegisterOtelTracerProvider(TracerName, Spec(), func(conf *service.ParsedConfig) (trace.TracerProvider, error) {
		return NewFromParsed(context.Background(), conf)
	})
}

// exporters makes an exporter, with newExp, for each collector that the list
// field names (kind is its protocol, for errors), each behind a batcher.
// newExp gets the collector's endpoint URL, whose scheme, http or https,
// says whether to use TLS.
func exporters(ctx context.Context, conf *service.ParsedConfig, field, kind string,
	newExp func(ctx context.Context, endpoint string) (sdktrace.SpanExporter, error),
) ([]sdktrace.TracerProviderOption, error) {
	confs, err := conf.FieldObjectList(field)
	if err != nil {
		return nil, err
	}
	var opts []sdktrace.TracerProviderOption
	for i, c := range confs {
		addr, secure, err := collectorConf(c)
		if err != nil {
			return nil, err
		}
		endpoint := url.URL{Scheme: "http", Host: addr}
		if secure {
			endpoint.Scheme = "https"
		}
		exp, err := newExp(ctx, endpoint.String())
		if err != nil {
			return nil, fmt.Errorf("creating OTLP/%s exporter %s[%d] for %q: %w", kind, field, i, addr, err)
		}
		opts = append(opts, sdktrace.WithBatcher(exp))
	}
	return opts, nil
}

// NewFromParsed builds a tracer provider from a parsed
// `open_telemetry_collector` config. Benthos calls Shutdown on the returned
// provider when the process stops, which flushes the pending spans.
func NewFromParsed(ctx context.Context, conf *service.ParsedConfig) (*sdktrace.TracerProvider, error) {
	httpOpts, err := exporters(ctx, conf, ocFieldHTTP, "HTTP", func(ctx context.Context, endpoint string) (sdktrace.SpanExporter, error) {
		// A URL's path is used as it is: the OTLP/HTTP traces path.
		return otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(endpoint+"/v1/traces"))
	})
	if err != nil {
		return nil, err
	}
	grpcOpts, err := exporters(ctx, conf, ocFieldGRPC, "gRPC", func(ctx context.Context, endpoint string) (sdktrace.SpanExporter, error) {
		// The gRPC client connects lazily, so a collector that is down at
		// start-up does not stop the pipeline; spans are retried and then
		// dropped with a log line from the SDK.
		return otlptracegrpc.New(ctx, otlptracegrpc.WithEndpointURL(endpoint))
	})
	if err != nil {
		return nil, err
	}
	opts := append(httpOpts, grpcOpts...)

	res, err := resourceFromConf(conf)
	if err != nil {
		return nil, err
	}
	opts = append(opts, sdktrace.WithResource(res))

	sampler, err := samplerFromConf(conf)
	if err != nil {
		return nil, err
	}
	opts = append(opts, sdktrace.WithSampler(sampler))
	return sdktrace.NewTracerProvider(opts...), nil
}

func collectorConf(c *service.ParsedConfig) (addr string, secure bool, err error) {
	if addr, err = c.FieldString(ocFieldAddress); err != nil {
		return
	}
	if addr == "" {
		err = fmt.Errorf("field %s must not be empty", ocFieldAddress)
		return
	}
	secure, err = c.FieldBool(ocFieldSecure)
	return
}

func resourceFromConf(conf *service.ParsedConfig) (*resource.Resource, error) {
	var svc string
	var tags map[string]string
	rd := confread.New(conf)
	rd.String(&svc, ocFieldService)
	rd.StringMap(&tags, ocFieldTags)
	if err := rd.Err(); err != nil {
		return nil, err
	}
	attrs := []attribute.KeyValue{semconv.ServiceName(svc)}
	// Sorted so that the resource, and so the exported bytes, are the same
	// from one run to the next.
	names := make([]string, 0, len(tags))
	for k := range tags {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		attrs = append(attrs, attribute.String(k, tags[k]))
	}
	return resource.NewWithAttributes(semconv.SchemaURL, attrs...), nil
}

func samplerFromConf(conf *service.ParsedConfig) (sdktrace.Sampler, error) {
	if !conf.Contains(ocFieldSampling) {
		return sdktrace.AlwaysSample(), nil
	}
	sConf := conf.Namespace(ocFieldSampling)
	enabled, err := sConf.FieldBool(ocFieldSamplingEnabled)
	if err != nil || !enabled {
		return sdktrace.AlwaysSample(), err
	}
	if !sConf.Contains(ocFieldSamplingRatio) {
		return nil, fmt.Errorf("field %s.%s is required when %s.%s is true", ocFieldSampling, ocFieldSamplingRatio, ocFieldSampling, ocFieldSamplingEnabled)
	}
	ratio, err := sConf.FieldFloat(ocFieldSamplingRatio)
	if err != nil {
		return nil, err
	}
	if ratio < 0 || ratio > 1 {
		return nil, fmt.Errorf("field %s.%s must be between 0 and 1, got %v", ocFieldSampling, ocFieldSamplingRatio, ratio)
	}
	return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio)), nil
}
