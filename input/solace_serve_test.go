package input

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/message"
	"solace.dev/go/messaging/pkg/solace/resource"

	"github.com/connect-solace/connect-solace/internal/testkit/componenttest"
	"github.com/connect-solace/connect-solace/internal/testkit/solacekit"
	"github.com/connect-solace/connect-solace/solacetest"
	"github.com/connect-solace/connect-solace/solacetest/faultproxy"
)

// siServePipeline runs a stream whose solace input serves requests on
// topics with the pipeline processors and a sync_response output, until the
// test ends.
func siServePipeline(t *testing.T, b *solacetest.Broker, topics string, processors ...string) {
	t.Helper()
	siServePipelineURL(t, b, b.SMFURL(), topics, processors...)
}

// siServePipelineURL is siServePipeline through the broker address url.
func siServePipelineURL(t *testing.T, b *solacetest.Broker, url, topics string, processors ...string) {
	t.Helper()
	siServePipelineBuffer(t, b, url, 4096, topics, processors...)
}

// siServePipelineBuffer is siServePipelineURL with the given receive_buffer.
func siServePipelineBuffer(t *testing.T, b *solacetest.Broker, url string, buffer int, topics string, processors ...string) {
	t.Helper()
	siRunStream(t, b, solacekit.ConnectionYAML(url)+
		fmt.Sprintf("receive_buffer: %d\nrequests:\n  topics: %s\n  reply_metadata:\n    include_prefixes: [ out_ ]\n", buffer, topics),
		"sync_response: {}", processors...)
}

// siRunStream runs a stream of a solace input (its fields input), the
// processors and output until the test ends, once the input connected.
func siRunStream(t *testing.T, b *solacetest.Broker, input, output string, processors ...string) {
	t.Helper()
	sb := service.NewStreamBuilder()
	require.NoError(t, sb.SetLoggerYAML("level: warn"))
	require.NoError(t, sb.AddInputYAML("solace:\n"+componenttest.IndentYAML(input)))
	sb.SetThreads(2)
	for _, p := range processors {
		require.NoError(t, sb.AddProcessorYAML(p))
	}
	require.NoError(t, sb.AddOutputYAML(output))
	componenttest.RunStream(t, context.Background(), sb, 5*time.Second)
	require.Eventually(t, func() bool { return b.ClientCount() >= 1 }, 10*time.Second, 10*time.Millisecond)
}

// siRequester is a requester on the Go client's own
// RequestReplyMessagePublisher.
func siRequester(t *testing.T, b *solacetest.Broker) (solace.RequestReplyMessagePublisher, solace.OutboundMessageBuilder) {
	t.Helper()
	svc := solacekit.Service(t, b.SMFURL(), nil)
	pub, err := svc.RequestReply().CreateRequestReplyMessagePublisherBuilder().Build()
	require.NoError(t, err)
	require.NoError(t, pub.Start())
	t.Cleanup(func() { _ = pub.Terminate(time.Second) })
	return pub, svc.MessageBuilder()
}

func TestSolaceInputServesRequests(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	siServePipeline(t, b, "[ svc/upper/> ]",
		`mutation: 'meta out_n = content().string().length()'`,
		`mutation: 'meta out_reply_to = meta("solace_reply_to")'`,
		`mapping: 'root = "answer:" + content().string().uppercase() + ":" + meta("solace_application_message_id")'`)
	// The input subscribes once it connected; a request before that gets
	// no reply, so wait for one answer first.
	pub, builder := siRequester(t, b)
	require.Eventually(t, func() bool {
		msg, err := builder.BuildWithStringPayload("ping")
		require.NoError(t, err)
		_, err = pub.PublishAwaitResponse(msg, resource.TopicOf("svc/upper/x"), 200*time.Millisecond, nil)
		return err == nil
	}, 10*time.Second, 10*time.Millisecond)

	const n = 2000
	type result struct {
		i     int
		reply message.InboundMessage
		err   error
	}
	results := make(chan result, n)
	start := time.Now()
	for i := range n {
		msg, err := builder.WithApplicationMessageID(fmt.Sprint("id-", i)).BuildWithStringPayload(fmt.Sprint("req-", i))
		require.NoError(t, err)
		require.NoError(t, pub.Publish(msg, func(reply message.InboundMessage, uc any, err error) {
			results <- result{uc.(int), reply, err}
		}, resource.TopicOf(fmt.Sprintf("svc/upper/%d", i%7)), 10*time.Second, nil, i))
	}
	seen := map[int]bool{}
	for range n {
		r := <-results
		require.NoError(t, r.err, "request %d", r.i)
		require.False(t, seen[r.i])
		seen[r.i] = true
		body, _ := r.reply.GetPayloadAsString()
		if body == "" {
			b, _ := r.reply.GetPayloadAsBytes()
			body = string(b)
		}
		want := fmt.Sprintf("answer:REQ-%d:id-%d", r.i, r.i)
		require.Equal(t, want, body, "the reply to request %d", r.i)
		p, ok := r.reply.GetProperty("out_n")
		require.True(t, ok, "reply_metadata carries out_n")
		assert.EqualValues(t, len(fmt.Sprint("req-", r.i)), p)
		// The request's reply-to is the requester's P2P inbox.
		rt, _ := r.reply.GetProperty("out_reply_to")
		assert.Regexp(t, `^#P2P/v:[^/]+/`, rt)
	}
	t.Logf("2000 requests answered in %v", time.Since(start))
}

