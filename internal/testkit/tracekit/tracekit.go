// Package tracekit records the spans of Benthos streams in memory, for the
// tests of trace propagation: an environment whose tracer `recorder` sends
// every span to one tracetest.SpanRecorder, and checks of how recorded spans
// relate.
//
// The package imports testing and testify, so only _test.go files may import
// it: TestBinaryLinksNoTestCode in tests/ keeps both out of the binary.
package tracekit

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// TracerYAML selects the recorder as a stream's tracer (SetTracerYAML).
const TracerYAML = "recorder: {}"

// NewEnv returns a clone of Benthos's global environment (with every plugin
// the test binary registered) with the tracer `recorder`, and the recorder
// that gets the spans of every stream built from it. Each stream gets its
// own tracer provider, so one stream stopping (Benthos shuts its provider
// down) does not end the recording of the others.
func NewEnv(t testing.TB) (*service.Environment, *tracetest.SpanRecorder) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	env := service.GlobalEnvironment().Clone()
	require.NoError(t, env.RegisterOtelTracerProvider("recorder", service.NewConfigSpec(),
		func(*service.ParsedConfig) (trace.TracerProvider, error) {
			return sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)), nil
		}))
	return env, rec
}

// Ended returns the ended spans of rec called name.
func Ended(rec *tracetest.SpanRecorder, name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// One returns the one ended span of rec called name.
func One(t testing.TB, rec *tracetest.SpanRecorder, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	spans := Ended(rec, name)
	require.Len(t, spans, 1, "ended spans called %s", name)
	return spans[0]
}

// InTrace returns the one ended span of rec called name in the trace of
// root.
func InTrace(t testing.TB, rec *tracetest.SpanRecorder, name string, root sdktrace.ReadOnlySpan) sdktrace.ReadOnlySpan {
	t.Helper()
	var found []sdktrace.ReadOnlySpan
	for _, s := range Ended(rec, name) {
		if s.SpanContext().TraceID() == root.SpanContext().TraceID() {
			found = append(found, s)
		}
	}
	require.Len(t, found, 1, "spans %s of trace %s", name, root.SpanContext().TraceID())
	return found[0]
}

// RequireChild checks that child is a child of parent: same trace, and its
// parent is parent's span. remote says whether the link crosses a hop (the
// parent came in with the message, from another pipeline) or not.
func RequireChild(t testing.TB, parent, child sdktrace.ReadOnlySpan, remote bool) {
	t.Helper()
	RequireChildOf(t, parent.SpanContext(), child, remote)
	require.False(t, parent.SpanContext().IsRemote(), "%s is a local span", parent.Name())
}

// RequireChildOf checks that child's parent is the span context parent.
func RequireChildOf(t testing.TB, parent trace.SpanContext, child sdktrace.ReadOnlySpan, remote bool) {
	t.Helper()
	require.Equal(t, parent.TraceID(), child.SpanContext().TraceID(), "%s continues the trace", child.Name())
	require.Equal(t, parent.SpanID(), child.Parent().SpanID(), "%s's parent", child.Name())
	require.Equal(t, remote, child.Parent().IsRemote(), "%s's parent came from another pipeline", child.Name())
}

// RequireRoot checks that s starts a trace: it has no parent.
func RequireRoot(t testing.TB, s sdktrace.ReadOnlySpan) {
	t.Helper()
	require.False(t, s.Parent().IsValid(), "%s has no parent, got %v", s.Name(), s.Parent())
	require.True(t, s.SpanContext().IsValid())
}

// Run runs the stream of config (a whole config: input, pipeline, output,
// and tracer) built from env until its input ends, as a generate input with
// a count does.
func Run(t testing.TB, env *service.Environment, config string) {
	t.Helper()
	r := Start(t, env, config)
	<-r.ended
	require.NoError(t, r.err)
}

// Running is a stream Start started.
type Running struct {
	stream *service.Stream
	ended  chan struct{} // closed when Run returned, with err
	err    error
	stop   sync.Once
}

// Start starts the stream of config (see Run) built from env, and stops it
// when the test ends.
func Start(t testing.TB, env *service.Environment, config string) *Running {
	t.Helper()
	sb := env.NewStreamBuilder()
	require.NoError(t, sb.SetYAML(config))
	return start(t, sb)
}

func start(t testing.TB, sb *service.StreamBuilder) *Running {
	t.Helper()
	require.NoError(t, sb.SetLoggerYAML("level: warn"))
	stream, err := sb.Build()
	require.NoError(t, err)
	r := &Running{stream: stream, ended: make(chan struct{})}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	go func() {
		defer close(r.ended)
		defer cancel()
		r.err = stream.Run(ctx)
	}()
	t.Cleanup(func() { r.Stop(t) })
	return r
}

// Stop stops the stream and waits until it stopped: the spans of the
// messages it handled have then ended.
func (r *Running) Stop(t testing.TB) {
	select {
	case <-r.ended:
		return
	default:
	}
	r.stop.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := r.stream.Stop(ctx); err != nil {
			t.Errorf("stopping the stream: %v", err)
		}
	})
	<-r.ended
}

// Receive runs a stream of input (a component config, such as `solace: {...}`)
// built from env, with tracer the stream's tracer config (TracerYAML, or ""
// for none), until it consumed n messages, which it returns. When Receive
// returns the stream has stopped.
func Receive(t testing.TB, env *service.Environment, tracer, input string, n int) []*service.Message {
	t.Helper()
	sb := env.NewStreamBuilder()
	if tracer != "" {
		require.NoError(t, sb.SetTracerYAML(tracer))
	}
	require.NoError(t, sb.AddInputYAML(input))
	var mu sync.Mutex
	var got []*service.Message
	all := make(chan struct{})
	require.NoError(t, sb.AddConsumerFunc(func(_ context.Context, m *service.Message) error {
		mu.Lock()
		defer mu.Unlock()
		if got = append(got, m); len(got) == n {
			close(all)
		}
		return nil
	}))
	r := start(t, sb)
	select {
	case <-all:
		r.Stop(t)
	case <-r.ended:
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("the stream ended after %d of %d messages: %v", len(got), n, r.err)
	}
	mu.Lock()
	defer mu.Unlock()
	return got
}

// Traceparent is the W3C traceparent of a sampled span context.
func Traceparent(sc trace.SpanContext) string {
	return fmt.Sprintf("00-%s-%s-%s", sc.TraceID(), sc.SpanID(), sc.TraceFlags())
}
