package input

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service/integration"
	"github.com/stretchr/testify/require"

	_ "github.com/connect-solace/connect-solace/output"
	"github.com/connect-solace/connect-solace/solacetest"
)

// TestIntegrationSolaceStreams runs Benthos's broker suite: the solace output
// publishes to a per-test topic, the test broker spools it to a per-test queue
// and the solace input consumes that queue.
func TestIntegrationSolaceStreams(t *testing.T) {
	integration.CheckSkip(t)
	t.Parallel()

	b := solacetest.NewTestBroker(t, solacetest.Config{})
	template := fmt.Sprintf(`
output:
  solace:
    urls: [ %[1]s ]
    username: default
    password: default
    reconnect_interval: 100ms
    topic: it/$ID
    writer: streaming
    clients: 1
    max_in_flight: $MAX_IN_FLIGHT
    metadata:
      include_patterns: [ ".*" ]

input:
  solace:
    urls: [ %[1]s ]
    username: default
    password: default
    reconnect_interval: 100ms
    queue: it-$ID
    flows: 2
    batch_size: 1
`, b.SMFURL())

	suite := integration.StreamTests(
		integration.StreamTestOpenClose(),
		integration.StreamTestMetadata(),
		integration.StreamTestSendBatch(10),
		integration.StreamTestStreamSequential(100),
		integration.StreamTestStreamParallel(200),
		integration.StreamTestStreamParallelLossy(200),
		integration.StreamTestAtLeastOnceDelivery(),
		integration.StreamTestStreamParallelLossyThroughReconnect(200),
	)
	suite.Run(t, template,
		integration.StreamTestOptTimeout(60*time.Second),
		integration.StreamTestOptPreTest(func(t testing.TB, _ context.Context, vars *integration.StreamTestConfigVars) {
			require.NoError(t, b.CreateQueue("default", solacetest.QueueConfig{
				Name:          "it-" + vars.ID,
				AccessType:    solacetest.AccessNonExclusive,
				Subscriptions: []string{"it/" + vars.ID},
			}))
		}),
	)
}
