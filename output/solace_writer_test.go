package output

import (
	"fmt"
	"sort"
	"sync"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/solacetest"
)

// TestSolaceOutputGroupsConcurrentWrites writes single messages from many
// goroutines at once, as Benthos does without a batching policy, so that
// the writer gathers them into groups; every third message has a priority
// out of range.
// Each call must get its own outcome: the bad messages fail, each on its own
// call, and every good one arrives.
func TestSolaceOutputGroupsConcurrentWrites(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	require.NoError(t, b.CreateQueue("default", solacetest.QueueConfig{Name: "grouped", Subscriptions: []string{"g/ok"}}))
	// One session, two groups at once: most calls queue behind a group.
	w := newSoWriter(t, b, "topic: g/ok\npriority: ${! meta(\"p\") }\nclients: 1\n")

	const writers, each = 32, 20
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		want []string
	)
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				payload := fmt.Sprintf("%d-%d", g, i)
				bad := i%3 == 0
				msg := service.NewMessage([]byte(payload))
				msg.MetaSetMut("p", "1")
				if bad {
					msg.MetaSetMut("p", "300")
				}
				err := w.WriteBatch(t.Context(), service.MessageBatch{msg})
				if bad {
					var be *service.BatchError
					if assert.ErrorAs(t, err, &be, payload) {
						assert.Equal(t, 1, be.IndexedErrors(), payload)
					}
					continue
				}
				if assert.NoError(t, err, payload) {
					mu.Lock()
					want = append(want, payload)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	got := solacetest.QueuePayloads(t, b, "default", "grouped")
	sort.Strings(got)
	sort.Strings(want)
	require.Equal(t, want, got)
}

// TestSolaceOutputFillsSessionsInOrder writes messages one after another
// through four sessions: a load that one session's publish window carries
// goes through that session alone, since every session in use costs the
// client and the broker wake-ups and writes of their own.
func TestSolaceOutputFillsSessionsInOrder(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	require.NoError(t, b.CreateQueue("default", solacetest.QueueConfig{Name: "filled", Subscriptions: []string{"f/ok"}}))
	w := newSoWriter(t, b, "topic: f/ok\nclients: 4\n")

	const n = 20
	for i := range n {
		require.NoError(t, w.WriteBatch(t.Context(), service.MessageBatch{service.NewMessage(fmt.Appendf(nil, "%d", i))}))
	}
	clients, err := b.Clients("default")
	require.NoError(t, err)
	var used []int64
	for _, c := range clients {
		if c.DataRxMsgs > 0 {
			used = append(used, c.DataRxMsgs)
		}
	}
	require.Equal(t, []int64{n}, used, "messages each session received")
}
