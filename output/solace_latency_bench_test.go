package output

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/message"
	"solace.dev/go/messaging/pkg/solace/resource"

	"github.com/connect-solace/connect-solace/internal/session"
	"github.com/connect-solace/connect-solace/internal/testkit/benchbroker"
	"github.com/connect-solace/connect-solace/internal/testkit/solacekit"
)

// BenchmarkSolaceLatency measures what a connect-solace hop adds to the
// latency of a message, against a hand-written bridge on the Solace Go
// client. Both bridges run in this process against the broker in its own
// (benchbroker); a probe publishes 1 KiB messages stamped with their send
// time into each bridge at the offered rate and receives them behind it, so
// one clock times both ends. Guaranteed cases: publisher → queue → bridge →
// topic → queue → receiver, persistent; direct cases: publisher → topic →
// bridge → topic → receiver, direct.
//
//   - raw: receives with client acks, republishes each message persistent,
//     and acks it on the broker's confirmation (direct: receives on the
//     topic and republishes direct).
//   - solace: a stream of the solace input and the solace output, with the
//     case's output settings (beyond the delivery mode, none: the defaults).
//   - batched (case guaranteed): raw's work in the shape of that stream,
//     written by hand (latBatchedBridge): solace against it is what our
//     code costs, it against raw what batching costs.
//
// Rounds of the bridges alternate, so that load from other processes hits all
// alike, and each starts at a random point of the garbage collector's cycle
// (latCollectorPhase), so that a round meets a collection with the chance
// its own allocations give it. Per bridge it reports p50, p99 and p99.9 in milliseconds
// (<bridge>_p50_ms, ...), the achieved rate at the receiver
// (<bridge>_msgs/s) against offered_msgs/s, the direct messages lost
// (<bridge>_lost), this process's CPU time per message during the bridge's
// rounds (<bridge>_cpu_us/msg: the bridge and the probe, whose share is the
// same for both; what decides whether a bridge keeps up on a busy machine)
// and the broker's (<bridge>_broker_cpu_us/msg),
// the bytes this process allocated per message during them
// (<bridge>_alloc_B/msg, again with the probe's share) and the garbage
// collections that ran in them (<bridge>_gcs: each stalls the messages in
// flight for some milliseconds, and at 10 000 msg/s a few of them decide a
// bridge's p99), and the ratios solace/raw of
// each percentile (p50_ratio, p99_ratio, p999_ratio; goals with the
// defaults: p50 ≤ 1.2, p99 ≤ 1.5, achieved = offered within 2%), and
// solace/batched (p50_ratio_vs_batched, p99_ratio_vs_batched). With
// CONNECT_SOLACE_BENCH_PLOT_DIR set, it writes each case's latency by
// percentile of every bridge as <dir>/<case>_<rate>.svg.
//
// Run it alone: go test -run '^$' -bench BenchmarkSolaceLatency ./output
func BenchmarkSolaceLatency(b *testing.B) {
	cases := []struct {
		name string
		// direct: topic → topic with direct messages (the input subscribed
		// to the topic, the output publishing direct); else queue → queue
		// with persistent ones.
		direct bool
		// extra are the output fields of the solace bridge beyond its
		// destination.
		extra string
		// batched adds latBatchedBridge, the shape of a default stream
		// written by hand (guaranteed only).
		batched bool
	}{
		{name: "guaranteed", batched: true},
		{name: "guaranteed_streaming", extra: "writer: streaming\n"},
		{name: "direct", direct: true, extra: "delivery_mode: direct\n"},
		{name: "direct_streaming", direct: true, extra: "delivery_mode: direct\nwriter: streaming\n"},
	}
	rates := []int{10, 1000, 10000}
	for _, bc := range cases {
		for _, rate := range rates {
			b.Run(fmt.Sprintf("%s/rate=%d", bc.name, rate), func(b *testing.B) {
				broker := benchbroker.Start(b)
				url := broker.SMFURL()
				source := func(side string) string { return "topic_subscriptions: [ lat/" + side + "/in ]" }
				out := func(side string) string { return "lat/" + side + "/out" }
				names := []string{"raw", "solace"}
				if bc.batched {
					names = append(names, "batched")
				}
				if !bc.direct {
					for _, side := range names {
						broker.CreateQueue("lat_"+side+"_in", "lat/"+side+"/in")
						broker.CreateQueue("lat_"+side+"_out", "lat/"+side+"/out")
					}
					source = func(side string) string { return "queue: lat_" + side + "_in" }
					out = func(side string) string { return "lat_" + side + "_out" }
				}
				latRawBridge(b, url, bc.direct, "lat_raw_in", "lat/raw/in", "lat/raw/out")
				latStreamBridge(b, url, source("solace"), "lat/solace/out", bc.extra)
				if bc.batched {
					latBatchedBridge(b, url, "lat_batched_in", "lat/batched/out")
				}
				var sides []*latSide
				for _, name := range names {
					sides = append(sides, &latSide{name: name, broker: broker, direct: bc.direct,
						probe: newLatProbe(b, url, "lat/"+name+"/in", out(name), bc.direct)})
				}
				for _, s := range sides {
					s.stalled = func() string {
						if bc.direct {
							return ""
						}
						in, out := "lat_"+s.name+"_in", "lat_"+s.name+"_out"
						return fmt.Sprintf("; %s holds %d (%s), %s holds %d (%s)", in, broker.Spooled(in), broker.State(in), out, broker.Spooled(out), broker.State(out))
					}
				}
				// Warm both paths up (flows, first allocations).
				for _, s := range sides {
					s.round(b, 1000, 50, nil)
				}
				perRound, rounds := latRoundSize(rate)
				b.ResetTimer()
				for r := 0; r < rounds; r++ {
					for _, s := range sides {
						s.round(b, rate, perRound, s.hist())
					}
				}
				b.StopTimer()
				raw, ours := sides[0], sides[1]
				b.ReportMetric(float64(rate), "offered_msgs/s")
				for _, s := range sides {
					s.report(b)
				}
				for _, q := range latQuantiles {
					b.ReportMetric(ours.quantile(q.q)/raw.quantile(q.q), q.name+"_ratio")
				}
				if len(sides) > 2 {
					batched := sides[2]
					for _, q := range latQuantiles[:2] {
						b.ReportMetric(ours.quantile(q.q)/batched.quantile(q.q), q.name+"_ratio_vs_batched")
					}
				}
				if dir := os.Getenv("CONNECT_SOLACE_BENCH_PLOT_DIR"); dir != "" {
					name := fmt.Sprintf("%s_%d", bc.name, rate)
					title := fmt.Sprintf("%s, %d msg/s offered: latency by percentile", bc.name, rate)
					require.NoError(b, os.MkdirAll(dir, 0o755))
					require.NoError(b, os.WriteFile(filepath.Join(dir, name+".svg"), latPlot(title, sides), 0o644))
				}
			})
		}
	}
}

