package processor

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging"
	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/config"
	"solace.dev/go/messaging/pkg/solace/message"
	"solace.dev/go/messaging/pkg/solace/resource"

	"github.com/connect-solace/connect-solace/internal/testkit/benchbroker"
)

// The shape of BenchmarkSolaceRequestReplyVsRaw: both sides keep up to
// rrBenchOutstanding requests waiting for replies; the processor gets them
// as rrBenchThreads pipeline threads handing it batches of rrBenchBatch.
const (
	rrBenchOutstanding = 64
	rrBenchThreads     = 16
	rrBenchBatch       = 8
)

// BenchmarkSolaceRequestReplyVsRaw sends 1 KiB requests through the
// solace_request_reply processor and, in interleaved rounds against the same
// broker, through a plain loop over the Go client's
// RequestReplyMessagePublisher with the same number of requests
// outstanding. The broker and the replier (a Go client
// RequestReplyMessageReceiver echoing each request) run in a child process,
// so getrusage of this process is the requesting side's CPU alone. It
// reports round trips per second of each side (processor_msgs/s,
// raw_msgs/s), throughput_ratio (goal >= 0.9) and cpu_ratio (CPU per round
// trip, goal <= 1.2), medians over adjacent round pairs (see
// benchbroker.Report).
func BenchmarkSolaceRequestReplyVsRaw(b *testing.B) {
	payload := make([]byte, 1024)
	for i := range payload {
		payload[i] = byte('a' + i%26)
	}
	broker := benchbroker.Start(b)
	startBenchReplier(b, broker.SMFURL(), "bench/rr/>")
	p := newRR(b, broker.SMFURL(), fmt.Sprintf("topic: bench/rr/processor\ntimeout: 30s\nmax_outstanding: %d\n", rrBenchOutstanding))
	raw := newRawRequester(b, broker)

	// Warm both up (sessions, publishers, first allocations).
	rrBenchProcessor(b, p, payload, 200)
	raw.run(b, payload, 200)

	n := b.N
	const rounds = 20
	var rawM, procM benchbroker.Meter
	b.ResetTimer()
	for r := 0; r < rounds; r++ {
		k := n/rounds + min(1, max(0, n%rounds-r))
		if k == 0 {
			continue
		}
		// Each pair runs in either order, alternately, so that neither
		// side always follows the other (into its garbage, its broker
		// state and its replier's backlog).
		sides := []func(){
			func() { rawM.Round(k, func() { raw.run(b, payload, k) }) },
			func() { procM.Round(k, func() { rrBenchProcessor(b, p, payload, k) }) },
		}
		if r%2 == 1 {
			sides[0], sides[1] = sides[1], sides[0]
		}
		for _, side := range sides {
			side()
		}
	}
	b.StopTimer()
	benchbroker.Report(b, "processor", &procM, &rawM)
}

