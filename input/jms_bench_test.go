package input

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/go-amqp"
	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/jms"
)

// BenchmarkJMSInputVsRawAMQP drains 1 KiB BytesMessages from RabbitMQ
// through the jms input and, interleaved in the same run, through a bare
// go-amqp receiver with the same credit (256) that accepts every message.
// go-amqp's automatic credit renewal stalls against RabbitMQ 3.10 within a
// few thousand messages (as output's test receiver notes), and so does a
// manual grant of half the window at a time, so the raw receiver grants
// credit exactly as the input does: 256 at attach, the settled count
// whenever half the window is settled, and at once while the reader waits
// with nothing buffered. Both read on one goroutine and
// settle on another, as Benthos reads an input and acks from its output. It
// reports msgs/s for both and their ratio, and the client CPU (user+system,
// getrusage) per message for both and their ratio; the goal is a throughput
// ratio of at least 0.9 at no more than 1/0.9 the CPU.
//
//	go test -run '^$' -bench JMSInputVsRawAMQP -benchtime 20000x ./input/
func BenchmarkJMSInputVsRawAMQP(b *testing.B) {
	broker := jmsTestBroker(b)
	const prefetch = 256
	payload := bytes.Repeat([]byte("x"), 1024)
	rawQueue := jmsRandName("jmsin-bench-raw-")
	inQueue := jmsRandName("jmsin-bench-in-")
	b.Cleanup(func() { deleteQueues(rawQueue, inQueue) })

	fillRaw := newBenchFiller(b, broker, "/queue/"+rawQueue)
	fillIn := newBenchFiller(b, broker, "/queue/"+inQueue)
	raw := newBenchRawReceiver(b, broker, "/queue/"+rawQueue, prefetch)
	r := newTestJMSReader(b, broker.yaml()+"queue: "+inQueue+"\nprefetch: "+fmt.Sprint(prefetch)+"\n", nil)
	connectReader(b, r)

	var rawTime, inTime time.Duration
	var rawCPU, inCPU time.Duration
	const chunk = 4096
	b.ResetTimer()
	for done, round := 0, 0; done < b.N; done, round = done+chunk, round+1 {
		n := min(chunk, b.N-done)
		b.StopTimer()
		fillRaw.fill(b, payload, n)
		fillIn.fill(b, payload, n)
		b.StartTimer()
		runRaw := func() {
			start, cpu := time.Now(), cpuTime()
			raw.drain(b, n)
			rawTime += time.Since(start)
			rawCPU += cpuTime() - cpu
		}
		runIn := func() {
			start, cpu := time.Now(), cpuTime()
			drainInput(b, r, n)
			inTime += time.Since(start)
			inCPU += cpuTime() - cpu
		}
		// Alternate which goes first, so drift in the shared machine's load
		// does not favour one.
		if round%2 == 0 {
			runRaw()
			runIn()
		} else {
			runIn()
			runRaw()
		}
	}
	b.StopTimer()
	rawRate := float64(b.N) / rawTime.Seconds()
	inRate := float64(b.N) / inTime.Seconds()
	rawCPUPer := float64(rawCPU.Nanoseconds()) / float64(b.N) / 1e3
	inCPUPer := float64(inCPU.Nanoseconds()) / float64(b.N) / 1e3
	b.ReportMetric(rawRate, "raw_msgs/s")
	b.ReportMetric(inRate, "input_msgs/s")
	b.ReportMetric(inRate/rawRate, "ratio")
	b.ReportMetric(rawCPUPer, "raw_cpu_us/msg")
	b.ReportMetric(inCPUPer, "input_cpu_us/msg")
	b.ReportMetric(rawCPUPer/inCPUPer, "cpu_ratio") // raw/input: >= 0.9 means at most 1/0.9 the raw CPU
	b.ReportMetric(0, "ns/op")                      // the per-op time mixes both receivers
}

// cpuTime is this process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// drainInput reads n messages through the input as Benthos does: ReadBatch
// on one goroutine, the acks on another.
func drainInput(b *testing.B, r *jmsReader, n int) {
	ctx, cancel := context.WithTimeout(b.Context(), time.Minute)
	defer cancel()
	acks := make(chan service.AckFunc, 1024)
	ackDone := make(chan error, 1)
	go func() {
		var err error
		for ack := range acks {
			if e := ack(ctx, nil); e != nil && err == nil {
				err = e
			}
		}
		ackDone <- err
	}()
	for got := 0; got < n; {
		batch, ack, err := r.ReadBatch(ctx)
		if err != nil {
			close(acks)
			b.Fatal(err)
		}
		got += len(batch)
		acks <- ack
	}
	close(acks)
	require.NoError(b, <-ackDone)
}

