package input

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/semp"
	"github.com/connect-solace/connect-solace/internal/testkit/componenttest"
	"github.com/connect-solace/connect-solace/solacetest"
	"github.com/connect-solace/connect-solace/solacetest/faultproxy"
)

// TestSolaceInputNetworkResets consumes a queue with two flows through a
// proxy that resets every connection three times mid-stream. Nothing may be
// lost, every copy after the first must be flagged solace_redelivered, the
// queue must end empty, and with deduplicate: true the pipeline sees every
// message exactly once.
func TestSolaceInputNetworkResets(t *testing.T) {
	const n = 2000
	for _, dedup := range []bool{false, true} {
		t.Run(fmt.Sprintf("deduplicate=%v", dedup), func(t *testing.T) {
			b := solacetest.NewTestBroker(t, solacetest.Config{})
			createQueueSEMP(t, b, semp.Queue{QueueName: "q", AccessType: semp.AccessTypeNonExclusive}, "t")
			pub := newSiPublisher(t, b)
			payloads := siPayloads("m", n)
			pub.send(t, "t", payloads, nil)

			p, err := faultproxy.New(strings.TrimPrefix(b.SMFURL(), "tcp://"))
			require.NoError(t, err)
			t.Cleanup(func() { _ = p.Close() })

			sb := service.NewStreamBuilder()
			require.NoError(t, sb.SetLoggerYAML("level: warn"))
			require.NoError(t, sb.AddInputYAML(fmt.Sprintf(`solace:
  urls: [ tcp://%s ]
  username: default
  password: default
  connect_retries: 0
  reconnect_attempts: -1
  reconnect_interval: 100ms
  connect_timeout: 5s
  queue: q
  flows: 2
  batch_size: 20
  deduplicate: %v
`, p.Addr(), dedup)))
			var (
				mu        sync.Mutex
				seen      = map[string]int{}
				unflagged = map[string]int{}
				resets    int
				allSeen   = make(chan struct{})
			)
			require.NoError(t, sb.AddConsumerFunc(func(_ context.Context, m *service.Message) error {
				body, _ := m.AsBytes()
				redelivered, _ := m.MetaGetMut("solace_redelivered")
				mu.Lock()
				defer mu.Unlock()
				k := string(body)
				if redelivered != true {
					unflagged[k]++
				}
				seen[k]++
				if len(seen) == n && seen[k] == 1 {
					close(allSeen)
				}
				if resets < 3 && len(seen) >= (resets+1)*n/4 {
					resets++
					go p.Reset()
				}
				return nil
			}))
			componenttest.RunStream(t, context.Background(), sb, 10*time.Second)

			select {
			case <-allSeen:
			case <-time.After(60 * time.Second):
				mu.Lock()
				defer mu.Unlock()
				t.Fatalf("only %d of %d messages arrived (queue %+v)", len(seen), n, stats(t, b, "q"))
			}
			waitDepth(t, b, "q", 0)
			mu.Lock()
			defer mu.Unlock()
			require.Equal(t, 3, resets)
			dups := 0
			for _, pl := range payloads {
				require.Positive(t, seen[pl], "%s lost", pl)
				require.LessOrEqual(t, unflagged[pl], 1, "%s arrived %d times without solace_redelivered", pl, unflagged[pl])
				dups += seen[pl] - 1
			}
			t.Logf("%d messages, %d duplicates through %d resets", n, dups, resets)
			if dedup {
				require.Zero(t, dups, "deduplicate: true passes every message on once")
			}
		})
	}
}
