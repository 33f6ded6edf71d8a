//go:build !race

package input

import (
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service/integration"

	"github.com/connect-solace/connect-solace/solacetest"
)

// TestIntegrationNoRaceSolaceAtLeastOnce runs Benthos's own at-least-once
// case (nacks, then a restart of the input, must redeliver exactly the nacked
// messages) on the same config as TestIntegrationSolaceStreams. The suite's
// test body races with itself (see TestIntegrationSolaceStreams), so it is
// built only without -race; `make test-integration` runs it in a second,
// race-free pass.
func TestIntegrationNoRaceSolaceAtLeastOnce(t *testing.T) {
	integration.CheckSkip(t)
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	integration.StreamTests(
		integration.StreamTestAtLeastOnceDelivery(),
	).Run(t, integrationTemplate(b), integrationOpts(b)...)
}
