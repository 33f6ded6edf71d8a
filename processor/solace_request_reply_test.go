package processor

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/redpanda-data/benthos/v4/public/components/pure"
	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/config"
	"solace.dev/go/messaging/pkg/solace/message"
	"solace.dev/go/messaging/pkg/solace/resource"

	"github.com/connect-solace/connect-solace/internal/testkit/solacekit"
	"github.com/connect-solace/connect-solace/solacetest"
	"github.com/connect-solace/connect-solace/solacetest/faultproxy"
)

// rrService connects a raw Go client to the broker at url.
func rrService(t testing.TB, url string) solace.MessagingService {
	t.Helper()
	return solacekit.Service(t, url, config.ServicePropertyMap{
		config.TransportLayerPropertyReconnectionAttempts: 0,
	})
}

// rrReplier answers requests on topic with the Go client's own
// RequestReplyMessageReceiver: answer returns the reply's payload, or false
// to leave the request unanswered.
func rrReplier(t testing.TB, url, topic string, answer func(req message.InboundMessage) ([]byte, bool)) {
	t.Helper()
	svc := rrService(t, url)
	// The client's default buffer (50, dropping the newest) would drop
	// requests of a requester with more outstanding.
	rcv, err := svc.RequestReply().CreateRequestReplyMessageReceiverBuilder().
		OnBackPressureDropLatest(100000).Build(resource.TopicSubscriptionOf(topic))
	require.NoError(t, err)
	require.NoError(t, rcv.Start())
	t.Cleanup(func() { _ = rcv.Terminate(time.Second) })
	builder := svc.MessageBuilder()
	require.NoError(t, rcv.ReceiveAsync(func(req message.InboundMessage, replier solace.Replier) {
		body, ok := answer(req)
		if !ok || replier == nil {
			return
		}
		id, _ := req.GetApplicationMessageID()
		reply, err := builder.WithProperty("replied_by", "test").WithApplicationMessageID("re-" + id).BuildWithByteArrayPayload(body)
		if err != nil {
			t.Error(err)
			return
		}
		if err := replier.Reply(reply); err != nil {
			t.Error(err)
		}
	}))
}

// echo answers every request with "re:" and its payload.
func echo(req message.InboundMessage) ([]byte, bool) {
	b, _ := req.GetPayloadAsBytes()
	return append([]byte("re:"), b...), true
}

// rrPipeline runs a stream of n messages (payload "m-<i>", metadata idx)
// in batches of batchSize through the processor configured by yaml (after
// the connection block) and returns the output messages.
func rrPipeline(t *testing.T, url string, n, batchSize int, yaml string) []*service.Message {
	t.Helper()
	sb := service.NewStreamBuilder()
	require.NoError(t, sb.SetLoggerYAML("level: warn"))
	sb.SetThreads(2)
	produce, err := sb.AddBatchProducerFunc()
	require.NoError(t, err)
	require.NoError(t, sb.AddProcessorYAML("solace_request_reply:\n"+indent(solacekit.ConnectionYAML(url)+yaml)))
	var mu sync.Mutex
	var got []*service.Message
	require.NoError(t, sb.AddBatchConsumerFunc(func(_ context.Context, b service.MessageBatch) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, b...)
		return nil
	}))
	stream, err := sb.Build()
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- stream.Run(ctx) }()

	var wg sync.WaitGroup
	for start := 0; start < n; start += batchSize {
		batch := service.MessageBatch{}
		for i := start; i < min(start+batchSize, n); i++ {
			m := service.NewMessage(fmt.Appendf(nil, "m-%d", i))
			m.MetaSetMut("idx", i)
			batch = append(batch, m)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.NoError(t, produce(ctx, batch))
		}()
	}
	wg.Wait()
	require.NoError(t, stream.StopWithin(10*time.Second))
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	return got
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ") + "\n"
}

