package solacetest

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging"
	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/config"
	"solace.dev/go/messaging/pkg/solace/resource"

	"github.com/connect-solace/connect-solace/solacetest/faultproxy"
)

// fastFailover makes the client notice a silent network within about 300 ms
// (keepalive every 100 ms, three unanswered) and reconnect every 100 ms.
var fastFailover = config.ServicePropertyMap{
	config.TransportLayerPropertyKeepAliveInterval:                100,
	config.TransportLayerPropertyKeepAliveWithoutResponseLimit:    3,
	config.TransportLayerPropertyReconnectionAttempts:             -1,
	config.TransportLayerPropertyReconnectionAttemptsWaitInterval: 100,
	config.TransportLayerPropertyConnectionAttemptsTimeout:        1000,
}

// publishThroughFault publishes n messages "0".."n-1" to queue q1 from
// clients sessions, with workers batches in flight on each, through a fault proxy, in batches of 50 that each wait for
// their receipts, and re-publishes a batch's failed messages as an
// at-least-once producer does. fault runs once a third of the messages were
// confirmed. It returns the queue's payloads.
func publishThroughFault(t *testing.T, b *Broker, clients, workers, n int, fault func(p *faultproxy.Proxy)) []string {
	t.Helper()
	p, err := faultproxy.New(strings.TrimPrefix(b.SMFURL(), "tcp://"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })

	var seen sync.Map
	var confirmed atomic.Int64
	trigger := make(chan struct{})
	faultDone := make(chan struct{})
	go func() {
		defer close(faultDone)
		<-trigger
		fault(p)
	}()

	ids := make(chan int, n)
	for i := range n {
		ids <- i
	}
	close(ids)
	var wg sync.WaitGroup
	errs := make(chan error, clients*workers)
	start := make(chan struct{}) // once every client is connected
	for c := range clients {
		props := clientProps("tcp://"+p.Addr(), "default", "default")
		for k, v := range fastFailover {
			props[k] = v
		}
		props[config.ClientPropertyName] = fmt.Sprintf("netfault-%d", c)
		svc, err := messaging.NewMessagingServiceBuilder().FromConfigurationProvider(props).Build()
		require.NoError(t, err)
		require.NoError(t, svc.Connect())
		t.Cleanup(func() { _ = svc.Disconnect() })
		pub, err := svc.CreatePersistentMessagePublisherBuilder().OnBackPressureWait(1000).Build()
		require.NoError(t, err)
		pub.SetMessagePublishReceiptListener(func(r solace.PublishReceipt) {
			err := r.GetError()
			if err == nil && !r.IsPersisted() {
				err = fmt.Errorf("not persisted")
			}
			ref := r.GetUserContext().(ref)
			ref.receipts <- receipt{ref.id, err}
		})
		require.NoError(t, pub.Start())
		t.Cleanup(func() { _ = pub.Terminate(time.Second) })
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				dest := resource.TopicOf("#P2P/QUE/q1")
				receipts := make(chan receipt, 50)
				for {
					var batch []int
					for id := range ids {
						batch = append(batch, id)
						if len(batch) == 50 {
							break
						}
					}
					if len(batch) == 0 {
						return
					}
					for attempt := 0; len(batch) > 0; attempt++ {
						if attempt == 100 {
							errs <- fmt.Errorf("client %d: batch still failing after 100 attempts", c)
							return
						}
						for _, id := range batch {
							msg, err := svc.MessageBuilder().BuildWithByteArrayPayload([]byte(strconv.Itoa(id)))
							if err == nil {
								err = pub.Publish(msg, dest, nil, ref{id, receipts})
							}
							if err != nil {
								receipts <- receipt{id, err}
							}
						}
						var failed []int
						for range batch {
							r := <-receipts
							if r.err != nil {
								failed = append(failed, r.id)
								continue
							}
							if _, dup := seen.LoadOrStore(r.id, true); !dup && confirmed.Add(1) == int64(n/3) {
								close(trigger)
							}
						}
						batch = failed
					}
				}
			}()
		}
	}
	close(start)
	wg.Wait()
	<-faultDone
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	return QueuePayloads(t, b, "default", "q1")
}

type receipt struct {
	id  int
	err error
}

// ref is a message's user context: its id and where its receipt goes.
type ref struct {
	id       int
	receipts chan receipt
}

// missing lists the ids of 0..n-1 that are not in payloads.
func missing(payloads []string, n int) []int {
	seen := make(map[string]bool, len(payloads))
	for _, p := range payloads {
		seen[p] = true
	}
	var out []int
	for i := range n {
		if !seen[strconv.Itoa(i)] {
			out = append(out, i)
		}
	}
	return out
}

// TestNetworkFaultsLoseNoPublishedMessage publishes through each network
// fault and checks that every confirmed message is on the queue.
func TestNetworkFaultsLoseNoPublishedMessage(t *testing.T) {
	const n = 3000
	tests := []struct {
		name  string
		fault func(p *faultproxy.Proxy)
	}{
		{"reset", func(p *faultproxy.Proxy) { p.Reset() }},
		// Longer than the keepalive limit: the client gives the connection
		// up and reconnects; the old connection's held bytes reach the
		// broker late.
		{"black-hole then resume", func(p *faultproxy.Proxy) { <-p.BlackHoleFor(1500*time.Millisecond, false) }},
		{"black-hole then close", func(p *faultproxy.Proxy) { <-p.BlackHoleFor(1500*time.Millisecond, true) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewTestBroker(t, Config{Logger: testLogger(t)})
			require.NoError(t, b.CreateQueue("default", QueueConfig{Name: "q1"}))
			got := publishThroughFault(t, b, 4, 8, n, tt.fault)
			require.Empty(t, missing(got, n), "lost messages (queue holds %d)", len(got))
		})
	}
}