// latRoundSize is the messages per round and the rounds per bridge at rate:
// about a second a round, at least 25 messages. At 10 msg/s that is 300
// messages a bridge in some 30 s, so that its p99 is the fourth slowest
// message rather than (of 100) the second: one stalled message no longer
// decides it. The others take a few seconds a bridge.
func latRoundSize(rate int) (perRound, rounds int) {
	if rate < 100 {
		return 25, 12
	}
	return rate, 3
}

var latQuantiles = []struct {
	name string
	q    float64
}{{"p50", 50}, {"p99", 99}, {"p999", 99.9}}

// latSide is one bridge with its probe and what its rounds measured.
type latSide struct {
	name    string
	direct  bool          // direct messages: a round ends when arrivals stop, and counts the lost
	stalled func() string // describes the bridge's queues when a round stalls
	probe   *latProbe
	h       *hdrhistogram.Histogram
	msgs    int
	lost    int           // direct messages that never arrived
	busy    time.Duration // first to last receipt, summed over rounds
	broker  *benchbroker.Broker
	cpu     time.Duration // this process's CPU time during the measured rounds
	// brokerCPU is the broker's CPU time during them: a bridge that
	// batches its sends costs the broker less per message.
	brokerCPU time.Duration
	alloc     uint64 // bytes this process allocated during them
	gcs       uint64 // garbage collections that ran during them
}

