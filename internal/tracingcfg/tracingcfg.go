// Package tracingcfg holds the trace-propagation fields that the solace and
// jms inputs and outputs share: Benthos's extract_tracing_map and
// inject_tracing_map with defaults that carry the W3C Trace Context
// (traceparent, tracestate) in message properties, the wrapping of a
// component by them, and Properties, the rule of which metadata the outputs
// send as message properties (their metadata filter's keys, and the two
// trace keys while inject_tracing_map is set). One copy keeps the four
// components' tracing the same.
package tracingcfg

import (
	"context"
	"strings"
	"sync"

	"github.com/redpanda-data/benthos/v4/public/service"
	"go.opentelemetry.io/otel/trace/noop"
)

// The W3C Trace Context keys: Benthos's propagator (propagation.TraceContext)
// reads and writes these, and the default mappings carry them in metadata
// under the same names.
const (
	KeyTraceParent = "traceparent"
	KeyTraceState  = "tracestate"
)

// Field names, as Benthos's NewExtractTracingSpanMappingField and
// NewInjectTracingSpanMappingField name them.
const (
	FieldExtract = "extract_tracing_map"
	FieldInject  = "inject_tracing_map"
)

// The default mappings. Extract reads the two keys from metadata (a missing
// key is null, which the propagator ignores, so a message without them starts
// a new trace). Inject writes the span's fields to the same keys and deletes
// a key the span has no value for, so a tracestate the message brought from
// upstream is not sent with another trace's traceparent.
const (
	DefaultExtract = `root = {"` + KeyTraceParent + `": @` + KeyTraceParent + `, "` + KeyTraceState + `": @` + KeyTraceState + `}`
	DefaultInject  = `meta ` + KeyTraceParent + ` = this.` + KeyTraceParent + " | deleted()\n" +
		`meta ` + KeyTraceState + ` = this.` + KeyTraceState + ` | deleted()`
)

// What the technologies call the message properties that carry the trace
// context, for the fields' descriptions.
const (
	UserProperties        = "Solace user properties"
	ApplicationProperties = "AMQP application properties (JMS properties)"
)

// ExtractField is an input's extract_tracing_map; properties names where the
// input's messages carry properties (UserProperties, ApplicationProperties).
func ExtractField(properties string) *service.ConfigField {
	return service.NewExtractTracingSpanMappingField().
		Description("A Bloblang mapping that extracts the W3C trace context a message carries, as an object of `" + KeyTraceParent + "` and `" + KeyTraceState + "`, so that the message's spans in this pipeline continue the trace of the pipeline that sent it (Benthos's `" + FieldExtract + "`). " +
			"The default reads the metadata keys `" + KeyTraceParent + "` and `" + KeyTraceState + "`, which this input sets from the message's " + properties + " of those names and which the `solace` and `jms` outputs write by default. " +
			"The input's span of a message (`input_<name>`) is then a child of the span the sender's message carried; a message without a trace context starts a new trace. Each message of a batch is read on its own. " +
			"Empty turns extraction off. With the tracer `none` nothing is extracted; the two keys stay in the metadata either way.").
		Version("").
		Default(DefaultExtract)
}

// InjectField is an output's inject_tracing_map; properties names what the
// output sends metadata as (UserProperties, ApplicationProperties).
func InjectField(properties string) *service.ConfigField {
	return InjectFieldOf("the output", properties)
}

// InjectFieldOf is the inject_tracing_map of sender, which the description
// names ("the output", "the processor"), like InjectField.
func InjectFieldOf(sender, properties string) *service.ConfigField {
	return service.NewInjectTracingSpanMappingField().
		Description("A Bloblang mapping that writes the message's trace context, given as `this`, an object of the W3C Trace Context fields `" + KeyTraceParent + "` and (when set) `" + KeyTraceState + "`, into the message before it is sent, so that the pipeline that reads it continues the trace (Benthos's `" + FieldInject + "`). " +
			"The default writes them to the metadata keys `" + KeyTraceParent + "` and `" + KeyTraceState + "`, which the `solace` and `jms` inputs read by default. " +
			"While this field is not empty " + sender + " sends those two metadata keys as " + properties + " whatever `metadata` selects; a mapping that writes other metadata keys needs `metadata` to select them. " +
			"Empty turns injection off (the two keys are then sent only when `metadata` selects them). With the tracer `none` the mapping is not run, and a trace context the message already carries in those keys (from a `solace` or `jms` input) is sent on unchanged.").
		Version("").
		Default(DefaultInject)
}

// exampleTracer is the tracer of the component examples.
const exampleTracer = `
tracer:
  open_telemetry_collector:
    grpc: [ { address: localhost:4317 } ]
`

// InputExample is the component example of an input's tracing, for
// spec.Example: source is the input's config (indented by four spaces)
// without the tracing field, which the example adds with its default.
func InputExample(name, source string) (title, summary, config string) {
	return "Continue the sender's trace",
		"With a tracer set, the span of each message read continues the trace of the pipeline that sent it (its `" + name + "` output, or any sender that sets the W3C `traceparent` and `tracestate` properties). `" + FieldExtract + "` is shown with its default.",
		exampleTracer + `input:
  ` + name + `:
` + source + `    ` + FieldExtract + `: '` + DefaultExtract + `'
`
}

// OutputExample is the component example of an output's tracing, like
// InputExample.
func OutputExample(name, dest string) (title, summary, config string) {
	return "Carry the trace to the next pipeline",
		"With a tracer set, each message carries its trace context in the W3C `traceparent` and `tracestate` properties, so the pipeline that reads it (with a `solace` or `jms` input, or any reader of W3C Trace Context) continues the trace. `" + FieldInject + "` is shown with its default.",
		exampleTracer + `output:
  ` + name + `:
` + dest + `    ` + FieldInject + `: |
      ` + strings.ReplaceAll(DefaultInject, "\n", "\n      ") + `
`
}