func TestSolaceRequestReply2000(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	rrReplier(t, b.SMFURL(), "svc/echo/>", echo)

	const n = 2000
	got := rrPipeline(t, b.SMFURL(), n, 50, `
topic: svc/echo/${! meta("idx").number() % 4 }
timeout: 10s
max_outstanding: 128
application_message_id: id-${! meta("idx") }
metadata:
  include_patterns: [ "^idx$" ]
`)
	require.Len(t, got, n)
	seen := map[int]bool{}
	failed := 0
	for _, m := range got {
		if m.GetError() != nil {
			failed++
		}
	}
	require.Zero(t, failed, "failed requests")
	for _, m := range got {
		idx, ok := m.MetaGetMut("idx")
		require.True(t, ok)
		i := int(idx.(int))
		require.False(t, seen[i], "message %d twice", i)
		seen[i] = true
		body, err := m.AsBytes()
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("re:m-%d", i), string(body), "the reply landed on the wrong message")
		// The reply's attributes and user properties, under the input's keys.
		appID, _ := m.MetaGetMut("solace_application_message_id")
		assert.Equal(t, fmt.Sprintf("re-id-%d", i), appID)
		by, _ := m.MetaGet("replied_by")
		assert.Equal(t, "test", by)
		corr, _ := m.MetaGet("solace_correlation_id")
		assert.NotEmpty(t, corr)
	}
}

func TestSolaceRequestReplyFailures(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	// Answers the even requests, never the odd ones.
	rrReplier(t, b.SMFURL(), "svc/half", func(req message.InboundMessage) ([]byte, bool) {
		body, _ := req.GetPayloadAsBytes()
		var i int
		_, _ = fmt.Sscanf(string(body), "m-%d", &i)
		return append([]byte("re:"), body...), i%2 == 0
	})

	tests := []struct {
		name   string
		topic  string
		reason func(i int) string // "" for a reply
	}{
		{"half answered", "svc/half", func(i int) string {
			if i%2 == 0 {
				return ""
			}
			return "timeout"
		}},
		{"no replier", "svc/nobody", func(int) string { return "timeout" }},
		{"missing topic metadata", "${! meta(\"nope\") }", func(int) string { return "invalid_message" }},
		{"invalid topic", "${! if meta(\"idx\").number() == 3 { \"\" } else { \"svc/half\" } }", func(i int) string {
			switch {
			case i == 3:
				return "invalid_message"
			case i%2 == 0:
				return ""
			}
			return "timeout"
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			const timeout = 400 * time.Millisecond
			start := time.Now()
			got := rrPipeline(t, b.SMFURL(), 40, 20, fmt.Sprintf("topic: %s\ntimeout: %v\n", tc.topic, timeout))
			// Two batches at a time (two threads), each ending by its
			// timeout: nothing waits much longer.
			assert.Less(t, time.Since(start), 4*timeout+5*time.Second)
			require.Len(t, got, 40, "a message was dropped")
			for _, m := range got {
				idx, _ := m.MetaGetMut("idx")
				i := idx.(int)
				body, _ := m.AsBytes()
				want := tc.reason(i)
				if want == "" {
					require.NoError(t, m.GetError(), "message %d", i)
					require.Equal(t, fmt.Sprintf("re:m-%d", i), string(body))
					continue
				}
				require.Error(t, m.GetError(), "message %d", i)
				assert.Contains(t, m.GetError().Error(), "("+want+")", "message %d", i)
				assert.Equal(t, fmt.Sprintf("m-%d", i), string(body), "a failed message keeps its content")
			}
		})
	}
}

