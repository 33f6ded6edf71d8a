//go:build !race

package input

import (
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service/integration"

	"github.com/connect-solace/connect-solace/internal/testkit/jmskit"
)

// TestIntegrationNoRaceJMSAtLeastOnce runs Benthos's own at-least-once case
// (nacks, then a restart of the input, must redeliver exactly the nacked
// messages) on the config of TestIntegrationJMSInputStreams. Its test body
// races with itself (see TestIntegrationSolaceStreams), so it runs in the
// race-free pass of `make test-integration`.
func TestIntegrationNoRaceJMSAtLeastOnce(t *testing.T) {
	integration.CheckSkip(t)
	b := jmskit.TestBroker(t)
	integration.StreamTests(
		integration.StreamTestAtLeastOnceDelivery(),
	).Run(t, jmsStreamsTemplate, b.StreamTestOpts()...)
}