// latCollectorPhase puts the collector at a random point of its cycle:
// a full collection, then garbage of a uniformly random share of the heap
// growth the next one waits for. A round that allocates A bytes of a cycle
// of G then meets a collection with the chance A/G, as in a process whose
// collections are not in step with the rounds. Without it they were: the
// setup allocates the same every run, and a pair of 10 000 msg/s rounds
// allocates about one cycle (64 MiB with the binary's floor), so every
// collection of a run fell into the same bridge's rounds (ours: 3-5 per run,
// the raw bridge's none, in 15 runs of 15), and each stalls the messages in
// flight for 5-20 ms, which at 10 000 msg/s decides a p99.
func latCollectorPhase() {
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	goal, heap := s[0].Value.Uint64(), s[1].Value.Uint64()
	if goal <= heap || goal-heap > latMaxPhase {
		// With GOGC=off (or a growth this large) there is no cycle to
		// place the round in.
		return
	}
	const chunk = 1 << 20
	for n := rand.Uint64N(goal - heap); n >= chunk; n -= chunk {
		latGarbage = make([]byte, chunk)
	}
	latGarbage = nil
}

// latMaxPhase bounds the garbage latCollectorPhase makes: 16 times the
// binary's floor of 64 MiB.
const latMaxPhase = 1 << 30

// latGarbage keeps latCollectorPhase's allocations on the heap.
var latGarbage []byte

// latHeap reads this process's allocated bytes and completed garbage
// collections so far (runtime/metrics: no stop of the world).
func latHeap() (alloc, gcs uint64) {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}, {Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64(), s[1].Value.Uint64()
}

func (s *latSide) hist() *hdrhistogram.Histogram {
	if s.h == nil {
		// 1 µs to 1 min, 3 significant digits.
		s.h = hdrhistogram.New(1, int64(time.Minute/time.Microsecond), 3)
	}
	return s.h
}

// round sends n messages at rate through the bridge and records their
// latencies in h (none: a warm-up), waiting until all arrived.
func (s *latSide) round(b *testing.B, rate, n int, h *hdrhistogram.Histogram) {
	p := s.probe
	if h != nil {
		latCollectorPhase()
		p.settle(b)
	}
	p.span()
	cpu0, bcpu0 := benchbroker.CPU(), s.broker.CPU()
	alloc0, gcs0 := latHeap()
	interval := time.Second / time.Duration(rate)
	start := time.Now()
	got := 0
	record := func(d time.Duration) {
		got++
		if h != nil {
			_ = h.RecordValue(max(1, d.Microseconds()))
		}
	}
	for i := range n {
		// Paced from the start of the round, so that a late wake-up is
		// made up for by the next sends rather than lowering the rate.
		if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
			time.Sleep(d)
		}
		p.send(b)
		for drained := false; !drained; {
			select {
			case d := <-p.arrived:
				record(d)
			default:
				drained = true
			}
		}
	}
	deadline := time.After(time.Minute)
	for got < n {
		// Direct messages can be lost: the round ends when none arrived
		// for a second.
		var quiet <-chan time.Time
		if s.direct {
			quiet = time.After(time.Second)
		}
		select {
		case d := <-p.arrived:
			record(d)
		case <-quiet:
			if h != nil {
				s.lost += n - got
			}
			n = got
		case <-deadline:
			b.Fatalf("%s bridge: %d of %d messages arrived within a minute%s", s.name, got, n, s.stalled())
		}
	}
	if h != nil {
		first, last := p.span()
		s.msgs += n - 1
		s.busy += last.Sub(first)
		s.cpu += benchbroker.CPU() - cpu0
		s.brokerCPU += s.broker.CPU() - bcpu0
		alloc, gcs := latHeap()
		s.alloc += alloc - alloc0
		s.gcs += gcs - gcs0
	}
}