// TestSolaceInputRepliesWithPipelineErrors: a request the pipeline fails
// gets a reply at once, empty, with the error in the user property error.
func TestSolaceInputRepliesWithPipelineErrors(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	siServePipeline(t, b, "[ svc/strict ]",
		`mapping: 'root = if content().string() == "bad" { throw("no such order") } else { "ok" }'`)
	pub, builder := siRequester(t, b)
	var reply message.InboundMessage
	require.Eventually(t, func() bool {
		msg, err := builder.BuildWithStringPayload("bad")
		require.NoError(t, err)
		reply, err = pub.PublishAwaitResponse(msg, resource.TopicOf("svc/strict"), 200*time.Millisecond, nil)
		return err == nil
	}, 10*time.Second, 10*time.Millisecond)
	e, ok := reply.GetProperty(siReplyErrorProperty)
	require.True(t, ok)
	assert.Contains(t, e, "no such order")

	msg, err := builder.BuildWithStringPayload("good")
	require.NoError(t, err)
	reply, err = pub.PublishAwaitResponse(msg, resource.TopicOf("svc/strict"), 5*time.Second, nil)
	require.NoError(t, err)
	body, _ := reply.GetPayloadAsBytes()
	assert.Equal(t, "ok", string(body))
	_, hasErr := reply.GetProperty(siReplyErrorProperty)
	assert.False(t, hasErr)
}

