package solacetest

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace/config"
	"solace.dev/go/messaging/pkg/solace/resource"
)

func TestBrowseQueueShowsContentWithoutConsuming(t *testing.T) {
	b := newBroker(t)
	svc := connect(t, b, nil)
	pub := startPublisher(t, svc)
	msg, err := svc.MessageBuilder().WithCorrelationID("corr-1").WithApplicationMessageID("app-1").WithPriority(5).
		WithProperty(config.MessagePropertyPersistentTimeToLive, 30000).
		FromConfigurationProvider(config.MessagePropertyMap{"region": "eu", "n": int64(3)}).
		BuildWithStringPayload(`{"id":1}`)
	require.NoError(t, err)
	require.NoError(t, pub.PublishAwaitAcknowledgement(msg, resource.TopicOf("orders/new"), 5*time.Second, nil))
	_, err = b.Publish("default", Message{Queue: "q1", Payload: []byte{0, 1, 2}})
	require.NoError(t, err)

	for range 2 { // browsing twice shows the same: nothing was consumed
		msgs, err := b.BrowseQueue("default", "q1")
		require.NoError(t, err)
		require.Len(t, msgs, 2)
		m := msgs[0]
		require.Equal(t, "orders/new", m.Destination)
		require.False(t, m.ToQueue)
		require.Equal(t, `{"id":1}`, string(m.Payload))
		require.True(t, m.Persistent)
		require.True(t, m.Undelivered)
		require.Equal(t, 5, m.Priority)
		require.Equal(t, 30*time.Second, m.TTL)
		require.Equal(t, map[string]any{"CorrelationID": "corr-1", "ApplicationMessageID": "app-1"}, m.Headers)
		require.Equal(t, map[string]any{"region": "eu", "n": int64(3)}, m.UserProperties)
		require.Equal(t, MsgContent{QueueMsg: msgs[1].QueueMsg, Destination: "q1", ToQueue: true, Payload: []byte{0, 1, 2}, Persistent: true},
			msgs[1])
	}
	_, err = b.BrowseQueue("default", "nope")
	require.ErrorIs(t, err, ErrUnknownQueue)
}

func TestDeleteAndPurgeQueueMsgs(t *testing.T) {
	b := newBroker(t)
	s := newBrokerSEMP(t, b)
	for i := range 4 {
		_, err := b.Publish("default", Message{Queue: "q1", Payload: []byte("m" + strconv.Itoa(i))})
		require.NoError(t, err)
	}
	msgs, err := b.QueueMsgs("default", "q1")
	require.NoError(t, err)
	require.Len(t, msgs, 4)

	require.NoError(t, b.DeleteQueueMsg("default", "q1", msgs[0].MsgID))
	require.ErrorIs(t, b.DeleteQueueMsg("default", "q1", msgs[0].MsgID), ErrUnknownMsg)
	status, _ := s.do("PUT", "action/msgVpns/default/queues/q1/msgs/"+strconv.FormatUint(msgs[1].MsgID, 10)+"/delete", "{}")
	require.Equal(t, 200, status)
	status, _ = s.do("PUT", "action/msgVpns/default/queues/q1/msgs/"+strconv.FormatUint(msgs[1].MsgID, 10)+"/delete", "{}")
	require.Equal(t, 404, status)
	require.Equal(t, []string{"m2", "m3"}, QueuePayloads(t, b, "default", "q1"))

	n, err := b.PurgeQueue("default", "q1")
	require.NoError(t, err)
	require.Equal(t, 2, n)
	_, st, err := b.Queue("default", "q1")
	require.NoError(t, err)
	require.Equal(t, QueueStats{}, st)

	_, err = b.Publish("default", Message{Queue: "q1", Payload: []byte("again")})
	require.NoError(t, err)
	status, _ = s.do("PUT", "action/msgVpns/default/queues/q1/deleteMsgs", "{}")
	require.Equal(t, 200, status)
	require.Empty(t, QueuePayloads(t, b, "default", "q1"))
	status, _ = s.do("PUT", "action/msgVpns/default/queues/nope/deleteMsgs", "{}")
	require.Equal(t, 404, status)
}

func TestPurgeTakesDeliveredMessagesFromTheirFlow(t *testing.T) {
	b := newBroker(t)
	svc := connect(t, b, nil)
	rcv := startReceiver(t, svc, resource.QueueDurableExclusive("q1"), nil)
	_, err := b.Publish("default", Message{Queue: "q1", Payload: []byte("held")})
	require.NoError(t, err)
	in := receive(t, rcv)
	flows, err := b.QueueFlows("default", "q1")
	require.NoError(t, err)
	require.Len(t, flows, 1)
	require.True(t, flows[0].Active)
	require.Equal(t, 1, flows[0].Unacked)
	require.Positive(t, flows[0].Window)
	require.NotEmpty(t, flows[0].Client)

	n, err := b.PurgeQueue("default", "q1")
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.NoError(t, rcv.Ack(in), "settling a purged message settles nothing")
	flows, err = b.QueueFlows("default", "q1")
	require.NoError(t, err)
	require.Zero(t, flows[0].Unacked)
	_, st, err := b.Queue("default", "q1")
	require.NoError(t, err)
	require.Zero(t, st.SpooledMsgCount)
}

func TestFaultStateAndDeadLetterCount(t *testing.T) {
	b := newBroker(t)
	require.Equal(t, FaultState{}, b.Faults().State())
	b.Faults().PauseDelivery()
	b.Faults().NackNextPublishes(2, "")
	require.Equal(t, FaultState{DeliveryPaused: true, PublishNacksLeft: 2}, b.Faults().State())
	b.Faults().ResumeDelivery()
	require.False(t, b.Faults().State().DeliveryPaused)

	require.NoError(t, b.CreateQueue("default", QueueConfig{Name: "short", RespectTTL: true, DeadMsgQueue: "dmq"}))
	require.NoError(t, b.CreateQueue("default", QueueConfig{Name: "dmq"}))
	_, err := b.Publish("default", Message{Queue: "short", Payload: []byte("x"), TTL: time.Millisecond, DMQEligible: true})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, st, err := b.Queue("default", "short")
		return err == nil && st.DeadLettered == 1
	}, 5*time.Second, 10*time.Millisecond)
	require.Equal(t, []string{"x"}, QueuePayloads(t, b, "default", "dmq"))
}
