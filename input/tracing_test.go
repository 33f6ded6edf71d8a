package input

import (
	"fmt"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/redpanda-data/benthos/v4/public/service/integration"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/connect-solace/connect-solace/internal/testkit/componenttest"
	"github.com/connect-solace/connect-solace/internal/testkit/jmskit"
	"github.com/connect-solace/connect-solace/internal/testkit/solacekit"
	"github.com/connect-solace/connect-solace/internal/testkit/tracekit"
	_ "github.com/connect-solace/connect-solace/output"
	"github.com/connect-solace/connect-solace/solacetest"
)

// traceSender is a pipeline that generates one message and sends it with
// output (a component config), traced by the recorder unless tracer is
// false.
func traceSender(output string, tracer bool) string {
	conf := `
input:
  generate: { count: 1, interval: "", mapping: 'root.n = 1' }
output:
` + componenttest.IndentYAML(output)
	if tracer {
		conf += "tracer:\n  " + tracekit.TracerYAML + "\n"
	}
	return conf
}

// traceBroker is a test broker with the queue `trace` on the topics
// `trace/>`, and the connection block of the solace plugins for it.
func traceBroker(t *testing.T) (*solacetest.Broker, string) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	require.NoError(t, b.CreateQueue("default", solacetest.QueueConfig{Name: "trace", Subscriptions: []string{"trace/>"}}))
	return b, solacekit.ConnectionYAML(b.SMFURL())
}

// The solace fields of a hop: the output's, then the input's.
const (
	soTraceOut = "topic: trace/a\n"
	siTraceIn  = "queue: trace\n"
)

// TestSolaceToSolaceContinuesTrace sends a traced message through the solace
// output and reads it with the solace input, with the default tracing
// fields: the input's span continues the sender's trace, as a child of the
// span the message carried (its generate input's), and the message carries
// that span's context in its traceparent user property.
func TestSolaceToSolaceContinuesTrace(t *testing.T) {
	_, conn := traceBroker(t)
	env, rec := tracekit.NewEnv(t)
	tracekit.Run(t, env, traceSender("solace:\n"+componenttest.IndentYAML(conn+soTraceOut), true))
	got := tracekit.Receive(t, env, tracekit.TracerYAML, "solace:\n"+componenttest.IndentYAML(conn+siTraceIn), 1)

	requireHop(t, rec, "solace", got[0])
}

// requireHop checks the spans of one message that a generate input made and
// the output and input of a technology (tech) carried across one hop: the
// output's span is a child of the generate input's (the span the message
// carried), the input's a child of it across the hop, and got, the message
// read, carries that span's context in its traceparent property.
func requireHop(t *testing.T, rec *tracetest.SpanRecorder, tech string, got *service.Message) {
	t.Helper()
	gen := tracekit.One(t, rec, "input_generate")
	tracekit.RequireRoot(t, gen)
	tracekit.RequireChild(t, gen, tracekit.One(t, rec, "output_"+tech), false)
	tracekit.RequireChild(t, gen, tracekit.One(t, rec, "input_"+tech), true)
	tp, ok := got.MetaGetMut("traceparent")
	require.True(t, ok, "the traceparent property arrived")
	require.Equal(t, tracekit.Traceparent(gen.SpanContext()), tp)
}

// TestSolaceInputStartsTraceWithoutContext reads a message sent by a
// pipeline that does not trace: its span starts a new trace.
func TestSolaceInputStartsTraceWithoutContext(t *testing.T) {
	_, conn := traceBroker(t)
	env, rec := tracekit.NewEnv(t)
	tracekit.Run(t, env, traceSender("solace:\n"+componenttest.IndentYAML(conn+soTraceOut), false))
	got := tracekit.Receive(t, env, tracekit.TracerYAML, "solace:\n"+componenttest.IndentYAML(conn+siTraceIn), 1)

	tracekit.RequireRoot(t, tracekit.One(t, rec, "input_solace"))
	require.Empty(t, tracekit.Ended(rec, "input_generate"), "the sender did not trace")
	_, ok := got[0].MetaGetMut("traceparent")
	require.False(t, ok)
}

// TestSolaceCustomTracingMappings carries the trace context in a user
// property of the user's choosing, selected by the output's metadata
// filter: the trace continues through it.
func TestSolaceCustomTracingMappings(t *testing.T) {
	_, conn := traceBroker(t)
	env, rec := tracekit.NewEnv(t)
	tracekit.Run(t, env, traceSender("solace:\n"+componenttest.IndentYAML(conn+soTraceOut+`
inject_tracing_map: 'meta x_trace = this.traceparent'
metadata: { include_prefixes: [ x_ ] }
`), true))
	got := tracekit.Receive(t, env, tracekit.TracerYAML, "solace:\n"+componenttest.IndentYAML(conn+siTraceIn+`
extract_tracing_map: 'root.traceparent = @x_trace'
`), 1)

	gen := tracekit.One(t, rec, "input_generate")
	tracekit.RequireChild(t, gen, tracekit.One(t, rec, "input_solace"), true)
	_, ok := got[0].MetaGetMut("traceparent")
	require.False(t, ok, "only the mapping's key was sent")
}