// rrBenchProcessor sends n requests through p, as rrBenchThreads pipeline
// threads would, and checks every reply.
func rrBenchProcessor(b *testing.B, p *solaceRequestReply, payload []byte, n int) {
	batches := make(chan int, n/rrBenchBatch+1)
	for left := n; left > 0; left -= rrBenchBatch {
		batches <- min(left, rrBenchBatch)
	}
	close(batches)
	var wg sync.WaitGroup
	var failed sync.Once
	for range rrBenchThreads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for size := range batches {
				batch := make(service.MessageBatch, size)
				for i := range batch {
					batch[i] = service.NewMessage(payload)
				}
				out, err := p.ProcessBatch(context.Background(), batch)
				if err != nil {
					failed.Do(func() { b.Error(err) })
					return
				}
				for _, m := range out[0] {
					if err := m.GetError(); err != nil {
						failed.Do(func() { b.Error(err) })
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
}

// rawRequester is the baseline: the Go client's request publisher, with
// rrBenchOutstanding requests in flight.
type rawRequester struct {
	pub   solace.RequestReplyMessagePublisher
	topic *resource.Topic
}

func newRawRequester(b *testing.B, broker *benchbroker.Broker) *rawRequester {
	svc, err := messaging.NewMessagingServiceBuilder().FromConfigurationProvider(broker.ClientProps()).Build()
	require.NoError(b, err)
	require.NoError(b, svc.Connect())
	b.Cleanup(func() { _ = svc.Disconnect() })
	pub, err := svc.RequestReply().CreateRequestReplyMessagePublisherBuilder().OnBackPressureWait(rrBenchOutstanding).Build()
	require.NoError(b, err)
	require.NoError(b, pub.Start())
	b.Cleanup(func() { _ = pub.Terminate(time.Second) })
	return &rawRequester{pub: pub, topic: resource.TopicOf("bench/rr/raw")}
}

// run sends n requests, keeping up to rrBenchOutstanding outstanding, and
// reads every reply's payload.
func (r *rawRequester) run(b *testing.B, payload []byte, n int) {
	slots := make(chan struct{}, rrBenchOutstanding)
	var wg sync.WaitGroup
	var failed sync.Once
	for range n {
		slots <- struct{}{}
		wg.Add(1)
		err := r.pub.PublishBytes(payload, func(reply message.InboundMessage, _ any, err error) {
			defer func() { <-slots; wg.Done() }()
			if err != nil {
				failed.Do(func() { b.Error(err) })
				return
			}
			if body, ok := reply.GetPayloadAsBytes(); !ok || len(body) != len(payload) {
				failed.Do(func() { b.Error("a reply with the wrong payload") })
			}
			reply.Dispose()
		}, r.topic, 30*time.Second, nil)
		if err != nil {
			b.Fatal(err)
		}
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
}

// envBenchReplier, set to a broker URL and topic ("<url> <topic>"), makes
// the test binary a replier process instead of running tests (TestMain):
// a Go client RequestReplyMessageReceiver echoing every request, in a
// process of its own, so that the benchmark measures the requesting side
// alone. It runs from TestMain, not from an init function, because the
// Solace client's C library calls back into Go, which waits for package
// initialisation to finish.
const envBenchReplier = "CONNECT_SOLACE_BENCH_REPLIER"

func TestMain(m *testing.M) {
	if v := os.Getenv(envBenchReplier); v != "" {
		os.Exit(serveBenchReplier(v))
	}
	os.Exit(m.Run())
}

// startBenchReplier starts a replier process for topic at url, stopped when
// tb ends, and waits until it is subscribed.
func startBenchReplier(tb testing.TB, url, topic string) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), envBenchReplier+"="+url+" "+topic)
	stdin, err := cmd.StdinPipe()
	require.NoError(tb, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(tb, err)
	cmd.Stderr = os.Stderr
	require.NoError(tb, cmd.Start())
	tb.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	})
	line := make([]byte, 3)
	_, err = io.ReadFull(stdout, line)
	require.NoError(tb, err)
	require.Equal(tb, "ok\n", string(line), "the replier process did not start")
}

// serveBenchReplier answers requests until stdin closes.
func serveBenchReplier(spec string) int {
	var url, topic string
	if _, err := fmt.Sscan(spec, &url, &topic); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	svc, err := messaging.NewMessagingServiceBuilder().FromConfigurationProvider(config.ServicePropertyMap{
		config.TransportLayerPropertyHost:                url,
		config.ServicePropertyVPNName:                    "default",
		config.AuthenticationPropertySchemeBasicUserName: "default",
		config.AuthenticationPropertySchemeBasicPassword: "default",
	}).Build()
	if err == nil {
		err = svc.Connect()
	}
	var rcv solace.RequestReplyMessageReceiver
	if err == nil {
		// Room for every request outstanding: the client's default
		// buffer (50) drops the newest.
		rcv, err = svc.RequestReply().CreateRequestReplyMessageReceiverBuilder().
			OnBackPressureDropLatest(1 << 16).Build(resource.TopicSubscriptionOf(topic))
	}
	if err == nil {
		err = rcv.Start()
	}
	builder := svc.MessageBuilder()
	if err == nil {
		err = rcv.ReceiveAsync(func(req message.InboundMessage, replier solace.Replier) {
			defer req.Dispose()
			if replier == nil {
				return
			}
			body, _ := req.GetPayloadAsBytes()
			if reply, err := builder.BuildWithByteArrayPayload(body); err == nil {
				_ = replier.Reply(reply)
				reply.Dispose()
			}
		})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench replier:", err)
		return 1
	}
	fmt.Println("ok")
	_, _ = io.Copy(io.Discard, os.Stdin)
	_ = rcv.Terminate(time.Second)
	_ = svc.Disconnect()
	return 0
}