// settle sends one message through the bridge, unrecorded, and waits for it
// (a second at most: a direct one may be lost). The first message after
// latCollectorPhase took 4-19 ms through either bridge at 10 msg/s (the
// runtime still busy with the heap the phase grew), where the others took
// about 1: at 12 rounds of 25 messages that was 4% of the messages, every
// round's first, and decided each bridge's p99 by the harness's doing.
func (p *latProbe) settle(tb testing.TB) {
	p.send(tb)
	select {
	case <-p.arrived:
	case <-time.After(time.Second):
	}
}

// quantile is the latency at percentile q in milliseconds.
func (s *latSide) quantile(q float64) float64 {
	return float64(s.h.ValueAtQuantile(q)) / 1000
}

func (s *latSide) report(b *testing.B) {
	for _, q := range latQuantiles {
		b.ReportMetric(s.quantile(q.q), s.name+"_"+q.name+"_ms")
	}
	b.ReportMetric(float64(s.msgs)/s.busy.Seconds(), s.name+"_msgs/s")
	b.ReportMetric(float64(s.cpu.Microseconds())/float64(s.msgs), s.name+"_cpu_us/msg")
	b.ReportMetric(float64(s.brokerCPU.Microseconds())/float64(s.msgs), s.name+"_broker_cpu_us/msg")
	b.ReportMetric(float64(s.alloc)/float64(s.msgs), s.name+"_alloc_B/msg")
	b.ReportMetric(float64(s.gcs), s.name+"_gcs")
	if s.direct {
		b.ReportMetric(float64(s.lost), s.name+"_lost")
	}
}

// latRawBridge is the hand-written bridge. Guaranteed: it receives from the
// queue in with client acks, republishes each message persistent to the
// topic out and acks it once the broker confirmed the copy. Direct: it
// receives on the topic inTopic and republishes each message direct.
func latRawBridge(b *testing.B, url string, direct bool, in, inTopic, out string) {
	svc := solacekit.Service(b, url, nil)
	topic := resource.TopicOf(out)
	builder := svc.MessageBuilder()
	if direct {
		pub, err := svc.CreateDirectMessagePublisherBuilder().OnBackPressureWait(soHigherThroughputBuffer).Build()
		require.NoError(b, err)
		require.NoError(b, pub.Start())
		b.Cleanup(func() { _ = pub.Terminate(time.Second) })
		// The receive buffer of the solace input's default, so that both
		// bridges lose only what the same buffer would.
		recv, err := svc.CreateDirectMessageReceiverBuilder().OnBackPressureDropLatest(session.DefaultDirectBuffer).WithSubscriptions(resource.TopicSubscriptionOf(inTopic)).Build()
		require.NoError(b, err)
		require.NoError(b, recv.Start())
		b.Cleanup(func() { _ = recv.Terminate(time.Second) })
		require.NoError(b, recv.ReceiveAsync(func(m message.InboundMessage) {
			payload, _ := m.GetPayloadAsBytes()
			if o, err := builder.BuildWithByteArrayPayload(payload); err == nil {
				_ = pub.Publish(o, topic)
				o.Dispose()
			}
		}))
		return
	}
	recv, err := svc.CreatePersistentMessageReceiverBuilder().WithMessageClientAcknowledgement().Build(resource.QueueDurableExclusive(in))
	require.NoError(b, err)
	pub, err := svc.CreatePersistentMessagePublisherBuilder().OnBackPressureWait(soHigherThroughputBuffer).Build()
	require.NoError(b, err)
	pub.SetMessagePublishReceiptListener(func(r solace.PublishReceipt) {
		if m := r.GetMessage(); m != nil {
			m.Dispose()
		}
		if m, ok := r.GetUserContext().(message.InboundMessage); ok && r.GetError() == nil {
			_ = recv.Ack(m)
		}
	})
	require.NoError(b, pub.Start())
	b.Cleanup(func() { _ = pub.Terminate(time.Second) })
	require.NoError(b, recv.Start())
	b.Cleanup(func() { _ = recv.Terminate(time.Second) })
	require.NoError(b, recv.ReceiveAsync(func(m message.InboundMessage) {
		payload, _ := m.GetPayloadAsBytes()
		if o, err := builder.BuildWithByteArrayPayload(payload); err == nil {
			_ = pub.Publish(o, topic, nil, m)
			o.Dispose()
		}
	}))
}

