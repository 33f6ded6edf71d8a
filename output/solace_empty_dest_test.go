package output

import (
	"fmt"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/solacetest"
)

// A dynamic destination that evaluates empty (its metadata empty or
// missing) fails that message, naming the field, in every mode and writer;
// the other messages of the batch are sent and nothing else is.
func TestSolaceOutputEmptyDynamicDestination(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	require.NoError(t, b.CreateQueue("default", solacetest.QueueConfig{Name: "ed-q", Subscriptions: []string{"ed/t"}}))
	for _, field := range []string{"topic", "queue"} {
		for _, mode := range []string{"persistent", "direct"} {
			for _, writer := range []string{"batched", "streaming"} {
				if field == "queue" && mode == "direct" {
					continue // the config lint refuses direct to a queue
				}
				t.Run(fmt.Sprintf("%s/%s/%s", field, mode, writer), func(t *testing.T) {
					w := newSoWriter(t, b, fmt.Sprintf("%s: ${! meta(\"d\") }\ndelivery_mode: %s\nwriter: %s\nclients: 1\n", field, mode, writer))
					dest := map[string]string{"topic": "ed/t", "queue": "ed-q"}[field]
					before := len(solacetest.QueuePayloads(t, b, "default", "ed-q"))
					batch := soBatch([]string{"empty", "ok", "missing"}, nil)
					batch[0].MetaSetMut("d", "")
					batch[1].MetaSetMut("d", dest)
					fails := writeFailures(t, w, batch)
					require.Equal(t, []int{0, 2}, mapsKeys(fails))
					for _, i := range []int{0, 2} {
						assert.Contains(t, fails[i], "field "+field)
						assert.Contains(t, fails[i], "empty")
					}
					if mode == "persistent" {
						assert.Equal(t, []string{"ok"}, solacetest.QueuePayloads(t, b, "default", "ed-q")[before:])
					}
				})
			}
		}
	}
	_ = service.MessageBatch{}
}
