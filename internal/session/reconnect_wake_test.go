package session

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/solacetest"
	"github.com/connect-solace/connect-solace/solacetest/faultproxy"
)

// TestPublishResumesWhenReconnected: a batch published while the client
// reconnects completes as soon as the session is back, not after some
// retry delay of its own (issue 11 finding 6). The network is cut by a fault
// proxy that resets the connection and refuses new ones for a while.
func TestPublishResumesWhenReconnected(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	require.NoError(t, b.CreateQueue("default", solacetest.QueueConfig{Name: "wq"}))
	p, err := faultproxy.New(strings.TrimPrefix(b.SMFURL(), "tcp://"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	c := testConfig(b)
	c.URLs = []string{"tcp://" + p.Addr()}
	c.ReconnectAttempts, c.ReconnectInterval = -1, 100*time.Millisecond

	reconnected := make(chan time.Time, 10)
	s, err := Connect(t.Context(), c, nil, Events{OnReconnected: func() { reconnected <- time.Now() }})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close(t.Context()) })
	pub, err := NewPublisher(s, PublisherOptions{Persistent: true, BackPressure: BackPressure{BufferSize: 100}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = pub.Close(t.Context()) })

	p.Refuse()
	p.Reset()
	require.Eventually(t, func() bool { return !s.Connected() }, 5*time.Second, time.Millisecond)
	done := make(chan []Result, 1)
	go func() {
		msgs := make([]*Outbound, 50)
		for i := range msgs {
			msgs[i] = &Outbound{Payload: []byte("m"), Destination: Destination{Name: "wq", Queue: true}}
		}
		done <- pub.PublishBatch(t.Context(), msgs)
	}()
	time.Sleep(time.Second) // the outage itself
	require.NoError(t, p.Accept())
	var back time.Time
	select {
	case back = <-reconnected:
	case <-time.After(10 * time.Second):
		t.Fatal("no reconnection")
	}
	select {
	case results := <-done:
		require.Less(t, time.Since(back), time.Second, "the batch finished long after the session was back")
		for i, r := range results {
			require.NoError(t, r.Err, "message %d", i)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the batch did not finish after the reconnection")
	}
}
