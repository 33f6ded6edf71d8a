package input

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/go-amqp"
	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/redpanda-data/benthos/v4/public/service/integration"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/jms"
)

// jmsinMetrics records what the input reports, by name and label values.
type jmsinMetrics struct {
	mu     sync.Mutex
	counts map[string]int64
}

var jmsinTestMetrics = &jmsinMetrics{counts: map[string]int64{}}

func (m *jmsinMetrics) add(key string, n int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.counts[key] += n
}

// get sums a metric over the labels Benthos adds (label, path), for the
// given values of the component's own labels: key is name{values}.
func (m *jmsinMetrics) get(key string) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	name, own, _ := strings.Cut(strings.TrimSuffix(key, "}"), "{")
	var n int64
	for k, v := range m.counts {
		kn, vals, _ := strings.Cut(strings.TrimSuffix(k, "}"), "{")
		if kn == name && (own == "" || strings.HasSuffix(vals, ","+own) || vals == own) {
			n += v
		}
	}
	return n
}

type jmsinCounter struct{ key string }

func (c jmsinCounter) Incr(n int64)          { jmsinTestMetrics.add(c.key, n) }
func (c jmsinCounter) IncrFloat64(f float64) { jmsinTestMetrics.add(c.key, int64(f)) }
func (c jmsinCounter) Timing(int64)          { jmsinTestMetrics.add(c.key, 1) }
func (c jmsinCounter) Set(int64)             {}

type jmsinExporter struct{}

func jmsinKey(name string, values []string) string {
	return name + "{" + strings.Join(values, ",") + "}"
}

func (jmsinExporter) NewCounterCtor(name string, _ ...string) service.MetricsExporterCounterCtor {
	return func(values ...string) service.MetricsExporterCounter { return jmsinCounter{jmsinKey(name, values)} }
}

func (jmsinExporter) NewTimerCtor(name string, _ ...string) service.MetricsExporterTimerCtor {
	return func(values ...string) service.MetricsExporterTimer { return jmsinCounter{jmsinKey(name, values)} }
}

func (jmsinExporter) NewGaugeCtor(name string, _ ...string) service.MetricsExporterGaugeCtor {
	return func(values ...string) service.MetricsExporterGauge { return jmsinCounter{jmsinKey(name, values)} }
}

func (jmsinExporter) Close(context.Context) error { return nil }

func init() {
	service.MustRegisterMetricsExporter("jmsin_test_metrics", service.NewConfigSpec(),
		func(*service.ParsedConfig, *service.Logger) (service.MetricsExporter, error) {
			return jmsinExporter{}, nil
		})
}

// TestIntegrationJMSInputBrokerRestart consumes a queue of persistent
// messages in a real stream while RabbitMQ is restarted: the input
// reconnects through Benthos's connect loop and every message arrives (some
// twice: those in flight when the broker went away), none is lost. It also
// checks the metrics the stream reported.
func TestIntegrationJMSInputBrokerRestart(t *testing.T) {
	integration.CheckSkip(t)
	b := jmsTestBroker(t)
	queue := jmsRandName("jmsin-restart-")
	const total = 300
	s := newRawSender(t, b, "/queue/"+queue)
	for i := range total {
		s.send(t, textMsg(t, fmt.Sprintf("r%03d", i), nil))
	}
	require.NoError(t, s.conn.Close())
	jmsinTestMetrics.mu.Lock()
	jmsinTestMetrics.counts = map[string]int64{}
	jmsinTestMetrics.mu.Unlock()

	var (
		mu       sync.Mutex
		seen     = map[string]int{}
		halfway  = make(chan struct{})
		stopped  = make(chan struct{})
		complete = make(chan struct{})
	)
	sb := service.NewStreamBuilder()
	require.NoError(t, sb.SetLoggerYAML("level: none"))
	require.NoError(t, sb.SetMetricsYAML("jmsin_test_metrics: {}"))
	require.NoError(t, sb.AddInputYAML("jms:\n"+indent(b.yaml()+"queue: "+queue+"\nprefetch: 8\n")))
	require.NoError(t, sb.AddConsumerFunc(func(ctx context.Context, m *service.Message) error {
		body, err := m.AsBytes()
		if err != nil {
			return err
		}
		mu.Lock()
		seen[string(body)]++
		n, first := len(seen), seen[string(body)] == 1
		mu.Unlock()
		switch {
		case first && n == total/3:
			// Hold the stream until the broker is down, so the restart
			// falls in the middle of the queue however fast the rest
			// would drain.
			close(halfway)
			select {
			case <-stopped:
			case <-ctx.Done():
				return ctx.Err()
			}
		case first && n == total:
			close(complete)
		}
		return nil
	}))
	stream, err := sb.Build()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- stream.Run(ctx) }()

	select {
	case <-halfway:
	case <-ctx.Done():
		t.Fatal("stream did not consume a third of the queue")
	}
	runShell(t, b.stop)
	close(stopped)
	runShell(t, b.start)
	select {
	case <-complete:
	case <-ctx.Done():
		mu.Lock()
		n := len(seen)
		mu.Unlock()
		t.Fatalf("only %d of %d messages arrived after the restart", n, total)
	}
	require.NoError(t, stream.Stop(ctx))
	<-done

	mu.Lock()
	defer mu.Unlock()
	for i := range total {
		assert.NotZero(t, seen[fmt.Sprintf("r%03d", i)], "message r%03d lost", i)
	}
	assert.GreaterOrEqual(t, jmsinTestMetrics.get("jms_input_reconnects{}"), int64(1))
	assert.GreaterOrEqual(t, jmsinTestMetrics.get("jms_input_received{}"), int64(total))
	assert.GreaterOrEqual(t, jmsinTestMetrics.get("jms_input_acked{}"), int64(total))
	t.Logf("received %d, acked %d, stale settlements %d, reconnects %d",
		jmsinTestMetrics.get("jms_input_received{}"), jmsinTestMetrics.get("jms_input_acked{}"),
		jmsinTestMetrics.get("jms_input_stale_settlements{}"), jmsinTestMetrics.get("jms_input_reconnects{}"))
}

