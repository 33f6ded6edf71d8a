package output

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/solacetest"
)

// With compression_level the output speaks compressed SMF, which the
// broker's compressed listener alone understands; what it publishes arrives
// whole.
func TestSolaceOutputCompressed(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{CompressedAddr: "127.0.0.1:0"})
	require.NoError(t, b.CreateQueue("default", solacetest.QueueConfig{Name: "zq", Subscriptions: []string{"z/>"}}))
	w := newSoWriterURL(t, b.CompressedURL(), "compression_level: 6\ntopic: z/out\n")
	payloads := []string{strings.Repeat("compressible ", 300), "short"}
	soWrite(t, w, soWriterBatched, payloads, nil)
	require.Equal(t, payloads, solacetest.QueuePayloads(t, b, "default", "zq"))
}