// TestSolaceRequestReplyConnectionCut cuts the connection while requests
// wait for replies that the replier holds back: each of them fails at once
// with connection_lost (not after its timeout), and the processor, whose
// client reconnects, serves the next batch.
func TestSolaceRequestReplyConnectionCut(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	proxy, err := faultproxy.New(strings.TrimPrefix(b.SMFURL(), "tcp://"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = proxy.Close() })

	arrived := make(chan struct{}, 100)
	rrReplier(t, b.SMFURL(), "svc/cut", func(req message.InboundMessage) ([]byte, bool) {
		arrived <- struct{}{}
		return echo(req)
	})

	p := newRR(t, "tcp://"+proxy.Addr(), "topic: svc/cut\ntimeout: 30s\n")
	// Warm up: one round trip connects the processor.
	out := rrProcess(t, p, 1)
	require.NoError(t, out[0].GetError())
	<-arrived

	// Black-hole the network so that the requests reach nobody, then
	// reset it: the client sees the connection die and reconnects.
	proxy.BlackHole()
	done := make(chan service.MessageBatch, 1)
	start := time.Now()
	go func() { done <- rrProcess(t, p, 10) }()
	require.Eventually(t, func() bool { return p.outstanding.Load() == 10 }, 5*time.Second, 5*time.Millisecond)
	proxy.Reset()
	proxy.Resume()
	var batch service.MessageBatch
	select {
	case batch = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the batch waited past the connection loss")
	}
	assert.Less(t, time.Since(start), 20*time.Second)
	require.Len(t, batch, 10)
	for _, m := range batch {
		require.Error(t, m.GetError())
		assert.Contains(t, m.GetError().Error(), "(connection_lost)")
	}
	// After the reconnect, requests go through again.
	require.Eventually(t, func() bool {
		out := rrProcess(t, p, 1)
		return out[0].GetError() == nil
	}, 15*time.Second, 100*time.Millisecond)
}

func newRR(t testing.TB, url, yaml string) *solaceRequestReply {
	t.Helper()
	pc, err := solaceRequestReplySpec().ParseYAML(solacekit.ConnectionYAML(url)+yaml, nil)
	require.NoError(t, err)
	p, err := newSolaceRequestReplyFromParsed(pc, service.MockResources())
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}

func rrProcess(t *testing.T, p *solaceRequestReply, n int) service.MessageBatch {
	batch := make(service.MessageBatch, n)
	for i := range batch {
		batch[i] = service.NewMessage(fmt.Appendf(nil, "m-%d", i))
	}
	out, err := p.ProcessBatch(t.Context(), batch)
	require.NoError(t, err)
	require.Len(t, out, 1)
	return out[0]
}

// TestSolaceRequestReplyClose: requests waiting when the processor closes
// fail with closed, and later batches fail without connecting.
func TestSolaceRequestReplyClose(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	p := newRR(t, b.SMFURL(), "topic: svc/nobody\ntimeout: 1m\n")
	done := make(chan service.MessageBatch, 1)
	go func() { done <- rrProcess(t, p, 5) }()
	require.Eventually(t, func() bool { return p.outstanding.Load() == 5 }, 5*time.Second, 5*time.Millisecond)
	require.NoError(t, p.Close(t.Context()))
	batch := <-done
	for _, m := range batch {
		require.Error(t, m.GetError())
		assert.Contains(t, m.GetError().Error(), "(closed)")
	}
	for _, m := range rrProcess(t, p, 2) {
		assert.ErrorContains(t, m.GetError(), "closed")
	}
}

func TestSolaceRequestReplyLint(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"valid", "topic: a/b\n", ""},
		{"dynamic topic", "topic: a/${! meta(\"x\") }\n", ""},
		{"empty topic", "topic: \"\"\n", "field topic: the topic is empty"},
		{"priority", "topic: a\npriority: \"300\"\n", `field priority: "300" is not an integer from 0 to 255`},
		{"class of service", "topic: a\nclass_of_service: x\n", `field class_of_service: "x" is not an integer from 0 to 2`},
		{"max outstanding", "topic: a\nmax_outstanding: 0\n", "field max_outstanding: must be at least 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := service.NewStreamBuilder().AddProcessorYAML("solace_request_reply:\n" + indent(solacekit.ConnectionYAML("tcp://127.0.0.1:1")+tc.yaml))
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.want)
		})
	}
}
