package tracingcfg

import (
	"context"
	"sync"
	"testing"
	"time"

	_ "github.com/redpanda-data/benthos/v4/public/components/pure"
	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"

	"github.com/connect-solace/connect-solace/internal/testkit/tracekit"
)

// fixtureInput hands out one batch of msgs, then ends.
type fixtureInput struct {
	msgs service.MessageBatch
	done bool
}

func (f *fixtureInput) Connect(context.Context) error { return nil }
func (f *fixtureInput) Close(context.Context) error   { return nil }
func (f *fixtureInput) ReadBatch(context.Context) (service.MessageBatch, service.AckFunc, error) {
	if f.done {
		return nil, nil, service.ErrEndOfInput
	}
	f.done = true
	return f.msgs, func(context.Context, error) error { return nil }, nil
}

// captureOutput keeps what Properties sends of every message.
type captureOutput struct {
	sent   Properties
	mu     sync.Mutex
	props  []map[string]any
	bodies []string
}

func (c *captureOutput) Connect(context.Context) error { return nil }
func (c *captureOutput) Close(context.Context) error   { return nil }
func (c *captureOutput) WriteBatch(_ context.Context, b service.MessageBatch) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range b {
		c.props = append(c.props, c.sent.Of(m))
		body, _ := m.AsBytes()
		c.bodies = append(c.bodies, string(body))
	}
	return nil
}

// register adds the input trace_fixture (handing out msgs in one batch) and
// the output trace_capture, both wrapped by this package, to env.
func register(t *testing.T, env *service.Environment, msgs service.MessageBatch) *captureOutput {
	t.Helper()
	capture := &captureOutput{}
	require.NoError(t, env.RegisterBatchInput("trace_fixture",
		service.NewConfigSpec().Field(ExtractField(UserProperties)),
		func(conf *service.ParsedConfig, mgr *service.Resources) (service.BatchInput, error) {
			return WrapInput(conf, mgr, "trace_fixture", &fixtureInput{msgs: msgs})
		}))
	require.NoError(t, env.RegisterBatchOutput("trace_capture",
		service.NewConfigSpec().Field(InjectField(UserProperties)).Field(service.NewMetadataFilterField("metadata").Optional()),
		func(conf *service.ParsedConfig, mgr *service.Resources) (service.BatchOutput, service.BatchPolicy, int, error) {
			var err error
			if capture.sent, err = PropertiesFromParsed(conf, "metadata"); err != nil {
				return nil, service.BatchPolicy{}, 0, err
			}
			out, err := WrapOutput(conf, mgr, "trace_capture", capture)
			return out, service.BatchPolicy{}, 1, err
		}))
	return capture
}

func run(t *testing.T, env *service.Environment, tracer, inYAML, outYAML string) {
	t.Helper()
	sb := env.NewStreamBuilder()
	require.NoError(t, sb.SetLoggerYAML("level: none"))
	if tracer != "" {
		require.NoError(t, sb.SetTracerYAML(tracer))
	}
	require.NoError(t, sb.AddInputYAML("trace_fixture: "+inYAML))
	require.NoError(t, sb.AddOutputYAML("trace_capture: "+outYAML))
	stream, err := sb.Build()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	require.NoError(t, stream.Run(ctx))
}

func remote(trace0, span0 byte) trace.SpanContext {
	return trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{trace0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
		SpanID:     trace.SpanID{span0, 1, 2, 3, 4, 5, 6, 7},
		TraceFlags: trace.FlagsSampled,
		Remote:     true,
	})
}

