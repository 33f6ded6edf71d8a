package input

import (
	"fmt"
	"strings"
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

// hopDest makes a fresh destination for one case of runHopCases: the
// configs of the output that sends to it and the input that reads it.
type hopDest func(t *testing.T) (output, input string)

// runHopCases sends one message with the output of the technology tech
// (solace or jms) and reads it with its input, with the tracing fields each
// case sets, and checks how the input's span relates to the sender's.
func runHopCases(t *testing.T, tech string, dest hopDest) {
	for _, tc := range []struct {
		name                string
		senderTraced        bool
		outFields, inFields string
		// check checks the spans of rec and the message read.
		check func(t *testing.T, rec *tracetest.SpanRecorder, got *service.Message)
	}{
		{
			// The defaults: the input's span continues the sender's
			// trace, and the message carries the context in its
			// traceparent property.
			name: "defaults continue the trace", senderTraced: true,
			check: func(t *testing.T, rec *tracetest.SpanRecorder, got *service.Message) {
				requireHop(t, rec, tech, got)
			},
		},
		{
			// A property of the user's choosing, which the output's
			// metadata filter selects.
			name: "custom mappings continue the trace", senderTraced: true,
			outFields: "inject_tracing_map: 'meta x_trace = this.traceparent'\nmetadata: { include_prefixes: [ x_ ] }\n",
			inFields:  "extract_tracing_map: 'root.traceparent = @x_trace'\n",
			check: func(t *testing.T, rec *tracetest.SpanRecorder, got *service.Message) {
				tracekit.RequireChild(t, tracekit.One(t, rec, "input_generate"), tracekit.One(t, rec, "input_"+tech), true)
				requireNoTraceparent(t, got)
			},
		},
		{
			name: "a message without trace context starts a new trace",
			check: func(t *testing.T, rec *tracetest.SpanRecorder, got *service.Message) {
				require.Empty(t, tracekit.Ended(rec, "input_generate"), "the sender did not trace")
				tracekit.RequireRoot(t, tracekit.One(t, rec, "input_"+tech))
				requireNoTraceparent(t, got)
			},
		},
		{
			name: "an empty inject_tracing_map sends no trace context", senderTraced: true,
			outFields: "inject_tracing_map: ''\n",
			check: func(t *testing.T, rec *tracetest.SpanRecorder, got *service.Message) {
				tracekit.RequireRoot(t, tracekit.One(t, rec, "input_"+tech))
				requireNoTraceparent(t, got)
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, in := dest(t)
			env, rec := tracekit.NewEnv(t)
			tracekit.Run(t, env, traceSender(tech+":\n"+componenttest.IndentYAML(out+tc.outFields), tc.senderTraced))
			got := tracekit.Receive(t, env, tracekit.TracerYAML, tech+":\n"+componenttest.IndentYAML(in+tc.inFields), 1)
			tc.check(t, rec, got[0])
		})
	}
}

func requireNoTraceparent(t *testing.T, got *service.Message) {
	t.Helper()
	_, ok := got.MetaGetMut("traceparent")
	require.False(t, ok, "the message carries no traceparent property")
}

// TestSolaceTraceHop runs the hop cases through the solace output, the test
// broker and the solace input.
func TestSolaceTraceHop(t *testing.T) {
	b, conn := traceBroker(t)
	runHopCases(t, "solace", func(t *testing.T) (string, string) {
		q := jmskit.RandName("trace-")
		require.NoError(t, b.CreateQueue("default", solacetest.QueueConfig{Name: q, Subscriptions: []string{q}}))
		return conn + "topic: " + q + "\n", conn + "queue: " + q + "\n"
	})
}

// TestIntegrationJMSTraceHop runs the hop cases through the jms output,
// RabbitMQ and the jms input.
func TestIntegrationJMSTraceHop(t *testing.T) {
	integration.CheckSkip(t)
	b := jmskit.TestBroker(t)
	runHopCases(t, "jms", func(t *testing.T) (string, string) {
		q := jmskit.RandName("trace-")
		t.Cleanup(func() { jmskit.DeleteQueues(q) })
		conf := b.YAML() + "queue: " + q + "\n"
		return conf, conf
	})
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

// TestSolaceBatchContinuesEachTrace reads two messages of different traces
// with batch_size 2: each message's span continues its own trace.
func TestSolaceBatchContinuesEachTrace(t *testing.T) {
	_, conn := traceBroker(t)
	env, rec := tracekit.NewEnv(t)
	tracekit.Run(t, env, strings.Replace(traceSender("solace:\n"+componenttest.IndentYAML(conn+soTraceOut), true), "count: 1", "count: 2", 1))
	tracekit.Receive(t, env, tracekit.TracerYAML, "solace:\n"+componenttest.IndentYAML(conn+siTraceIn+"batch_size: 2\n"), 2)

	roots := tracekit.Ended(rec, "input_generate")
	require.Len(t, roots, 2)
	for _, gen := range roots {
		tracekit.RequireChild(t, gen, tracekit.InTrace(t, rec, "input_solace", gen), true)
	}
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
		span := func(name string) sdktrace.ReadOnlySpan { return tracekit.InTrace(t, rec, name, gen) }
		solaceIn := span("input_solace")
		tracekit.RequireChild(t, gen, span("output_solace"), false)
		tracekit.RequireChild(t, gen, solaceIn, true)
		tracekit.RequireChild(t, solaceIn, span("output_jms"), false)
		tracekit.RequireChild(t, solaceIn, span("input_jms"), true)
	}
}