// TestIntegrationJMSInputBadMessageMetrics runs a stream over a queue holding
// a message with an unknown JMS type code and an oversized property, and one
// the pipeline fails once: the bad message arrives flagged (errored, with
// jms_decode_error) rather than lost, the failed one is released and comes
// back, and the metrics count each.
func TestIntegrationJMSInputBadMessageMetrics(t *testing.T) {
	integration.CheckSkip(t)
	b := jmsTestBroker(t)
	queue := jmsRandName("jmsin-bad-")
	bad := textMsg(t, "odd", map[string]any{"big": strings.Repeat("x", 2048), "ok": "kept"})
	bad.Annotations[amqp.Symbol(jms.AnnMsgType)] = int8(42)
	s := newRawSender(t, b, "/queue/"+queue)
	s.send(t, bad, textMsg(t, "nackme", nil))
	jmsinTestMetrics.mu.Lock()
	jmsinTestMetrics.counts = map[string]int64{}
	jmsinTestMetrics.mu.Unlock()

	var (
		mu        sync.Mutex
		seen      = map[string]int{}
		decodeErr string
		errored   error
		kept      any
		complete  = make(chan struct{})
	)
	sb := service.NewStreamBuilder()
	require.NoError(t, sb.SetLoggerYAML("level: none"))
	require.NoError(t, sb.SetMetricsYAML("jmsin_test_metrics: {}"))
	require.NoError(t, sb.AddInputYAML("jms:\n"+indent(b.yaml()+"queue: "+queue+"\nnack_outcome: released\nmax_property_bytes: 1024\n")))
	require.NoError(t, sb.AddConsumerFunc(func(_ context.Context, m *service.Message) error {
		body, err := m.AsBytes()
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		seen[string(body)]++
		if string(body) == "odd" {
			decodeErr, _ = m.MetaGet("jms_decode_error")
			errored = m.GetError()
			kept, _ = m.MetaGetMut("ok")
		}
		if string(body) == "nackme" && seen["nackme"] == 1 {
			return fmt.Errorf("downstream refused it")
		}
		if seen["nackme"] == 2 && seen["odd"] >= 1 {
			select {
			case <-complete:
			default:
				close(complete)
			}
		}
		return nil
	}))
	stream, err := sb.Build()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- stream.Run(ctx) }()
	select {
	case <-complete:
	case <-ctx.Done():
		t.Fatalf("messages did not arrive: %v", seen)
	}
	require.NoError(t, stream.Stop(ctx))
	<-done

	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, 1, seen["odd"])
	require.Error(t, errored, "the bad message is flagged as errored")
	assert.Contains(t, decodeErr, "unknown x-opt-jms-msg-type 42")
	assert.Contains(t, decodeErr, `property "big" left out: 2048 bytes is more than max_property_bytes (1024)`)
	assert.Equal(t, "kept", kept, "other properties are kept")
	assert.Equal(t, int64(1), jmsinTestMetrics.get("jms_input_decode_errors{}"))
	assert.Equal(t, int64(1), jmsinTestMetrics.get("jms_input_nacked{released}"))
	assert.Equal(t, int64(2), jmsinTestMetrics.get("jms_input_acked{}"))
	assert.Equal(t, int64(3), jmsinTestMetrics.get("jms_input_received{}"))
}