// latBatchedBridge is a hand-written bridge in the shape of a Benthos
// stream, for guaranteed cases: what a bridge that batches costs whoever
// writes it. Its receive callback queues each message; a reader goroutine
// takes all that wait and hands them to a writer as one batch; the batch is
// published on a second session, at most latBatchedGroups batches at once
// (the solace output's default per session), and its messages are acked
// once the broker confirmed all of them. It does none of the rest of what
// the solace input and output do (attributes, metadata, Benthos's
// transactions), so ours against it is what that costs, and it against raw
// is what the shape costs.
func latBatchedBridge(b *testing.B, url, in, out string) {
	recvSvc, pubSvc := solacekit.Service(b, url, nil), solacekit.Service(b, url, nil)
	topic := resource.TopicOf(out)
	builder := pubSvc.MessageBuilder()
	recv, err := recvSvc.CreatePersistentMessageReceiverBuilder().WithMessageClientAcknowledgement().Build(resource.QueueDurableExclusive(in))
	require.NoError(b, err)
	pub, err := pubSvc.CreatePersistentMessagePublisherBuilder().OnBackPressureWait(soHigherThroughputBuffer).Build()
	require.NoError(b, err)
	// batchDone counts a batch's confirmations down; failed is set when a
	// message of it was not published or not confirmed.
	type batchDone struct {
		left   atomic.Int32
		failed atomic.Bool
		done   chan struct{}
	}
	countDown := func(d *batchDone, ok bool) {
		if !ok {
			d.failed.Store(true)
		}
		if d.left.Add(-1) == 0 {
			close(d.done)
		}
	}
	pub.SetMessagePublishReceiptListener(func(r solace.PublishReceipt) {
		if m := r.GetMessage(); m != nil {
			m.Dispose()
		}
		if d, ok := r.GetUserContext().(*batchDone); ok {
			countDown(d, r.GetError() == nil)
		}
	})
	require.NoError(b, pub.Start())
	b.Cleanup(func() { _ = pub.Terminate(time.Second) })

	var (
		mu      sync.Mutex
		waiting []message.InboundMessage
		ready   = make(chan struct{}, 1)
		batches = make(chan []message.InboundMessage)
		stop    = make(chan struct{})
	)
	b.Cleanup(func() { close(stop) })
	go func() {
		for {
			select {
			case <-ready:
			case <-stop:
				return
			}
			mu.Lock()
			batch := waiting
			waiting = nil
			mu.Unlock()
			if len(batch) == 0 {
				// A signal for messages an earlier take got.
				continue
			}
			select {
			case batches <- batch:
			case <-stop:
				return
			}
		}
	}()
	go func() {
		slots := make(chan struct{}, latBatchedGroups)
		for {
			var batch []message.InboundMessage
			select {
			case batch = <-batches:
			case <-stop:
				return
			}
			slots <- struct{}{}
			go func() {
				defer func() { <-slots }()
				d := &batchDone{done: make(chan struct{})}
				d.left.Store(int32(len(batch)))
				for _, m := range batch {
					payload, _ := m.GetPayloadAsBytes()
					o, err := builder.BuildWithByteArrayPayload(payload)
					if err != nil || pub.Publish(o, topic, nil, d) != nil {
						countDown(d, false)
					}
					if o != nil {
						o.Dispose()
					}
				}
				select {
				case <-d.done:
				case <-stop:
					return
				}
				if d.failed.Load() {
					// Not acknowledged: the broker redelivers the batch
					// once the flow unbinds.
					return
				}
				for _, m := range batch {
					_ = recv.Ack(m)
				}
			}()
		}
	}()
	require.NoError(b, recv.Start())
	b.Cleanup(func() { _ = recv.Terminate(time.Second) })
	require.NoError(b, recv.ReceiveAsync(func(m message.InboundMessage) {
		mu.Lock()
		waiting = append(waiting, m)
		first := len(waiting) == 1
		mu.Unlock()
		if first {
			select {
			case ready <- struct{}{}:
			default:
			}
		}
	}))
}

