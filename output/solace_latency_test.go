package output

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/message"
	"solace.dev/go/messaging/pkg/solace/resource"

	_ "github.com/connect-solace/connect-solace/input" // the solace input of the bridges
	"github.com/connect-solace/connect-solace/internal/testkit/componenttest"
	"github.com/connect-solace/connect-solace/internal/testkit/solacekit"
	"github.com/connect-solace/connect-solace/solacetest"
)

// TestSolaceDefaultBridgeSendsAtOnce runs a default bridge, solace input
// from a queue to the solace output with nothing but its destination set,
// and sends it a message a second: each one must arrive within 50 ms. An
// output that waits for more messages (a batching period) before it sends
// holds every message of an idle pipeline for that long. A hold happens on
// every try; a machine too busy to move one message in 50 ms (a -race run
// beside other packages' tests) does not keep that up, so a series that
// misses is tried again, up to three series in all.
func TestSolaceDefaultBridgeSendsAtOnce(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	require.NoError(t, b.CreateQueue("default", solacetest.QueueConfig{Name: "idle-in", Subscriptions: []string{"idle/in"}}))
	require.NoError(t, b.CreateQueue("default", solacetest.QueueConfig{Name: "idle-out", Subscriptions: []string{"idle/out"}}))
	latStreamBridge(t, b.SMFURL(), "queue: idle-in", "idle/out", "")
	probe := newLatProbe(t, b.SMFURL(), "idle/in", "idle-out", false)

	const n, bound, tries = 4, 50 * time.Millisecond, 3
	// series sends n messages a second apart and returns their latencies.
	series := func() []time.Duration {
		var got []time.Duration
		for i := range n {
			// A message a second: the bridge is idle when each arrives.
			time.Sleep(time.Second)
			probe.send(t)
			select {
			case d := <-probe.arrived:
				got = append(got, d)
			case <-time.After(10 * time.Second):
				t.Fatalf("message %d did not arrive within 10 s (arrived so far after %v)", i, got)
			}
		}
		return got
	}
	var all [][]time.Duration
	for range tries {
		got := series()
		all = append(all, got)
		if slices.Max(got) < bound {
			return
		}
	}
	t.Fatalf("in each of %d series of %d messages a second, a message took %v or more through the default bridge: %v", tries, n, bound, all)
}

// latStreamBridge runs a connect-solace stream from the input source (its
// queue or topic_subscriptions field) to the topic out: the solace input and
// output with their defaults, plus extra output fields. It stops when tb
// ends.
func latStreamBridge(tb testing.TB, url, source, out, extra string) {
	conn := solacekit.ConnectionYAML(url)
	indent := func(s string) string { return "    " + strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n    ") }
	sb := service.NewStreamBuilder()
	require.NoError(tb, sb.SetYAML(fmt.Sprintf("logger:\n  level: none\ninput:\n  solace:\n%s\noutput:\n  solace:\n%s\n",
		indent(conn+source), indent(conn+"topic: "+out+"\n"+extra))))
	componenttest.RunStream(tb, context.Background(), sb, 10*time.Second)
}

// latProbe publishes stamped messages into a bridge and receives them
// behind it, in one process, so one clock times both ends: persistent
// messages received from a queue, or direct ones received on a topic.
type latProbe struct {
	svc     solace.MessagingService
	pub     solace.PersistentMessagePublisher
	direct  solace.DirectMessagePublisher
	topic   *resource.Topic
	payload []byte
	// arrived gets each message's time from publish to receipt.
	arrived chan time.Duration
	mu      sync.Mutex
	first   time.Time // first and last receipt
	last    time.Time
}

// latPayloadSize is the size of the probe's messages, as in the issue's
// measurements and BenchmarkSolaceOutput; the send time is stamped at
// latStampAt, behind text: a first byte that looks like a structured-data
// tag makes the input ask the client whether the payload is one.
const latPayloadSize, latStampAt = 1024, 8

// latPayload is a probe message's payload: letters, as BenchmarkSolaceOutput
// sends, with room for the stamp.
func latPayload() []byte {
	p := make([]byte, latPayloadSize)
	for i := range p {
		p[i] = byte('a' + i%26)
	}
	return p
}

// newLatProbe publishes to topic in and receives from out: a queue, or with
// direct a topic it subscribes to.
func newLatProbe(tb testing.TB, url, in, out string, direct bool) *latProbe {
	p := &latProbe{
		svc:     solacekit.Service(tb, url, nil),
		topic:   resource.TopicOf(in),
		payload: latPayload(),
		arrived: make(chan time.Duration, 1<<16),
	}
	onMessage := func(m message.InboundMessage) {
		now := time.Now()
		b, ok := m.GetPayloadAsBytes()
		if !ok || len(b) < latStampAt+8 {
			return
		}
		sent := time.Unix(0, int64(binary.LittleEndian.Uint64(b[latStampAt:])))
		p.mu.Lock()
		if p.first.IsZero() {
			p.first = now
		}
		p.last = now
		p.mu.Unlock()
		p.arrived <- now.Sub(sent)
	}
	var err error
	if direct {
		p.direct, err = p.svc.CreateDirectMessagePublisherBuilder().OnBackPressureWait(soHigherThroughputBuffer).Build()
		require.NoError(tb, err)
		require.NoError(tb, p.direct.Start())
		tb.Cleanup(func() { _ = p.direct.Terminate(time.Second) })
		// The probe measures and must not lose: its buffer holds a round's
		// messages, where the client's default (50) dropped what a bridge
		// sends in a burst.
		recv, err := p.svc.CreateDirectMessageReceiverBuilder().OnBackPressureDropLatest(1 << 16).WithSubscriptions(resource.TopicSubscriptionOf(out)).Build()
		require.NoError(tb, err)
		require.NoError(tb, recv.Start())
		tb.Cleanup(func() { _ = recv.Terminate(time.Second) })
		require.NoError(tb, recv.ReceiveAsync(onMessage))
		return p
	}
	p.pub, err = p.svc.CreatePersistentMessagePublisherBuilder().OnBackPressureWait(soHigherThroughputBuffer).Build()
	require.NoError(tb, err)
	p.pub.SetMessagePublishReceiptListener(func(r solace.PublishReceipt) {
		if m := r.GetMessage(); m != nil {
			m.Dispose()
		}
	})
	require.NoError(tb, p.pub.Start())
	tb.Cleanup(func() { _ = p.pub.Terminate(time.Second) })
	recv, err := p.svc.CreatePersistentMessageReceiverBuilder().WithMessageAutoAcknowledgement().Build(resource.QueueDurableExclusive(out))
	require.NoError(tb, err)
	require.NoError(tb, recv.Start())
	tb.Cleanup(func() { _ = recv.Terminate(time.Second) })
	require.NoError(tb, recv.ReceiveAsync(onMessage))
	return p
}

// send publishes one message stamped with the time now.
func (p *latProbe) send(tb testing.TB) {
	binary.LittleEndian.PutUint64(p.payload[latStampAt:], uint64(time.Now().UnixNano()))
	m, err := p.svc.MessageBuilder().BuildWithByteArrayPayload(p.payload)
	require.NoError(tb, err)
	if p.direct != nil {
		err = p.direct.Publish(m, p.topic)
	} else {
		err = p.pub.Publish(m, p.topic, nil, nil)
	}
	require.NoError(tb, err)
	m.Dispose()
}

// span returns the first and last receipt since the last call, and resets them.
func (p *latProbe) span() (first, last time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	first, last = p.first, p.last
	p.first, p.last = time.Time{}, time.Time{}
	return first, last
}