// TestSolaceHopWithoutTracerPassesTraceOn puts a solace → solace pipeline
// that does not trace (tracer none) between two that do: the trace context
// travels through it unchanged, so the last pipeline's span is a child of
// the first's.
func TestSolaceHopWithoutTracerPassesTraceOn(t *testing.T) {
	b, conn := traceBroker(t)
	require.NoError(t, b.CreateQueue("default", solacetest.QueueConfig{Name: "trace-b", Subscriptions: []string{"trace-b/>"}}))
	env, rec := tracekit.NewEnv(t)
	tracekit.Run(t, env, traceSender("solace:\n"+componenttest.IndentYAML(conn+soTraceOut), true))
	tracekit.Start(t, env, fmt.Sprintf("input:\n  solace:\n%soutput:\n  solace:\n%s",
		componenttest.IndentYAML(componenttest.IndentYAML(conn+siTraceIn)),
		componenttest.IndentYAML(componenttest.IndentYAML(conn+"topic: trace-b/a\n"))))
	tracekit.Receive(t, env, tracekit.TracerYAML, "solace:\n"+componenttest.IndentYAML(conn+"queue: trace-b\n"), 1)

	gen := tracekit.One(t, rec, "input_generate")
	tracekit.RequireChild(t, gen, tracekit.One(t, rec, "input_solace"), true)
}

// TestIntegrationJMSToJMSContinuesTrace sends a traced message through the
// jms output to RabbitMQ and reads it with the jms input, with the default
// tracing fields: the input's span continues the sender's trace, and the
// message carries the context in its traceparent application property.
func TestIntegrationJMSToJMSContinuesTrace(t *testing.T) {
	integration.CheckSkip(t)
	b := jmskit.TestBroker(t)
	queue := jmskit.RandName("trace-")
	t.Cleanup(func() { jmskit.DeleteQueues(queue) })
	conn := b.YAML() + "queue: " + queue + "\n"
	env, rec := tracekit.NewEnv(t)
	tracekit.Run(t, env, traceSender("jms:\n"+componenttest.IndentYAML(conn), true))
	got := tracekit.Receive(t, env, tracekit.TracerYAML, "jms:\n"+componenttest.IndentYAML(conn), 1)

	requireHop(t, rec, "jms", got[0])
}

// TestIntegrationTraceAcrossSolaceAndJMS follows messages through three
// pipelines with the default tracing fields: generate → solace output →
// test broker → solace input → jms output → RabbitMQ → jms input. Each
// message's spans form one trace: the generate input's span is its root, an
// output's span is a child of the span its message carried, and each input's
// span a child, across the hop, of the span its sender's message carried.
func TestIntegrationTraceAcrossSolaceAndJMS(t *testing.T) {
	integration.CheckSkip(t)
	jb := jmskit.TestBroker(t)
	queue := jmskit.RandName("trace-")
	t.Cleanup(func() { jmskit.DeleteQueues(queue) })
	_, conn := traceBroker(t)
	jmsConn := jb.YAML() + "queue: " + queue + "\n"
	env, rec := tracekit.NewEnv(t)
	const n = 3

	tracekit.Run(t, env, fmt.Sprintf(`
input:
  generate: { count: %d, interval: "", mapping: 'root.n = counter()' }
output:
  solace:
%s
tracer:
  %s
`, n, componenttest.IndentYAML(componenttest.IndentYAML(conn+soTraceOut)), tracekit.TracerYAML))
	bridge := tracekit.Start(t, env, fmt.Sprintf(`
input:
  solace:
%s
output:
  jms:
%s
tracer:
  %s
`, componenttest.IndentYAML(componenttest.IndentYAML(conn+siTraceIn)), componenttest.IndentYAML(componenttest.IndentYAML(jmsConn)), tracekit.TracerYAML))
	tracekit.Receive(t, env, tracekit.TracerYAML, "jms:\n"+componenttest.IndentYAML(jmsConn), n)
	bridge.Stop(t) // its input spans end as its input acknowledges the messages

	roots := tracekit.Ended(rec, "input_generate")
	require.Len(t, roots, n)
	for _, gen := range roots {
		tracekit.RequireRoot(t, gen)
		span := func(name string) sdktrace.ReadOnlySpan {
			var found []sdktrace.ReadOnlySpan
			for _, s := range tracekit.Ended(rec, name) {
				if s.SpanContext().TraceID() == gen.SpanContext().TraceID() {
					found = append(found, s)
				}
			}
			require.Len(t, found, 1, "spans %s of trace %s", name, gen.SpanContext().TraceID())
			return found[0]
		}
		solaceIn := span("input_solace")
		tracekit.RequireChild(t, gen, span("output_solace"), false)
		tracekit.RequireChild(t, gen, solaceIn, true)
		tracekit.RequireChild(t, solaceIn, span("output_jms"), false)
		tracekit.RequireChild(t, solaceIn, span("input_jms"), true)
	}
}
