package session

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/message"
	"solace.dev/go/messaging/pkg/solace/resource"

	"github.com/connect-solace/connect-solace/solacetest"
	"github.com/connect-solace/connect-solace/solacetest/faultproxy"
)

// concurrentPublishes wraps the client's direct publisher and records how
// many Publish calls of all the wrapped publishers ran at once.
type concurrentPublishes struct {
	solace.DirectMessagePublisher
	in, most *atomic.Int32
}

func (c concurrentPublishes) Publish(m message.OutboundMessage, t *resource.Topic) error {
	defer c.enter()()
	return c.DirectMessagePublisher.Publish(m, t)
}

func (c concurrentPublishes) PublishBytes(b []byte, t *resource.Topic) error {
	defer c.enter()()
	return c.DirectMessagePublisher.PublishBytes(b, t)
}

func (c concurrentPublishes) enter() (exit func()) {
	n := c.in.Add(1)
	for {
		most := c.most.Load()
		if n <= most || c.most.CompareAndSwap(most, n) {
			break
		}
	}
	return func() { c.in.Add(-1) }
}

// TestDirectPoolSendsOneAtATimeAndReportsEach writes from 64 goroutines, as
// Benthos's max_in_flight does, to a direct pool of four sessions, each
// batch with one message that cannot be built (an empty topic) and one with
// an attribute (built here, not by PublishBytes). The pool's
// publishers send one message at a time, whichever session it is for (so
// that writers do not contend in the client); every writer still gets its
// own results, the bad message's error included, and the broker gets every
// good message.
func TestDirectPoolSendsOneAtATimeAndReportsEach(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	p, err := NewPool(t.Context(), testConfig(b), 4, PublisherOptions{BackPressure: BackPressure{BufferSize: 1000}}, nil, Events{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close(t.Context()) })
	var in, most atomic.Int32
	for i := range p.slots {
		pub := p.slots[i].Load().pub
		pub.direct = concurrentPublishes{DirectMessagePublisher: pub.direct, in: &in, most: &most}
	}

	const writers, batches = 64, 20
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var dst []Result
			for n := range batches {
				bad := (w + n) % 3
				msgs := make([]*Outbound, 3)
				for i := range msgs {
					msgs[i] = &Outbound{Payload: []byte(fmt.Sprintf("%d/%d/%d", w, n, i)), Destination: Destination{Name: "pool/direct"}}
				}
				msgs[bad].Destination.Name = ""
				msgs[(bad+1)%3].CorrelationID = "built here" // the other path
				dst = p.Publisher().PublishBatchInto(t.Context(), msgs, dst)
				for i, r := range dst {
					switch {
					case i == bad && (r.Err == nil || !strings.Contains(r.Err.Error(), "empty topic name")):
						errs <- fmt.Errorf("writer %d batch %d: message %d: want its empty-topic error, got %v", w, n, i, r.Err)
						return
					case i != bad && r.Err != nil:
						errs <- fmt.Errorf("writer %d batch %d: message %d: %w", w, n, i, r.Err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	assert.Equal(t, int32(1), most.Load(), "the pool's publishers called the client one at a time")
	require.Eventually(t, func() bool { return b.PublishedCount("pool/direct") == writers*batches*2 }, 10*time.Second, 10*time.Millisecond,
		"every good message reaches the broker")
}

// TestDirectSenderWaitDoesNotHoldUpOtherSessions: publishers that share a
// sender (as a pool's do) wait for their own session without it. While one
// session reconnects, a batch for it waits, and a batch for the other
// session goes out at once; the waiting batch completes once its session is
// back.
func TestDirectSenderWaitDoesNotHoldUpOtherSessions(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	proxy, err := faultproxy.New(strings.TrimPrefix(b.SMFURL(), "tcp://"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = proxy.Close() })
	cut := testConfig(b)
	cut.URLs = []string{"tcp://" + proxy.Addr()}
	cut.ReconnectAttempts, cut.ReconnectInterval = -1, 50*time.Millisecond

	opts := PublisherOptions{BackPressure: BackPressure{BufferSize: 100}, sender: &directSender{}}
	publisher := func(c Config) (*Session, *Publisher) {
		s, err := Connect(t.Context(), c, nil, Events{})
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close(t.Context()) })
		pub, err := NewPublisher(s, opts)
		require.NoError(t, err)
		t.Cleanup(func() { _ = pub.Close(t.Context()) })
		return s, pub
	}
	cutSess, cutPub := publisher(cut)
	_, okPub := publisher(testConfig(b))
	require.Same(t, cutPub.sender, okPub.sender)
	held := make(chan struct{}, 1)
	cutPub.onHeld = func() { held <- struct{}{} }

	proxy.Refuse()
	proxy.Reset()
	require.Eventually(t, func() bool { return !cutSess.Connected() }, 5*time.Second, time.Millisecond)
	waiting := make(chan []Result, 1)
	go func() {
		waiting <- cutPub.PublishBatch(t.Context(), []*Outbound{
			{Payload: []byte("a"), Destination: Destination{Name: "sender/cut"}, CorrelationID: "built here"},
			{Payload: []byte("b"), Destination: Destination{Name: "sender/cut"}},
		})
	}()
	select {
	case <-held: // the batch waits for its session, without the sender
	case <-time.After(10 * time.Second):
		t.Fatal("the batch for the cut session was not held for a retry")
	}
	for i := range 3 {
		res := okPub.PublishBatch(t.Context(), []*Outbound{{Payload: []byte("x"), Destination: Destination{Name: "sender/ok"}}})
		require.NoError(t, res[0].Err, "batch %d for the connected session", i)
	}
	select {
	case res := <-waiting:
		t.Fatalf("a batch for a session without connection completed: %+v", res)
	default:
	}

	require.NoError(t, proxy.Accept())
	select {
	case res := <-waiting:
		for i, r := range res {
			require.NoError(t, r.Err, "message %d after the reconnection", i)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting batch did not complete after the reconnection")
	}
	require.Eventually(t, func() bool { return b.PublishedCount("sender/cut") == 2 }, 5*time.Second, 10*time.Millisecond)
	assert.Equal(t, 3, b.PublishedCount("sender/ok"))
}

// TestDirectPoolReplacementSharesTheSender: the publishers of a pool share
// one sender when the client buffers their messages, and a session that the
// pool replaces gets a publisher on it too.
func TestDirectPoolReplacementSharesTheSender(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	p, err := NewPool(t.Context(), testConfig(b), 2, PublisherOptions{BackPressure: BackPressure{BufferSize: 10}}, nil, Events{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close(t.Context()) })
	shared := p.slots[1].Load().pub.sender
	require.Same(t, shared, p.slots[0].Load().pub.sender, "the pool's publishers share one sender")

	unbuffered, err := NewPool(t.Context(), testConfig(b), 2, PublisherOptions{BackPressure: BackPressure{Reject: true}}, nil, Events{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = unbuffered.Close(t.Context()) })
	assert.NotSame(t, unbuffered.slots[0].Load().pub.sender, unbuffered.slots[1].Load().pub.sender,
		"without a client buffer each session writes to its socket in the publish call, and keeps its own sender")

	dead := endSession(t, p, 0)
	require.Eventually(t, func() bool {
		s := p.slots[0].Load()
		return s.sess != dead && s.alive()
	}, 10*time.Second, 10*time.Millisecond)
	assert.Same(t, shared, p.slots[0].Load().pub.sender, "the replacement publishes through the same sender")
	res := p.slots[0].Load().pub.PublishBatch(t.Context(), []*Outbound{{Payload: []byte("x"), Destination: Destination{Name: "rep/direct"}}})
	require.NoError(t, res[0].Err)
}

// TestDirectSenderSendsPlainAndAttributedMessages: a message without
// attributes goes out through the client's PublishBytes, one with attributes
// through a message built here; both arrive, in batch order, with their
// payloads and attributes.
func TestDirectSenderSendsPlainAndAttributedMessages(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	require.NoError(t, b.CreateQueue("default", solacetest.QueueConfig{Name: "attrq", Subscriptions: []string{"sender/attr"}}))
	s, err := Connect(t.Context(), testConfig(b), nil, Events{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close(t.Context()) })
	pub, err := NewPublisher(s, PublisherOptions{BackPressure: BackPressure{BufferSize: 10}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = pub.Close(t.Context()) })
	require.True(t, pub.publishBytes, "a wait-mode direct publisher sends plain messages through PublishBytes")

	dest := Destination{Name: "sender/attr"}
	for i, r := range pub.PublishBatch(t.Context(), []*Outbound{
		{Payload: []byte("plain-1"), Destination: dest},
		{Payload: []byte("attributed"), Destination: dest, CorrelationID: "corr-1", ApplicationMessageID: "id-1"},
		{Payload: []byte("plain-2"), Destination: dest},
	}) {
		require.NoError(t, r.Err, "message %d", i)
	}

	rcv, err := s.Service().CreatePersistentMessageReceiverBuilder().Build(resource.QueueDurableExclusive("attrq"))
	require.NoError(t, err)
	require.NoError(t, rcv.Start())
	t.Cleanup(func() { _ = rcv.Terminate(time.Second) })
	type got struct{ payload, corr, id string }
	var msgs []got
	for range 3 {
		m, err := rcv.ReceiveMessage(5 * time.Second)
		require.NoError(t, err)
		p, _ := m.GetPayloadAsBytes()
		corr, _ := m.GetCorrelationID()
		id, _ := m.GetApplicationMessageID()
		msgs = append(msgs, got{string(p), corr, id})
		require.NoError(t, rcv.Ack(m))
	}
	assert.Equal(t, []got{{"plain-1", "", ""}, {"attributed", "corr-1", "id-1"}, {"plain-2", "", ""}}, msgs)
}

// TestDirectPoolCloseWhileWritersQueue closes a direct pool while 32 writers
// keep its shared sender busy, so that some are queued behind a leader and
// some retry without it when the publishers terminate: every writer returns,
// each failure after the Close reports the loss (so that the output
// reconnects and re-sends), and the broker got every message reported sent.
func TestDirectPoolCloseWhileWritersQueue(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	p, err := NewPool(t.Context(), testConfig(b), 2, PublisherOptions{BackPressure: BackPressure{BufferSize: 50}}, nil, Events{})
	require.NoError(t, err)

	const writers = 32
	var sent, batches atomic.Int64
	busy := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var dst []Result
			for n := 0; ; n++ {
				msgs := []*Outbound{
					{Payload: []byte(fmt.Sprintf("%d/%d/a", w, n)), Destination: Destination{Name: "close/direct"}},
					{Payload: []byte(fmt.Sprintf("%d/%d/b", w, n)), Destination: Destination{Name: "close/direct"}, CorrelationID: "built here"},
				}
				dst = p.Publisher().PublishBatchInto(t.Context(), msgs, dst)
				failed := false
				for i, r := range dst {
					if r.Err == nil {
						sent.Add(1)
						continue
					}
					failed = true
					if !errors.Is(r.Err, ErrConnectionLost) {
						errs <- fmt.Errorf("writer %d batch %d message %d: %w", w, n, i, r.Err)
					}
				}
				if failed {
					return
				}
				if batches.Add(1) == 20*writers {
					once.Do(func() { close(busy) })
				}
			}
		}()
	}
	<-busy
	require.NoError(t, p.Close(t.Context()))
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("writers still waiting 10s after the pool closed")
	}
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { return int64(b.PublishedCount("close/direct")) == sent.Load() }, 5*time.Second, 10*time.Millisecond,
		"the broker gets every message reported sent (%d)", sent.Load())
}