// TestDefaultsContinueEachMessagesTrace reads a batch of three messages, two
// carrying the trace context of different senders in metadata (one with a
// tracestate) and one none, with the default mappings: each message's input
// span continues its own sender's trace (Benthos's batch wrapper would give
// all three the first one's) or starts a new one, and the output sends each
// input span's context, with the tracestate it inherited, in the two keys.
func TestDefaultsContinueEachMessagesTrace(t *testing.T) {
	env, rec := tracekit.NewEnv(t)
	a, b := remote(0xa, 0xa), remote(0xb, 0xb)
	msgs := service.MessageBatch{service.NewMessage([]byte("a")), service.NewMessage([]byte("b")), service.NewMessage([]byte("c"))}
	msgs[0].MetaSetMut(KeyTraceParent, tracekit.Traceparent(a))
	msgs[0].MetaSetMut(KeyTraceState, "vendor=a")
	msgs[1].MetaSetMut(KeyTraceParent, tracekit.Traceparent(b))
	// A tracestate without a traceparent belongs to no trace: it must not
	// be sent on with the new trace's traceparent.
	msgs[2].MetaSetMut(KeyTraceState, "vendor=stale")
	capture := register(t, env, msgs)
	run(t, env, tracekit.TracerYAML, "{}", "{}")

	spans := tracekit.Ended(rec, "input_trace_fixture")
	require.Len(t, spans, 3)
	byBody := map[trace.TraceID]int{}
	for i, s := range spans {
		byBody[s.SpanContext().TraceID()] = i
	}
	sa, sb := spans[byBody[a.TraceID()]], spans[byBody[b.TraceID()]]
	tracekit.RequireChildOf(t, a, sa, true)
	tracekit.RequireChildOf(t, b, sb, true)
	require.Equal(t, "vendor=a", sa.SpanContext().TraceState().String())
	var fresh int
	for _, s := range spans {
		if !s.Parent().IsValid() {
			fresh++
			require.NotEqual(t, a.TraceID(), s.SpanContext().TraceID())
			require.NotEqual(t, b.TraceID(), s.SpanContext().TraceID())
		}
	}
	require.Equal(t, 1, fresh, "the message without a trace context starts a new trace")

	require.Len(t, capture.props, 3)
	for i, s := range []trace.SpanContext{sa.SpanContext(), sb.SpanContext()} {
		want := map[string]any{KeyTraceParent: tracekit.Traceparent(s)}
		if i == 0 {
			want[KeyTraceState] = "vendor=a"
		}
		require.Equal(t, want, capture.props[i], "message %d", i)
	}
	require.Len(t, capture.props[2], 1, "the stale tracestate is deleted: %v", capture.props[2])
	require.Contains(t, capture.props[2], KeyTraceParent)
}

// TestCustomMappings carries the trace context in another metadata key, as a
// user's mappings may: the input extracts it from there, the output writes
// it there and sends it as its metadata filter selects it (the W3C keys,
// which the mapping left alone, the message does not have).
func TestCustomMappings(t *testing.T) {
	env, rec := tracekit.NewEnv(t)
	a := remote(0xa, 0xa)
	msg := service.NewMessage([]byte("a"))
	msg.MetaSetMut("x_trace", tracekit.Traceparent(a))
	capture := register(t, env, service.MessageBatch{msg})
	run(t, env, tracekit.TracerYAML,
		`{ extract_tracing_map: 'root.traceparent = @x_trace' }`,
		`{ inject_tracing_map: 'meta x_trace = this.traceparent', metadata: { include_prefixes: [ x_ ] } }`)

	s := tracekit.One(t, rec, "input_trace_fixture")
	tracekit.RequireChildOf(t, a, s, true)
	require.Equal(t, map[string]any{"x_trace": tracekit.Traceparent(s.SpanContext())}, capture.props[0])
}

// TestPayloadMappings carries the trace context in the JSON payload, as
// docs/operations.md shows.
func TestPayloadMappings(t *testing.T) {
	env, rec := tracekit.NewEnv(t)
	a := remote(0xa, 0xa)
	capture := register(t, env, service.MessageBatch{service.NewMessage([]byte(`{"n":1,"trace":{"traceparent":"` + tracekit.Traceparent(a) + `"}}`))})
	run(t, env, tracekit.TracerYAML, `{ extract_tracing_map: 'root = this.trace' }`, `{ inject_tracing_map: 'root.trace = this' }`)

	s := tracekit.One(t, rec, "input_trace_fixture")
	tracekit.RequireChildOf(t, a, s, true)
	require.JSONEq(t, `{"n":1,"trace":{"traceparent":"`+tracekit.Traceparent(s.SpanContext())+`"}}`, capture.bodies[0])
}

// TestEmptyMappingsTurnPropagationOff sets both fields empty: the message's
// trace context is neither extracted (its span starts a new trace) nor
// injected, and the output does not send the keys it carries.
func TestEmptyMappingsTurnPropagationOff(t *testing.T) {
	env, rec := tracekit.NewEnv(t)
	a := remote(0xa, 0xa)
	msg := service.NewMessage([]byte("a"))
	msg.MetaSetMut(KeyTraceParent, tracekit.Traceparent(a))
	capture := register(t, env, service.MessageBatch{msg})
	run(t, env, tracekit.TracerYAML, `{ extract_tracing_map: "" }`, `{ inject_tracing_map: "" }`)

	tracekit.RequireRoot(t, tracekit.One(t, rec, "input_trace_fixture"))
	require.Equal(t, []map[string]any{nil}, capture.props)
}

