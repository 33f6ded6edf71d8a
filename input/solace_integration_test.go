package input

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/redpanda-data/benthos/v4/public/service/integration"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/testkit/componenttest"
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

	suite := integration.StreamTests(
		integration.StreamTestOpenClose(),
		integration.StreamTestMetadata(),
		integration.StreamTestSendBatch(10),
		integration.StreamTestStreamSequential(100),
		integration.StreamTestStreamParallel(200),
		integration.StreamTestStreamParallelLossy(200),
		// integration.StreamTestAtLeastOnceDelivery runs in
		// TestIntegrationNoRaceSolaceAtLeastOnce (solace_integration_norace_test.go):
		// in benthos v4.60.0 its sender goroutine ranges over the map of
		// expected messages while the test goroutine deletes from it
		// (stream_test_definitions.go:575-588), a race in the suite itself
		// that -race reports once delivery is fast.
		integration.StreamTestStreamParallelLossyThroughReconnect(200),
	)
	suite.Run(t, integrationTemplate(b), integrationOpts(b)...)
}

// integrationTemplate is the suite's config: the solace output publishes to a
// per-test topic, which the per-test queue made by integrationOpts subscribes
// to, and the solace input consumes that queue.
func integrationTemplate(b *solacetest.Broker) string {
	return fmt.Sprintf(`
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

}

// integrationOpts creates each test's queue before the suite starts it.
func integrationOpts(b *solacetest.Broker) []integration.StreamTestOptFunc {
	return []integration.StreamTestOptFunc{
		integration.StreamTestOptTimeout(60 * time.Second),
		integration.StreamTestOptPreTest(func(t testing.TB, _ context.Context, vars *integration.StreamTestConfigVars) {
			require.NoError(t, b.CreateQueue("default", solacetest.QueueConfig{
				Name:          "it-" + vars.ID,
				AccessType:    solacetest.AccessNonExclusive,
				Subscriptions: []string{"it/" + vars.ID},
			}))
		}),
	}
}

// TestIntegrationSolaceAtLeastOnceThroughRestart is Benthos's at-least-once
// scenario: five messages go through the solace output; the pipeline acks
// three and rejects two; after the input restarts, exactly the two rejected
// ones come back, flagged as redelivered.
func TestIntegrationSolaceAtLeastOnceThroughRestart(t *testing.T) {
	integration.CheckSkip(t)
	t.Parallel()

	b := solacetest.NewTestBroker(t, solacetest.Config{})
	require.NoError(t, b.CreateQueue("default", solacetest.QueueConfig{Name: "alo", Subscriptions: []string{"alo"}}))
	conn := fmt.Sprintf("urls: [ %s ]\nusername: default\npassword: default\n", b.SMFURL())

	out := service.NewStreamBuilder()
	require.NoError(t, out.SetLoggerYAML("level: off"))
	produce, err := out.AddProducerFunc()
	require.NoError(t, err)
	require.NoError(t, out.AddOutputYAML("solace:\n"+componenttest.IndentYAML(conn+"topic: alo\nwriter: streaming\n")))
	outStream, err := out.Build()
	require.NoError(t, err)
	go func() { _ = outStream.Run(t.Context()) }()
	t.Cleanup(func() { _ = outStream.Stop(context.Background()) })
	for _, k := range []string{"A", "B", "C", "D", "E"} {
		require.NoError(t, produce(t.Context(), service.NewMessage([]byte(k))))
	}

	// One message a read, so that the pipeline settles each on its own.
	r := newSiReader(t, b, "queue: alo\nbatch_size: 1\n")
	var rejected []string
	for range 5 {
		batch, ack := readBatch(t, r)
		body, _ := batch[0].AsBytes()
		if k := string(body); k == "C" || k == "E" {
			rejected = append(rejected, k)
			require.NoError(t, ack(t.Context(), errors.New("rejecting just cus")))
		} else {
			require.NoError(t, ack(t.Context(), nil))
		}
	}
	require.ElementsMatch(t, []string{"C", "E"}, rejected)
	require.NoError(t, r.Close(t.Context()))

	r2 := newSiReader(t, b, "queue: alo\nbatch_size: 1\n")
	var again []string
	for range 2 {
		batch, ack := readBatch(t, r2)
		body, _ := batch[0].AsBytes()
		again = append(again, string(body))
		require.Equal(t, true, metaOf(t, batch[0])["solace_redelivered"])
		require.NoError(t, ack(t.Context(), nil))
	}
	require.ElementsMatch(t, []string{"C", "E"}, again)
	waitDepth(t, b, "alo", 0)
}
