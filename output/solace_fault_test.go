package output

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/testkit/componenttest"
	"github.com/connect-solace/connect-solace/solacetest"
	"github.com/connect-solace/connect-solace/solacetest/faultproxy"
)

// soFaultCase is one network-fault run of the solace output.
type soFaultCase struct {
	n int // messages, ids 0..n-1
	// conn is the connection block after urls (the proxy's url comes
	// first); empty means the defaults.
	conn string
	// keepAlive, when set, is the client's keepalive interval: it gives a
	// silent connection up after three (the default is 3 s). The broker
	// drops a silent client after three intervals too, counted in whole
	// seconds.
	keepAlive time.Duration
	// fault runs once a third of the messages were acknowledged.
	fault func(p *faultproxy.Proxy)
}

// soFaultResult is what a run saw.
type soFaultResult struct {
	acked   int
	missing []int // acknowledged to the pipeline but not on the queue
	dups    int
	elapsed time.Duration
}

// runSoFault streams c.n messages in batches of 50 from 32 producers through
// a solace output (defaults: 4 clients, 64 batches in flight) that reaches b
// through a fault proxy, and counts the unique ids on queue "fq".
func runSoFault(t *testing.T, b *solacetest.Broker, c soFaultCase) soFaultResult {
	t.Helper()
	require.NoError(t, b.CreateQueue("default", solacetest.QueueConfig{Name: "fq"}))
	p, err := faultproxy.New(strings.TrimPrefix(b.SMFURL(), "tcp://"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })

	yaml := fmt.Sprintf("urls: [ tcp://%s ]\nusername: default\npassword: default\n%squeue: fq\n", p.Addr(), c.conn)
	pc, err := solaceOutputSpec().ParseYAML(yaml, nil)
	require.NoError(t, err)

	// The output is built here rather than from YAML so the test can set
	// the client's keepalive, which is not a config field.
	env := service.GlobalEnvironment().Clone()
	var w *solaceWriter
	require.NoError(t, env.RegisterBatchOutput("solace_fault", service.NewConfigSpec(),
		func(_ *service.ParsedConfig, mgr *service.Resources) (service.BatchOutput, service.BatchPolicy, int, error) {
			var err error
			if w, err = newSolaceWriterFromParsed(pc, mgr); err != nil {
				return nil, service.BatchPolicy{}, 0, err
			}
			if c.keepAlive > 0 {
				w.conn.KeepAliveInterval, w.conn.KeepAliveLimit = c.keepAlive, 3
			}
			mif, err := pc.FieldMaxInFlight()
			return w, w.batchPolicy, mif, err
		}))
	sb := env.NewStreamBuilder()
	require.NoError(t, sb.SetLoggerYAML("level: warn"))
	send, err := sb.AddBatchProducerFunc()
	require.NoError(t, err)
	require.NoError(t, sb.AddOutputYAML("solace_fault: {}"))
	componenttest.RunStream(t, context.Background(), sb, 20*time.Second)

	start := time.Now()
	ids := make(chan int, c.n)
	for i := range c.n {
		ids <- i
	}
	close(ids)
	var acked atomic.Int64
	trigger := make(chan struct{})
	var triggerOnce sync.Once
	faultDone := make(chan struct{})
	go func() {
		defer close(faultDone)
		select {
		case <-trigger:
			c.fault(p)
		case <-t.Context().Done():
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				batch := make(service.MessageBatch, 0, 50)
				for id := range ids {
					batch = append(batch, service.NewMessage([]byte(strconv.Itoa(id))))
					if len(batch) == cap(batch) {
						break
					}
				}
				if len(batch) == 0 {
					return
				}
				ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
				err := send(ctx, batch)
				cancel()
				if err != nil {
					errs <- err
					return
				}
				if acked.Add(int64(len(batch))) >= int64(c.n/3) {
					triggerOnce.Do(func() { close(trigger) })
				}
			}
		}()
	}
	wg.Wait()
	triggerOnce.Do(func() { close(trigger) })
	<-faultDone
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	res := soFaultResult{acked: int(acked.Load()), elapsed: time.Since(start)}
	seen := map[string]int{}
	for _, m := range solacetest.QueuePayloads(t, b, "default", "fq") {
		seen[m]++
	}
	for i := range c.n {
		switch k := seen[strconv.Itoa(i)]; {
		case k == 0:
			res.missing = append(res.missing, i)
		case k > 1:
			res.dups += k - 1
		}
	}
	return res
}

// TestSolaceOutputNetworkFaults publishes through each network fault and
// requires every message the pipeline saw acknowledged to be on the queue.
func TestSolaceOutputNetworkFaults(t *testing.T) {
	const n = 3000
	// Reconnect quickly; keep reconnecting for the whole outage.
	fast := "reconnect_attempts: -1\nreconnect_interval: 100ms\nconnect_timeout: 2s\n"
	tests := []struct {
		name string
		c    soFaultCase
	}{
		{"reset", soFaultCase{conn: fast, fault: func(p *faultproxy.Proxy) { p.Reset() }}},
		// Shorter than the keepalive limit: the connection survives.
		{"short black-hole then resume", soFaultCase{conn: fast, fault: func(p *faultproxy.Proxy) {
			<-p.BlackHoleFor(time.Second, false)
		}}},
		// Longer than the keepalive limit on both sides (3 s): the broker
		// drops the silent session, the client reconnects through the
		// resumed network and resends its unacknowledged window. This lost
		// messages while solacetest took an out-of-order message's id as
		// the flow's last id (issue 11 finding 1).
		{"black-hole then resume", soFaultCase{conn: fast, keepAlive: time.Second, fault: func(p *faultproxy.Proxy) {
			<-p.BlackHoleFor(5*time.Second, false)
		}}},
		{"black-hole then close", soFaultCase{conn: fast, keepAlive: 100 * time.Millisecond, fault: func(p *faultproxy.Proxy) {
			<-p.BlackHoleFor(2*time.Second, true)
		}}},
		{"refuse", soFaultCase{conn: fast, fault: func(p *faultproxy.Proxy) {
			p.Refuse()
			p.Reset()
			time.Sleep(time.Second) // the outage itself, not a synchronisation
			require.NoError(t, p.Accept())
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := solacetest.NewTestBroker(t, solacetest.Config{})
			tt.c.n = n
			res := runSoFault(t, b, tt.c)
			t.Logf("%d acked, %d duplicates, %v", res.acked, res.dups, res.elapsed)
			require.Equal(t, n, res.acked)
			require.Empty(t, res.missing, "acknowledged but not on the queue")
		})
	}
}