// TestTracerNoneRunsNoMapping: with Benthos's default tracer (none) the
// components are not wrapped, and the output sends the trace context the
// message carries unchanged, so a pipeline that does not trace passes a
// trace on.
func TestTracerNoneRunsNoMapping(t *testing.T) {
	res := service.MockResources() // its tracer is the no-op one
	spec := service.NewConfigSpec().Field(ExtractField(UserProperties)).Field(InjectField(UserProperties))
	conf, err := spec.ParseYAML("{}", nil)
	require.NoError(t, err)
	in := &fixtureInput{}
	wrappedIn, err := WrapInput(conf, res, "x", in)
	require.NoError(t, err)
	require.Same(t, in, wrappedIn)
	out := &captureOutput{}
	wrappedOut, err := WrapOutput(conf, res, "x", out)
	require.NoError(t, err)
	require.Same(t, out, wrappedOut)

	env := service.GlobalEnvironment().Clone()
	a := remote(0xa, 0xa)
	msg := service.NewMessage([]byte("a"))
	msg.MetaSetMut(KeyTraceParent, tracekit.Traceparent(a))
	msg.MetaSetMut(KeyTraceState, "vendor=a")
	capture := register(t, env, service.MessageBatch{msg})
	run(t, env, "", "{}", "{}")
	require.Equal(t, []map[string]any{{KeyTraceParent: tracekit.Traceparent(a), KeyTraceState: "vendor=a"}}, capture.props)
}

// injectProc is a processor that keeps what an Injector makes of each batch.
type injectProc struct {
	inj  *Injector
	mu   sync.Mutex
	sent service.MessageBatch
	kept service.MessageBatch // the messages that go on
}

func (p *injectProc) ProcessBatch(ctx context.Context, b service.MessageBatch) ([]service.MessageBatch, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sent = append(p.sent, p.inj.Inject(ctx, b)...)
	p.kept = append(p.kept, b...)
	return []service.MessageBatch{b}, nil
}

func (p *injectProc) Close(context.Context) error { return nil }

// TestInjector runs an Injector in a processor between trace_fixture and
// trace_capture: with a tracer and the default mapping the copies it
// returns carry the input span's traceparent and the messages that go on
// do not; with the tracer none or an empty mapping there is no injector.
func TestInjector(t *testing.T) {
	for _, tc := range []struct {
		name, tracer, field string
		injects             bool
	}{
		{name: "default", tracer: tracekit.TracerYAML, injects: true},
		{name: "empty mapping", tracer: tracekit.TracerYAML, field: `inject_tracing_map: ""`},
		{name: "tracer none", tracer: "none: {}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, rec := tracekit.NewEnv(t)
			capture := register(t, env, service.MessageBatch{service.NewMessage([]byte("a"))})
			proc := &injectProc{}
			require.NoError(t, env.RegisterBatchProcessor("trace_inject",
				service.NewConfigSpec().Field(InjectFieldOf("the processor", UserProperties)),
				func(conf *service.ParsedConfig, mgr *service.Resources) (service.BatchProcessor, error) {
					var err error
					proc.inj, err = NewInjector(conf, mgr, "trace_inject")
					return proc, err
				}))
			sb := env.NewStreamBuilder()
			require.NoError(t, sb.SetLoggerYAML("level: none"))
			require.NoError(t, sb.SetTracerYAML(tc.tracer))
			require.NoError(t, sb.AddInputYAML("trace_fixture: { extract_tracing_map: '' }"))
			require.NoError(t, sb.AddProcessorYAML("trace_inject: {"+tc.field+"}"))
			require.NoError(t, sb.AddOutputYAML(`trace_capture: { inject_tracing_map: "" }`))
			stream, err := sb.Build()
			require.NoError(t, err)
			require.NoError(t, stream.Run(t.Context()))

			require.Equal(t, tc.injects, proc.inj != nil, "an injector")
			require.Len(t, proc.sent, 1)
			tp, ok := proc.sent[0].MetaGetMut(KeyTraceParent)
			require.Equal(t, tc.injects, ok, "the request carries a traceparent")
			if tc.injects {
				require.Equal(t, tracekit.Traceparent(tracekit.One(t, rec, "input_trace_fixture").SpanContext()), tp)
			}
			require.Len(t, capture.bodies, 1)
			_, ok = proc.kept[0].MetaGetMut(KeyTraceParent)
			require.False(t, ok, "the message that goes on is unchanged")
		})
	}
}
