package solacetest

import (
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/message"
	"solace.dev/go/messaging/pkg/solace/resource"
)

func TestTopicMatches(t *testing.T) {
	tests := []struct {
		sub, topic string
		want       bool
	}{
		{"a/b", "a/b", true},
		{"a/b", "a/b/c", false},
		{"a/b/c", "a/b", false},
		{"a/*/c", "a/x/c", true},
		{"a/*/c", "a/x/y/c", false},
		{"a/*", "a", false},
		{"a/ab*", "a/abc", true},
		{"a/ab*", "a/ab", true},
		{"a/ab*", "a/xabc", false},
		{"a/a*b", "a/a*b", true}, // '*' inside a level is a literal
		{"a/a*b", "a/axb", false},
		{"a/>", "a/b", true},
		{"a/>", "a/b/c/d", true},
		{"a/>", "a", false},
		{">", "anything/at/all", true},
		{"a/>/c", "a/>/c", true}, // '>' not last is a literal
		{"a/>/c", "a/b/c", false},
		{"a/b>", "a/b>", true},
		{"a/b>", "a/bc", false},
		{"*", "a", true},
		{"*", "a/b", false},
		{"*/>", "a/b", true},
		{"", "a", false},
		{"a", "", false},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, topicMatches(tc.sub, tc.topic), "sub %q topic %q", tc.sub, tc.topic)
	}
}

func TestQueueFromTopic(t *testing.T) {
	tests := []struct {
		topic, queue string
		ok           bool
	}{
		{"#P2P/QUE/q1", "q1", true},
		{"#P2P/QUE/v:router1/q1", "q1", true},
		{"#P2P/QUE/a/b", "a/b", true},
		{"#P2P/QTMP/x", "", false},
		{"orders/1", "", false},
	}
	for _, tc := range tests {
		q, ok := queueFromTopic(tc.topic)
		require.Equal(t, tc.ok, ok, tc.topic)
		require.Equal(t, tc.queue, q, tc.topic)
	}
}

// collector gathers direct messages received by a receiver.
type collector struct {
	mu   sync.Mutex
	msgs []string
}

func (c *collector) handle(m message.InboundMessage) {
	p, ok := m.GetPayloadAsString() // PublishString payloads are SDT strings
	if !ok {
		b, _ := m.GetPayloadAsBytes()
		p = string(b)
	}
	c.mu.Lock()
	c.msgs = append(c.msgs, m.GetDestinationName()+"="+p)
	c.mu.Unlock()
}

func (c *collector) got() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := append([]string(nil), c.msgs...)
	sort.Strings(out)
	return out
}

func TestDirectPubSubWildcards(t *testing.T) {
	b := NewTestBroker(t, Config{})
	subSvc := connect(t, b, nil)
	pubSvc := connect(t, b, nil)

	var wild, exact collector
	rw, err := subSvc.CreateDirectMessageReceiverBuilder().
		WithSubscriptions(resource.TopicSubscriptionOf("a/*/c"), resource.TopicSubscriptionOf("p/ab*"), resource.TopicSubscriptionOf("x/>")).
		Build()
	require.NoError(t, err)
	require.NoError(t, rw.Start())
	t.Cleanup(func() { _ = rw.Terminate(time.Second) })
	require.NoError(t, rw.ReceiveAsync(wild.handle))

	re, err := pubSvc.CreateDirectMessageReceiverBuilder().WithSubscriptions(resource.TopicSubscriptionOf("a/b/c")).Build()
	require.NoError(t, err)
	require.NoError(t, re.Start())
	t.Cleanup(func() { _ = re.Terminate(time.Second) })
	require.NoError(t, re.ReceiveAsync(exact.handle))

	pub, err := pubSvc.CreateDirectMessagePublisherBuilder().Build()
	require.NoError(t, err)
	require.NoError(t, pub.Start())
	t.Cleanup(func() { _ = pub.Terminate(time.Second) })
	for _, topic := range []string{"a/b/c", "a/b/d", "a/b/x/c", "p/abc", "p/ab", "p/ba", "x/1", "x/1/2", "x", "end/marker"} {
		require.NoError(t, pub.PublishString("m", resource.TopicOf(topic)))
	}
	want := []string{"a/b/c=m", "p/ab=m", "p/abc=m", "x/1/2=m", "x/1=m"}
	sort.Strings(want)
	require.Eventually(t, func() bool { return len(wild.got()) >= len(want) }, 5*time.Second, 10*time.Millisecond)
	require.Equal(t, want, wild.got())
	require.Equal(t, []string{"a/b/c=m"}, exact.got())
	require.Equal(t, 1, b.PublishedCount("x/1/2"))

	// After unsubscribing, x/> messages no longer arrive; a/*/c still do.
	require.NoError(t, rw.RemoveSubscription(resource.TopicSubscriptionOf("x/>")))
	require.NoError(t, pub.PublishString("m2", resource.TopicOf("x/1")))
	require.NoError(t, pub.PublishString("m2", resource.TopicOf("a/z/c")))
	require.Eventually(t, func() bool { return len(wild.got()) == len(want)+1 }, 5*time.Second, 10*time.Millisecond)
	require.Contains(t, wild.got(), "a/z/c=m2")
	require.NotContains(t, wild.got(), "x/1=m2")
}

