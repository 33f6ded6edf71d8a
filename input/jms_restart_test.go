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
	"github.com/connect-solace/connect-solace/internal/testkit/jmskit"
)

// jmsinTestMetrics records what the streams of these tests report.
var jmsinTestMetrics = jmskit.RegisterMetrics("jmsin_test_metrics")

// jmsinStream is a stream, quiet and reporting to jmsinTestMetrics, whose
// input is the jms input on b with the fields of yaml.
func jmsinStream(t *testing.T, b jmskit.Broker, yaml string) *service.StreamBuilder {
	t.Helper()
	sb := service.NewStreamBuilder()
	require.NoError(t, sb.SetLoggerYAML("level: none"))
	require.NoError(t, sb.SetMetricsYAML("jmsin_test_metrics: {}"))
	require.NoError(t, sb.AddInputYAML("jms:\n"+indent(b.YAML()+yaml)))
	return sb
}

// TestIntegrationJMSInputBrokerRestart consumes a queue of persistent
// messages in a real stream while RabbitMQ is restarted: the input
// reconnects through Benthos's connect loop and every message arrives (some
// twice: those in flight when the broker went away), none is lost. It also
// checks the metrics the stream reported.
func TestIntegrationJMSInputBrokerRestart(t *testing.T) {
	integration.CheckSkip(t)
	b := jmskit.TestBroker(t)
	queue := jmskit.RandName("jmsin-restart-")
	const total = 300
	s := jmskit.NewSender(t, b, "/queue/"+queue)
	for i := range total {
		s.Send(t, jmskit.TextMessage(t, fmt.Sprintf("r%03d", i), nil))
	}
	require.NoError(t, s.Conn.Close())
	jmsinTestMetrics.Reset()

	var (
		mu       sync.Mutex
		seen     = map[string]int{}
		halfway  = make(chan struct{})
		stopped  = make(chan struct{})
		complete = make(chan struct{})
	)
	sb := jmsinStream(t, b, "queue: "+queue+"\nprefetch: 8\n")
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
	jmskit.RunShell(t, b.Stop)
	close(stopped)
	jmskit.RunShell(t, b.Start)
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
	assert.GreaterOrEqual(t, jmsinTestMetrics.Get("jms_input_reconnects"), int64(1))
	assert.GreaterOrEqual(t, jmsinTestMetrics.Get("jms_input_received"), int64(total))
	assert.GreaterOrEqual(t, jmsinTestMetrics.Get("jms_input_acked"), int64(total))
	t.Logf("received %d, acked %d, stale settlements %d, reconnects %d",
		jmsinTestMetrics.Get("jms_input_received"), jmsinTestMetrics.Get("jms_input_acked"),
		jmsinTestMetrics.Get("jms_input_stale_settlements"), jmsinTestMetrics.Get("jms_input_reconnects"))
}

// TestIntegrationJMSInputBadMessageMetrics runs a stream over a queue holding
// a message with an unknown JMS type code and an oversized property, and one
// the pipeline fails once: the bad message arrives flagged (errored, with
// jms_decode_error) rather than lost, the failed one is released and comes
// back, and the metrics count each.
func TestIntegrationJMSInputBadMessageMetrics(t *testing.T) {
	integration.CheckSkip(t)
	b := jmskit.TestBroker(t)
	queue := jmskit.RandName("jmsin-bad-")
	bad := jmskit.TextMessage(t, "odd", map[string]any{"big": strings.Repeat("x", 2048), "ok": "kept"})
	bad.Annotations[amqp.Symbol(jms.AnnMsgType)] = int8(42)
	s := jmskit.NewSender(t, b, "/queue/"+queue)
	s.Send(t, bad, jmskit.TextMessage(t, "nackme", nil))
	jmsinTestMetrics.Reset()

	var (
		mu        sync.Mutex
		seen      = map[string]int{}
		decodeErr string
		errored   error
		kept      any
		complete  = make(chan struct{})
	)
	sb := jmsinStream(t, b, "queue: "+queue+"\nnack_outcome: released\nmax_property_bytes: 1024\n")
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
	assert.Equal(t, int64(1), jmsinTestMetrics.Get("jms_input_decode_errors"))
	assert.Equal(t, int64(1), jmsinTestMetrics.Get("jms_input_nacked", "outcome=released"))
	assert.Equal(t, int64(2), jmsinTestMetrics.Get("jms_input_acked"))
	assert.Equal(t, int64(3), jmsinTestMetrics.Get("jms_input_received"))
}