// tracingOff reports whether mgr's tracer is Benthos's `none`: no span is
// recorded, so running a mapping per message would cost without effect.
func tracingOff(mgr *service.Resources) bool {
	_, off := mgr.OtelTracer().(noop.TracerProvider)
	return off
}

// WrapInput wraps in, the input called name, with its extract_tracing_map.
func WrapInput(conf *service.ParsedConfig, mgr *service.Resources, name string, in service.BatchInput) (service.BatchInput, error) {
	if tracingOff(mgr) {
		return in, nil
	}
	r := &relay{}
	each, err := conf.WrapInputExtractTracingSpanMapping(name, r)
	if err != nil || each == service.Input(r) { // the field is empty
		return in, err
	}
	return &extractInput{BatchInput: in, one: r, each: each}, nil
}

// extractInput extracts the trace context of each message of a batch through
// Benthos's single-message wrapper. Benthos's batch wrapper gives every
// message of a batch the first one's context, but the messages of one batch
// of these inputs come from different senders.
type extractInput struct {
	service.BatchInput

	mu   sync.Mutex // one batch at a time through one
	one  *relay
	each service.Input // the wrapper around one
}

func (e *extractInput) ReadBatch(ctx context.Context) (service.MessageBatch, service.AckFunc, error) {
	batch, ack, err := e.BatchInput.ReadBatch(ctx)
	if err != nil {
		return batch, ack, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, m := range batch {
		e.one.msg = m
		// Neither fails: the relay does not, and the wrapper logs a
		// failed mapping and passes the message on.
		if m, _, err = e.each.Read(ctx); err == nil {
			batch[i] = m
		}
	}
	e.one.msg = nil
	return batch, ack, nil
}

// relay is an Input whose Read returns msg.
type relay struct{ msg *service.Message }

func (r *relay) Connect(context.Context) error { return nil }
func (r *relay) Read(context.Context) (*service.Message, service.AckFunc, error) {
	return r.msg, nil, nil
}
func (r *relay) Close(context.Context) error { return nil }

// WrapOutput wraps out, the output called name, with its inject_tracing_map.
func WrapOutput(conf *service.ParsedConfig, mgr *service.Resources, name string, out service.BatchOutput) (service.BatchOutput, error) {
	if tracingOff(mgr) {
		return out, nil
	}
	return conf.WrapBatchOutputExtractTracingSpanMapping(name, out)
}

// Injector runs inject_tracing_map for a processor that sends messages on
// (solace_request_reply's requests). Benthos v4.60 offers a processor no
// public way to write a message's span into it but the output wrapper, so
// the injector writes through that wrapper to an output that drops what it
// gets. A nil Injector injects nothing.
type Injector struct{ out service.BatchOutput }

// NewInjector returns the injector of the processor called name, nil when
// the tracer is none or inject_tracing_map is empty.
func NewInjector(conf *service.ParsedConfig, mgr *service.Resources, name string) (*Injector, error) {
	if tracingOff(mgr) {
		return nil, nil
	}
	out, err := conf.WrapBatchOutputExtractTracingSpanMapping(name, discard{})
	if err != nil || out == service.BatchOutput(discard{}) { // the field is empty
		return nil, err
	}
	return &Injector{out: out}, nil
}

// Inject returns batch with its messages' trace context injected into
// copies of them, so that a message the processor keeps stays unchanged;
// batch itself when i is nil.
func (i *Injector) Inject(ctx context.Context, batch service.MessageBatch) service.MessageBatch {
	if i == nil {
		return batch
	}
	sent := make(service.MessageBatch, len(batch))
	for j, m := range batch {
		sent[j] = m.Copy()
	}
	// The wrapper replaces each message of sent by its mapped one, logs a
	// failed mapping and passes the message on; discard does not fail.
	_ = i.out.WriteBatch(ctx, sent)
	return sent
}

// discard is the output under an Injector's wrapper.
type discard struct{}

func (discard) Connect(context.Context) error                          { return nil }
func (discard) WriteBatch(context.Context, service.MessageBatch) error { return nil }
func (discard) Close(context.Context) error                            { return nil }

// Properties is which metadata an output sends as message properties: the
// keys its metadata filter selects and, while inject_tracing_map is set, the
// trace context's keys whatever the filter says (the default mapping writes
// them to metadata, and without them on the wire it would be for nothing).
type Properties struct {
	filter *service.MetadataFilter // nil: selects nothing
	trace  bool
}

// PropertiesFromParsed reads the optional metadata filter field filterField
// and inject_tracing_map.
func PropertiesFromParsed(conf *service.ParsedConfig, filterField string) (Properties, error) {
	var p Properties
	var err error
	if conf.Contains(filterField) {
		if p.filter, err = conf.FieldMetadataFilter(filterField); err != nil {
			return p, err
		}
	}
	inject, err := conf.FieldString(FieldInject)
	p.trace = inject != ""
	return p, err
}

// Of returns the properties of msg, nil when there are none. The values are
// the metadata's; the output converts them.
func (p Properties) Of(msg *service.Message) map[string]any {
	var props map[string]any
	add := func(k string, v any) error {
		if props == nil {
			props = map[string]any{}
		}
		props[k] = v
		return nil
	}
	if p.filter != nil {
		_ = p.filter.WalkMut(msg, add)
	}
	if p.trace {
		for _, k := range [...]string{KeyTraceParent, KeyTraceState} {
			if v, ok := msg.MetaGetMut(k); ok {
				_ = add(k, v)
			}
		}
	}
	return props
}
