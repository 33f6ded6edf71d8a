package solacetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/message"
	"solace.dev/go/messaging/pkg/solace/resource"
	"solace.dev/go/messaging/pkg/solace/subcode"
)

func TestACLExceptionsOverSEMP(t *testing.T) {
	b := newBroker(t)
	s := newBrokerSEMP(t, b)
	const base = "config/msgVpns/default/aclProfiles/default/"
	for _, kv := range []struct{ kind, topic string }{
		{"publishTopic", "no/pub"}, {"subscribeTopic", "no/sub/>"}, {"subscribeShareName", "noshare"},
	} {
		status, body := s.do("POST", base+kv.kind+"Exceptions",
			`{"aclProfileName":"default","msgVpnName":"default","`+kv.kind+`Exception":"`+kv.topic+`","`+kv.kind+`ExceptionSyntax":"smf"}`)
		require.Equal(t, 200, status, body)
		status, body = s.do("POST", base+kv.kind+"Exceptions", `{"`+kv.kind+`Exception":"`+kv.topic+`"}`)
		assert.Equal(t, "ALREADY_EXISTS", errStatusOf(body), status)
	}
	status, body := s.do("GET", base+"subscribeTopicExceptions", "")
	require.Equal(t, 200, status)
	require.Len(t, listOf(body), 1)
	status, _ = s.do("GET", base+"subscribeTopicExceptions/smf,no%2Fsub%2F%3E", "")
	assert.Equal(t, 200, status)
	status, _ = s.do("GET", "config/msgVpns/default/aclProfiles/default", "")
	assert.Equal(t, 200, status)

	svc := connect(t, b, nil)
	// Subscriptions: direct, shared, and on a queue.
	rcv, err := svc.CreateDirectMessageReceiverBuilder().WithSubscriptions(resource.TopicSubscriptionOf("no/sub/x")).Build()
	require.NoError(t, err)
	requireSubcode(t, rcv.Start(), subcode.SubscriptionAclDenied)
	shared, err := svc.CreateDirectMessageReceiverBuilder().WithSubscriptions(resource.TopicSubscriptionOf("ok/topic")).
		BuildWithShareName(resource.ShareNameOf("noshare"))
	require.NoError(t, err)
	requireSubcode(t, shared.Start(), subcode.SubscriptionAclDenied)
	qrcv := startReceiver(t, svc, resource.QueueDurableExclusive("q1"), nil)
	requireSubcode(t, qrcv.AddSubscription(resource.TopicSubscriptionOf("no/sub/y")), subcode.SubscriptionAclDenied)
	requireSubcode(t, qrcv.RemoveSubscription(resource.TopicSubscriptionOf("no/sub/y")), subcode.SubscriptionAclDenied)

	// Guaranteed publishing is nacked; direct messages are dropped.
	require.NoError(t, b.AddQueueSubscription("default", "q1", "no/pub"))
	pub := startPublisher(t, svc)
	msg, err := svc.MessageBuilder().BuildWithStringPayload("x")
	require.NoError(t, err)
	requireSubcode(t, pub.PublishAwaitAcknowledgement(msg, resource.TopicOf("no/pub"), 5*time.Second, nil), subcode.PublishAclDenied)
	held, err := b.QueueMessages("default", "q1")
	require.NoError(t, err)
	assert.Empty(t, held, "a denied message is not spooled")

	// Removing the exceptions allows again.
	for _, path := range []string{"publishTopicExceptions/smf,no%2Fpub", "subscribeTopicExceptions/smf,no%2Fsub%2F%3E", "subscribeShareNameExceptions/smf,noshare"} {
		status, body := s.do("DELETE", base+path, "")
		require.Equal(t, 200, status, body)
	}
	status, body = s.do("DELETE", base+"subscribeShareNameExceptions/smf,noshare", "")
	assert.Equal(t, "NOT_FOUND", errStatusOf(body), status)
	require.NoError(t, pub.PublishAwaitAcknowledgement(msg, resource.TopicOf("no/pub"), 5*time.Second, nil))
	require.NoError(t, qrcv.AddSubscription(resource.TopicSubscriptionOf("no/sub/y")))
}

func TestSharedSubscriptions(t *testing.T) {
	b := NewTestBroker(t, Config{})
	got := make(chan string, 100)
	for i, share := range []string{"g1", "g1", "g2", ""} {
		svc := connect(t, b, nil)
		bld := svc.CreateDirectMessageReceiverBuilder().WithSubscriptions(resource.TopicSubscriptionOf("sh/>"))
		var rcv solace.DirectMessageReceiver
		var err error
		if share == "" {
			rcv, err = bld.Build()
		} else {
			rcv, err = bld.BuildWithShareName(resource.ShareNameOf(share))
		}
		require.NoError(t, err)
		label := fmt.Sprintf("%d:%s", i, share)
		require.NoError(t, rcv.ReceiveAsync(func(message.InboundMessage) { got <- label }))
		require.NoError(t, rcv.Start())
		t.Cleanup(func() { _ = rcv.Terminate(time.Second) })
	}
	pubSvc := connect(t, b, nil)
	pub, err := pubSvc.CreateDirectMessagePublisherBuilder().Build()
	require.NoError(t, err)
	require.NoError(t, pub.Start())
	for range 4 {
		require.NoError(t, pub.PublishString("m", resource.TopicOf("sh/1")))
	}
	counts := map[string]int{}
	for range 12 { // 4 to each group, 4 to the plain subscriber
		select {
		case l := <-got:
			counts[l]++
		case <-time.After(5 * time.Second):
			t.Fatalf("only got %v", counts)
		}
	}
	assert.Equal(t, map[string]int{"0:g1": 2, "1:g1": 2, "2:g2": 4, "3:": 4}, counts)
}