func TestSolaceInputRequestsLint(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"requests alone", "requests:\n  topics: [ a/> ]\n", ""},
		{"requests and queue", "queue: q\nrequests:\n  topics: [ a ]\n", "field requests: serving requests excludes queue, topic and topic_subscriptions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := service.NewStreamBuilder().AddInputYAML("solace:\n" + componenttest.IndentYAML(solacekit.ConnectionYAML("tcp://127.0.0.1:1")+tc.yaml))
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// siAsk sends one request and returns the reply's payload, or the error.
func siAsk(pub solace.RequestReplyMessagePublisher, builder solace.OutboundMessageBuilder, topic, body string, timeout time.Duration) (string, error) {
	msg, err := builder.BuildWithStringPayload(body)
	if err != nil {
		return "", err
	}
	reply, err := pub.PublishAwaitResponse(msg, resource.TopicOf(topic), timeout, nil)
	if err != nil {
		return "", err
	}
	b, _ := reply.GetPayloadAsBytes()
	return string(b), nil
}

// TestSolaceInputServesAfterConnectionReset: the input's client reconnects
// after its connection is reset and serves requests again.
func TestSolaceInputServesAfterConnectionReset(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	proxy, err := faultproxy.New(strings.TrimPrefix(b.SMFURL(), "tcp://"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = proxy.Close() })
	siServePipelineURL(t, b, "tcp://"+proxy.Addr(), "[ svc/reset ]", `mapping: 'root = "re:" + content().string()'`)
	pub, builder := siRequester(t, b)
	require.Eventually(t, func() bool {
		got, err := siAsk(pub, builder, "svc/reset", "a", 200*time.Millisecond)
		return err == nil && got == "re:a"
	}, 10*time.Second, 10*time.Millisecond)

	accepted := proxy.Accepted()
	proxy.Reset()
	require.Eventually(t, func() bool { return proxy.Accepted() > accepted }, 10*time.Second, 10*time.Millisecond, "the input reconnects")
	require.Eventually(t, func() bool {
		got, err := siAsk(pub, builder, "svc/reset", "b", 200*time.Millisecond)
		return err == nil && got == "re:b"
	}, 10*time.Second, 10*time.Millisecond, "requests are served again")
}

// TestSolaceInputRefusesWhatItCannotTake: requests beyond a full
// receive_buffer get an error reply at once, before any request the busy
// pipeline serves, instead of waiting for their requesters' timeout.
func TestSolaceInputRefusesWhatItCannotTake(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	siServePipelineBuffer(t, b, b.SMFURL(), 1, "[ svc/slow ]", `sleep: { duration: 1s }`)
	pub, builder := siRequester(t, b)
	require.Eventually(t, func() bool {
		_, err := siAsk(pub, builder, "svc/slow", "ping", 3*time.Second)
		return err == nil
	}, 20*time.Second, 10*time.Millisecond)

	// Two pipeline threads and one buffered request take three; the rest
	// are refused.
	const n = 12
	type result struct {
		refused bool
		err     error
	}
	results := make(chan result, n)
	for range n {
		msg, err := builder.BuildWithStringPayload("job")
		require.NoError(t, err)
		require.NoError(t, pub.Publish(msg, func(reply message.InboundMessage, _ any, err error) {
			r := result{err: err}
			if err == nil {
				e, ok := reply.GetProperty(siReplyErrorProperty)
				r.refused = ok && strings.Contains(fmt.Sprint(e), "receive_buffer is full")
			}
			results <- r
		}, resource.TopicOf("svc/slow"), 30*time.Second, nil, nil))
	}
	var refused, served int
	for range n {
		r := <-results
		require.NoError(t, r.err, "every request is answered: refused or served")
		if r.refused {
			require.Zero(t, served, "a refusal comes at once, before the first served reply")
			refused++
		} else {
			served++
		}
	}
	assert.GreaterOrEqual(t, refused, 1)
	assert.GreaterOrEqual(t, served, 1)
	t.Logf("%d refused, %d served", refused, served)
}

// TestSolaceOutputRepliesToRequests: a pipeline that reads requests through
// a direct subscription answers them through the solace output with reply
// set, to each request's reply-to with its correlation id and the reply
// flag, direct or persistent (each publisher's copy of the message keeps the
// flag); a requester on the Go client's own RequestReplyMessagePublisher
// matches every reply to its request (checked by payload). Without the flag
// the client would take none.
func TestSolaceOutputRepliesToRequests(t *testing.T) {
	for _, mode := range []string{"direct", "persistent"} {
		t.Run(mode, func(t *testing.T) {
			b := solacetest.NewTestBroker(t, solacetest.Config{})
			conn := solacekit.ConnectionYAML(b.SMFURL())
			siRunStream(t, b, conn+"topic_subscriptions: [ svc/echo ]\n",
				"solace:\n"+componenttest.IndentYAML(conn+`topic: ${! meta("solace_reply_to") }
correlation_id: ${! meta("solace_correlation_id") }
delivery_mode: `+mode+`
reply: true
`), `mapping: 'root = "re:" + content().string()'`)
			pub, builder := siRequester(t, b)
			require.Eventually(t, func() bool {
				got, err := siAsk(pub, builder, "svc/echo", "ping", 200*time.Millisecond)
				return err == nil && got == "re:ping"
			}, 10*time.Second, 10*time.Millisecond)

			const n = 500
			type result struct {
				i    int
				body string
				err  error
			}
			results := make(chan result, n)
			for i := range n {
				require.NoError(t, pub.PublishBytes(fmt.Appendf(nil, "req-%d", i), func(reply message.InboundMessage, uc any, err error) {
					r := result{i: uc.(int), err: err}
					if err == nil {
						body, _ := reply.GetPayloadAsBytes()
						r.body = string(body)
					}
					results <- r
				}, resource.TopicOf("svc/echo"), 10*time.Second, i))
			}
			// n answers, each the right one: none twice, none missing.
			got := make([]string, n)
			for range n {
				r := <-results
				require.NoError(t, r.err, "request %d", r.i)
				got[r.i] = r.body
			}
			for i, body := range got {
				require.Equal(t, fmt.Sprintf("re:req-%d", i), body, "the reply to request %d", i)
			}
		})
	}
}