func TestDirectMessagesAreSpooledToMatchingQueues(t *testing.T) {
	b := newBroker(t)
	svc := connect(t, b, nil)
	pub, err := svc.CreateDirectMessagePublisherBuilder().Build()
	require.NoError(t, err)
	require.NoError(t, pub.Start())
	t.Cleanup(func() { _ = pub.Terminate(time.Second) })
	require.NoError(t, pub.Publish(mustBytesMsg(t, svc, "direct"), resource.TopicOf("orders/d")))
	rcv := startReceiver(t, svc, resource.QueueDurableExclusive("q1"), nil)
	msg := receive(t, rcv)
	require.Equal(t, "direct", payloadOf(t, msg))
	require.NoError(t, rcv.Ack(msg))
}

func TestRequestReplyCarriesReplyTo(t *testing.T) {
	b := NewTestBroker(t, Config{})
	svc := connect(t, b, nil)
	rr, err := svc.RequestReply().CreateRequestReplyMessageReceiverBuilder().Build(resource.TopicSubscriptionOf("svc/echo"))
	require.NoError(t, err)
	require.NoError(t, rr.Start())
	t.Cleanup(func() { _ = rr.Terminate(time.Second) })
	served := make(chan error, 1)
	go func() {
		msg, replier, err := rr.ReceiveMessage(5 * time.Second)
		if err != nil {
			served <- err
			return
		}
		p, _ := msg.GetPayloadAsBytes()
		reply, err := svc.MessageBuilder().BuildWithByteArrayPayload(append([]byte("re:"), p...))
		if err == nil {
			err = replier.Reply(reply)
		}
		served <- err
	}()
	rp, err := svc.RequestReply().CreateRequestReplyMessagePublisherBuilder().Build()
	require.NoError(t, err)
	require.NoError(t, rp.Start())
	t.Cleanup(func() { _ = rp.Terminate(time.Second) })
	reply, err := rp.PublishAwaitResponse(mustBytesMsg(t, svc, "ping"), resource.TopicOf("svc/echo"), 5*time.Second, nil)
	require.NoError(t, err)
	p, _ := reply.GetPayloadAsBytes()
	require.Equal(t, "re:ping", string(p))
	require.NoError(t, <-served)
}

func mustBytesMsg(t testing.TB, svc solace.MessagingService, payload string) message.OutboundMessage {
	t.Helper()
	m, err := svc.MessageBuilder().BuildWithByteArrayPayload([]byte(payload))
	require.NoError(t, err)
	return m
}

// splitTopicMatches is the split-based statement of the matching rules that
// topicMatches implements without allocating.
func splitTopicMatches(sub, topic string) bool {
	if sub == "" || topic == "" {
		return false
	}
	sls, tls := strings.Split(sub, "/"), strings.Split(topic, "/")
	for i, sl := range sls {
		if sl == ">" && i == len(sls)-1 {
			return len(tls) > i
		}
		if i >= len(tls) || !levelMatches(sl, tls[i]) {
			return false
		}
	}
	return len(tls) == len(sls)
}

func FuzzTopicMatches(f *testing.F) {
	for _, s := range [][2]string{{"a/>", "a/b"}, {"a/*/c", "a/x/c"}, {"a//b", "a//b"}, {"a/", "a/"}, {">", "x"}, {"a/b*", "a/bc/d"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, sub, topic string) {
		require.Equal(t, splitTopicMatches(sub, topic), topicMatches(sub, topic), "sub %q topic %q", sub, topic)
	})
}