type benchRawReceiver struct {
	rcv  *amqp.Receiver
	half int

	mu      sync.Mutex
	settled int  // since the last grant
	waiting bool // the reader waits with nothing buffered
}

func (r *benchRawReceiver) grant(force bool) error {
	r.mu.Lock()
	n := r.settled
	if n == 0 || (!force && n < r.half) {
		r.mu.Unlock()
		return nil
	}
	r.settled = 0
	r.mu.Unlock()
	return r.rcv.IssueCredit(uint32(n))
}

func newBenchRawReceiver(b *testing.B, broker jmsBroker, address string, credit int) *benchRawReceiver {
	ctx := b.Context()
	conn, err := amqp.Dial(ctx, broker.url, &amqp.ConnOptions{SASLType: amqp.SASLTypePlain(broker.user, broker.pass)})
	require.NoError(b, err)
	b.Cleanup(func() { _ = conn.Close() })
	sess, err := conn.NewSession(ctx, nil)
	require.NoError(b, err)
	rcv, err := sess.NewReceiver(ctx, address, &amqp.ReceiverOptions{Credit: -1, SourceDurability: amqp.DurabilityConfiguration})
	require.NoError(b, err)
	require.NoError(b, rcv.IssueCredit(uint32(credit)))
	return &benchRawReceiver{rcv: rcv, half: credit / 2}
}

// drain receives n messages on this goroutine and accepts them on another;
// it reads the body like an input would.
func (r *benchRawReceiver) drain(b *testing.B, n int) {
	ctx, cancel := context.WithTimeout(b.Context(), time.Minute)
	defer cancel()
	msgs := make(chan *amqp.Message, 1024)
	done := make(chan error, 1)
	go func() {
		var err error
		for m := range msgs {
			if e := r.rcv.AcceptMessage(ctx, m); e != nil && err == nil {
				err = e
			}
			r.mu.Lock()
			r.settled++
			waiting := r.waiting
			r.mu.Unlock()
			if e := r.grant(waiting); e != nil && err == nil {
				err = e
			}
		}
		done <- err
	}()
	for range n {
		m := r.rcv.Prefetched()
		var err error
		if m == nil {
			r.mu.Lock()
			r.waiting = true
			r.mu.Unlock()
			if err = r.grant(true); err == nil {
				m, err = r.rcv.Receive(ctx, nil)
			}
			r.mu.Lock()
			r.waiting = false
			r.mu.Unlock()
		}
		if err != nil {
			close(msgs)
			b.Fatal(err)
		}
		_ = service.NewMessage(m.GetData())
		msgs <- m
	}
	close(msgs)
	require.NoError(b, <-done)
}

// benchFiller puts BytesMessages on a queue, pipelined.
type benchFiller struct {
	s    *amqp.Sender
	dest jms.Destination
}

func newBenchFiller(b *testing.B, broker jmsBroker, address string) *benchFiller {
	s := newRawSender(b, broker, address)
	return &benchFiller{s: s.s, dest: jms.Destination{Kind: jms.KindQueue, Address: address}}
}

func (f *benchFiller) fill(b *testing.B, payload []byte, n int) {
	ctx := b.Context()
	receipts := make([]amqp.SendReceipt, 0, n)
	for range n {
		m, err := jms.Encode(&jms.Message{Type: jms.BodyBytes, Body: payload, Destination: f.dest, Priority: jms.DefaultPriority})
		require.NoError(b, err)
		rc, err := f.s.SendWithReceipt(ctx, m, nil)
		require.NoError(b, err)
		receipts = append(receipts, rc)
	}
	for _, rc := range receipts {
		_, err := rc.Wait(ctx)
		require.NoError(b, err)
	}
}

// deleteQueues removes what the benchmark left in the broker, when
// rabbitmqctl is at hand.
func deleteQueues(names ...string) {
	for _, q := range names {
		_ = exec.Command("rabbitmqctl", "-q", "-n", "rabbit@localhost", "delete_queue", q).Run()
	}
}
