package solacetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging"
	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/config"
	"solace.dev/go/messaging/pkg/solace/resource"
	"solace.dev/go/messaging/pkg/solace/subcode"
)

func TestReplay(t *testing.T) {
	b := newBroker(t) // with the default replay log
	require.NoError(t, b.CreateQueue("default", QueueConfig{Name: "shared", AccessType: AccessNonExclusive, Subscriptions: []string{"orders/>"}}))
	svc := connect(t, b, nil)
	pub := startPublisher(t, svc)
	publish(t, svc, pub, "orders/1", "m1")
	// The client sends replay start times in whole seconds: wait for the
	// next second so that m1 is before it and m2 after.
	afterM1 := time.Now().Truncate(time.Second).Add(time.Second)
	time.Sleep(time.Until(afterM1))
	publish(t, svc, pub, "orders/2", "m2")
	publish(t, svc, pub, "#P2P/QUE/q1", "m3")
	publish(t, svc, pub, "#P2P/QUE/shared", "not-for-q1")

	// Consume everything once and remember the replication group ids.
	rcv := startReceiver(t, svc, resource.QueueDurableExclusive("q1"), nil)
	var ids []string
	for range 3 {
		m := receive(t, rcv)
		id, ok := m.GetReplicationGroupMessageID()
		require.True(t, ok)
		ids = append(ids, id.String())
		require.NoError(t, rcv.Ack(m))
	}
	require.NoError(t, rcv.Terminate(time.Second))

	rgmid, err := messaging.ReplicationGroupMessageIDOf(ids[0])
	require.NoError(t, err)
	tests := []struct {
		name     string
		strategy config.ReplayStrategy
		want     []string
	}{
		{"from the beginning", config.ReplayStrategyAllMessages(), []string{"m1", "m2", "m3"}},
		{"from a time", config.ReplayStrategyTimeBased(afterM1), []string{"m2", "m3"}},
		{"after a message id", config.ReplayStrategyReplicationGroupMessageID(rgmid), []string{"m2", "m3"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := startReceiver(t, svc, resource.QueueDurableExclusive("q1"), func(bld solace.PersistentMessageReceiverBuilder) {
				bld.WithMessageReplay(tc.strategy)
			})
			for i, want := range tc.want {
				m := receive(t, r)
				require.Equal(t, want, payloadOf(t, m))
				id, _ := m.GetReplicationGroupMessageID()
				require.Equal(t, ids[len(ids)-len(tc.want)+i], id.String(), "a replayed message keeps its id")
				require.NoError(t, r.Ack(m))
			}
			_, err := r.ReceiveMessage(200 * time.Millisecond)
			require.Error(t, err, "nothing more is replayed")
			require.NoError(t, r.Terminate(time.Second))
		})
	}

	t.Run("refusals", func(t *testing.T) {
		unknown, err := messaging.ReplicationGroupMessageIDOf("rmid1:00001-00000000001-00000000-00000063")
		require.NoError(t, err)
		for _, tc := range []struct {
			queue    *resource.Queue
			strategy config.ReplayStrategy
			code     subcode.Code
		}{
			{resource.QueueDurableNonExclusive("shared"), config.ReplayStrategyAllMessages(), subcode.ClientInitiatedReplayNonExclusiveNotAllowed},
			{resource.QueueDurableExclusive("q1"), config.ReplayStrategyReplicationGroupMessageID(unknown), subcode.ReplayStartMessageUnavailable},
		} {
			r, err := svc.CreatePersistentMessageReceiverBuilder().WithMessageReplay(tc.strategy).Build(tc.queue)
			require.NoError(t, err)
			err = r.Start()
			var nerr *solace.NativeError
			require.ErrorAs(t, err, &nerr)
			require.Equal(t, tc.code, nerr.SubCode(), err.Error())
		}
	})
}

func TestReplayLogIsBounded(t *testing.T) {
	v := &vpnState{replayCfg: &ReplayLog{Name: "log", IngressEnabled: true}}
	for i := range replayLogLimit + 10 {
		v.logForReplay(&storedMsg{id: uint64(i), size: 1})
	}
	require.Len(t, v.replayLog(), replayLogLimit)
	require.EqualValues(t, 10, v.replayLog()[0].id, "the oldest fall out")
	v.logForReplay(&storedMsg{id: 1 << 40, size: replayLogBytes})
	require.Len(t, v.replayLog(), 1, "a byte budget applies too")
	require.Equal(t, replayLogBytes, v.replayBytes)
}

func TestReplayNeedsAReplayLog(t *testing.T) {
	b := NewTestBroker(t, Config{NoReplayLog: true})
	require.NoError(t, b.CreateQueue("default", QueueConfig{Name: "q1", Subscriptions: []string{"orders/>"}}))
	svc := connect(t, b, nil)
	pub := startPublisher(t, svc)
	publish(t, svc, pub, "orders/1", "before any log")

	replayAll := func(bld solace.PersistentMessageReceiverBuilder) {
		bld.WithMessageReplay(config.ReplayStrategyAllMessages())
	}
	rcv, err := svc.CreatePersistentMessageReceiverBuilder().WithMessageReplay(config.ReplayStrategyAllMessages()).
		Build(resource.QueueDurableExclusive("q1"))
	require.NoError(t, err)
	var nerr *solace.NativeError
	require.ErrorAs(t, rcv.Start(), &nerr)
	require.Equal(t, subcode.ReplayDisabled, nerr.SubCode())

	// Over SEMP: create a log, publish, drain, replay with the action.
	s := newBrokerSEMP(t, b)
	status, body := s.do("POST", "config/msgVpns/default/replayLogs",
		`{"replayLogName":"log","msgVpnName":"default","ingressEnabled":true,"egressEnabled":true,"maxSpoolUsage":100}`)
	require.Equal(t, 200, status, body)
	status, body = s.do("POST", "config/msgVpns/default/replayLogs", `{"replayLogName":"second"}`)
	assert.Equal(t, "ALREADY_EXISTS", errStatusOf(body), status)
	publish(t, svc, pub, "orders/2", "logged")
	q := startReceiver(t, svc, resource.QueueDurableExclusive("q1"), nil)
	for range 2 {
		require.NoError(t, q.Ack(receive(t, q)))
	}
	status, body = s.do("PUT", "action/msgVpns/default/queues/q1/startReplay", `{"replayLogName":"log"}`)
	require.Equal(t, 200, status, body)
	assert.Equal(t, "logged", payloadOf(t, receive(t, q)), "only what was published while the log existed")
	require.NoError(t, q.Terminate(time.Second))

	// A client-initiated replay works now, until the log is deleted.
	r := startReceiver(t, svc, resource.QueueDurableExclusive("q1"), replayAll)
	assert.Equal(t, "logged", payloadOf(t, receive(t, r)))
	require.NoError(t, r.Terminate(time.Second))
	status, _ = s.do("DELETE", "config/msgVpns/default/replayLogs/log", "")
	require.Equal(t, 200, status)
	status, body = s.do("PUT", "action/msgVpns/default/queues/q1/startReplay", `{"replayLogName":"log"}`)
	assert.Equal(t, "NOT_FOUND", errStatusOf(body), status)
}
