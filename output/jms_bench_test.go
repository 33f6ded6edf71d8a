package output

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/go-amqp"
	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/jms"

	"github.com/connect-solace/connect-solace/internal/testkit/jmskit"
)

// BenchmarkJMSOutputVsRawAMQP sends 1 KiB messages to RabbitMQ through the jms
// output and, interleaved in the same run, through a bare go-amqp sender
// pipelined as well as it can be (one link, a sender goroutine and a receipt
// waiter with a window of unsettled deliveries), sending byte-identical
// messages. It reports msgs/s for both and their ratio (ratio), and the
// client CPU (user+system, getrusage of this process around each round) per
// message for both and their ratio (cpu_ratio): the output should be at
// least as fast as the raw sender at no more CPU per message. The output is
// driven as Benthos drives it with the default max_in_flight of 64, with
// batches of 4 so both keep 256 deliveries in flight, and (batch1) with one
// message per batch, as a pipeline without batching does.
//
//	go test -run '^$' -bench JMSOutputVsRawAMQP -benchtime 20000x ./output/
func BenchmarkJMSOutputVsRawAMQP(b *testing.B) {
	broker := jmskit.TestBroker(b)
	const window = 256 // unsettled deliveries in flight, for both senders
	payload := bytes.Repeat([]byte("x"), 1024)

	for _, bc := range []struct {
		mode      string
		batchSize int
	}{{jmsDeliveryPersistent, 4}, {jmsDeliveryNonPersistent, 4}, {jmsDeliveryPersistent + "/batch1", 1}} {
		mode := strings.TrimSuffix(bc.mode, "/batch1")
		b.Run(bc.mode, func(b *testing.B) {
			rawQueue := jmskit.RandName("jms-bench-raw-")
			outQueue := jmskit.RandName("jms-bench-out-")
			b.Cleanup(func() { jmskit.DeleteQueues(rawQueue, outQueue) })

			raw := newRawSender(b, broker, "/queue/"+rawQueue, mode == jmsDeliveryPersistent)
			defer raw.close()

			// max_in_flight writers of batch size window/writers: the same
			// number of deliveries in flight as the raw sender (batch1: 64).
			const writers = 64
			batchSize := bc.batchSize
			o := newTestJMSOutput(b, broker.YAML()+"queue: "+outQueue+"\nmessage_type: bytes\ndelivery_mode: "+mode+"\n")
			require.NoError(b, o.Connect(b.Context()))
			defer func() { _ = o.Close(context.Background()) }()

			// Warm up both paths (links attached, queues declared).
			raw.send(b, payload, window)
			writeOK(b, o, service.MessageBatch{service.NewMessage(payload)})

			var rawTime, outTime, rawCPU, outCPU time.Duration
			const chunk = 4096
			b.ResetTimer()
			for done := 0; done < b.N; done += chunk {
				n := min(chunk, b.N-done)
				start, cpu := time.Now(), processCPU(b)
				raw.send(b, payload, n)
				rawTime += time.Since(start)
				rawCPU += processCPU(b) - cpu

				start, cpu = time.Now(), processCPU(b)
				sendThroughOutput(b, o, payload, n, writers, batchSize)
				outTime += time.Since(start)
				outCPU += processCPU(b) - cpu
			}
			b.StopTimer()
			rawRate := float64(b.N) / rawTime.Seconds()
			outRate := float64(b.N) / outTime.Seconds()
			rawPer := float64(rawCPU.Microseconds()) / float64(b.N)
			outPer := float64(outCPU.Microseconds()) / float64(b.N)
			b.ReportMetric(rawRate, "raw_msgs/s")
			b.ReportMetric(outRate, "output_msgs/s")
			b.ReportMetric(outRate/rawRate, "ratio")
			b.ReportMetric(rawPer, "raw_cpu_us/msg")
			b.ReportMetric(outPer, "output_cpu_us/msg")
			b.ReportMetric(outPer/rawPer, "cpu_ratio")
			b.ReportMetric(0, "ns/op") // the per-op time mixes both senders
		})
	}
}

// processCPU is the user and system CPU time this process used so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// sendThroughOutput writes n messages with concurrent WriteBatch calls, as
// Benthos does with max_in_flight writers.
func sendThroughOutput(b *testing.B, o *jmsOutput, payload []byte, n, writers, batchSize int) {
	var wg sync.WaitGroup
	next := make(chan int, writers)
	go func() {
		for sent := 0; sent < n; sent += batchSize {
			next <- min(batchSize, n-sent)
		}
		close(next)
	}()
	errs := make(chan error, writers)
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for size := range next {
				batch := make(service.MessageBatch, size)
				for i := range batch {
					batch[i] = service.NewMessage(payload)
				}
				if err := o.WriteBatch(b.Context(), batch); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

type rawSender struct {
	conn    *amqp.Conn
	sender  *amqp.Sender
	dest    jms.Destination
	durable bool
}

func newRawSender(b *testing.B, broker jmskit.Broker, address string, durable bool) *rawSender {
	ctx := b.Context()
	conn, sess := broker.Dial(b)
	ssm := amqp.SenderSettleModeUnsettled
	sender, err := sess.NewSender(ctx, address, &amqp.SenderOptions{
		SettlementMode:   &ssm,
		TargetDurability: amqp.DurabilityConfiguration,
	})
	require.NoError(b, err)
	return &rawSender{conn: conn, sender: sender, durable: durable, dest: jms.Destination{Kind: jms.KindQueue, Address: address}}
}

// send pipelines n messages: one goroutine transfers, another waits for the
// settlements in order, at most window apart.
func (r *rawSender) send(b *testing.B, payload []byte, n int) {
	ctx := b.Context()
	receipts := make(chan amqp.SendReceipt, 256)
	waitErr := make(chan error, 1)
	go func() {
		for rc := range receipts {
			state, err := rc.Wait(ctx)
			if err == nil {
				if _, ok := state.(*amqp.StateAccepted); !ok {
					err = fmt.Errorf("not accepted: %T", state)
				}
			}
			if err != nil {
				waitErr <- err
				for range receipts {
				}
				return
			}
		}
		waitErr <- nil
	}()
	for range n {
		// The same wire message the output sends (a BytesMessage with its
		// annotations and properties, a fresh ID), so the ratio measures the
		// output's machinery, not the size of the JMS mapping's sections.
		msg, err := jmskit.Encode(&jms.Message{
			Type:        jms.BodyBytes,
			Body:        payload,
			Destination: r.dest,
			Persistent:  r.durable,
			Priority:    jms.DefaultPriority,
		})
		if err != nil {
			close(receipts)
			b.Fatal(err)
		}
		rc, err := r.sender.SendWithReceipt(ctx, msg, nil)
		if err != nil {
			close(receipts)
			b.Fatal(err)
		}
		receipts <- rc
	}
	close(receipts)
	require.NoError(b, <-waitErr)
}

func (r *rawSender) close() { _ = r.conn.Close() }