// latBatchedGroups is latBatchedBridge's batches published at once: the
// solace output's default per session (soGroupsPerClient).
const latBatchedGroups = soGroupsPerClient

// latPlot draws the latency of each side by percentile, on the usual
// logarithmic axis of 1/(1-q) (0%, 90%, 99%, 99.9%, ...), as an SVG.
func latPlot(title string, sides []*latSide) []byte {
	const w, h, left, right, top, bottom = 720.0, 420.0, 70.0, 20.0, 40.0, 50.0
	maxX := 4.0 // up to 99.99%
	// Latency on a logarithmic axis in whole decades of milliseconds, so
	// that medians below a millisecond and tails of tens show together.
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range sides {
		lo = min(lo, math.Floor(math.Log10(max(float64(s.h.Min()), 1)/1000)))
		hi = max(hi, math.Ceil(math.Log10(max(float64(s.h.Max()), 1)/1000)))
	}
	hi = max(hi, lo+1)
	x := func(q float64) float64 { return left + (w-left-right)*min(math.Log10(1/(1-q/100)), maxX)/maxX }
	y := func(ms float64) float64 { return h - bottom - (h-top-bottom)*(math.Log10(max(ms, 1e-3))-lo)/(hi-lo) }
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="12">`+"\n", w, h)
	fmt.Fprintf(&sb, `<rect width="100%%" height="100%%" fill="white"/><text x="%.0f" y="22" font-size="14">%s</text>`+"\n", left, title)
	for i := 0; i <= int(maxX); i++ {
		q := 100 * (1 - math.Pow(10, -float64(i)))
		fmt.Fprintf(&sb, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/><text x="%.1f" y="%.1f" text-anchor="middle">%s%%</text>`+"\n",
			x(q), top, x(q), h-bottom, x(q), h-bottom+16, strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", q), "0"), "."))
	}
	for d := lo; d <= hi; d++ {
		ms := math.Pow(10, d)
		fmt.Fprintf(&sb, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/><text x="%.1f" y="%.1f" text-anchor="end">%g</text>`+"\n",
			left, y(ms), w-right, y(ms), left-6, y(ms)+4, ms)
	}
	fmt.Fprintf(&sb, `<text x="%.1f" y="%.1f" text-anchor="middle">percentile</text>`+"\n", (left+w-right)/2, h-12)
	fmt.Fprintf(&sb, `<text transform="translate(18 %.1f) rotate(-90)" text-anchor="middle">latency (ms)</text>`+"\n", (top+h-bottom)/2)
	colors := []string{"#1f77b4", "#d62728", "#2ca02c"}
	for i, s := range sides {
		var pts []string
		for _, br := range s.h.CumulativeDistribution() {
			q := br.Quantile
			if q >= 100 {
				q = 100 * (1 - math.Pow(10, -maxX))
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(q), y(float64(br.ValueAt)/1000)))
		}
		c := colors[i%len(colors)]
		fmt.Fprintf(&sb, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", c, strings.Join(pts, " "))
		fmt.Fprintf(&sb, `<text x="%.1f" y="%.1f" fill="%s">%s: p50 %.2f ms, p99 %.2f ms, p99.9 %.2f ms</text>`+"\n",
			left+10, top+16+16*float64(i), c, s.name, s.quantile(50), s.quantile(99), s.quantile(99.9))
	}
	sb.WriteString("</svg>\n")
	return []byte(sb.String())
}
