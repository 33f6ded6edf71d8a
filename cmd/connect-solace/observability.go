package main

// The Benthos v4.60.0 core ships no Prometheus exporter and no tracer;
// operators expect `metrics: {prometheus: {}}` and
// `tracer: {open_telemetry_collector: {...}}` to work as in the mainstream
// distributions, so these register them.
import (
	_ "github.com/connect-solace/connect-solace/internal/metrics/prometheus"
	_ "github.com/connect-solace/connect-solace/internal/tracing/otlp"
)
