package input

import (
	"strings"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/semp"
	"github.com/connect-solace/connect-solace/internal/testkit/solacekit"
	"github.com/connect-solace/connect-solace/solacetest"
)

// With compression_level the input speaks compressed SMF, which the broker's
// compressed listener alone understands (a client that did not compress
// could not even log in there), in queue and in direct mode.
func TestSolaceInputCompressed(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{CompressedAddr: "127.0.0.1:0"})
	createQueueSEMP(t, b, semp.Queue{QueueName: "zq"}, "zq")
	payload := strings.Repeat("compressible ", 200)
	newSiPublisher(t, b).send(t, "zq", []string{payload}, nil)

	r := newSiReaderURL(t, b.CompressedURL(), "compression_level: 9\nqueue: zq\n")
	batch, ack := readBatch(t, r)
	body, err := batch[0].AsBytes()
	require.NoError(t, err)
	require.Equal(t, payload, string(body))
	require.NoError(t, ack(t.Context(), nil))
	waitDepth(t, b, "zq", 0)

	d := newSiReaderURL(t, b.CompressedURL(), "compression_level: 1\ntopic_subscriptions: [ zd ]\n")
	newSiDirectPublisher(t, b.SMFURL()).send(t, "zd", payload, nil)
	got := readBodies(t, d, func(string) bool { return true })
	require.Equal(t, []string{payload}, got)
}

// The compressed listener refuses a client that does not compress, which is
// what makes TestSolaceInputCompressed a test of compression.
func TestSolaceInputUncompressedOnCompressedPort(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{CompressedAddr: "127.0.0.1:0"})
	pc, err := siSpec().ParseYAML(strings.Replace(solacekit.ConnectionYAML(b.CompressedURL()), "connect_timeout: 5s", "connect_timeout: 1s", 1)+"topic_subscriptions: [ zd ]\n", nil)
	require.NoError(t, err)
	r, err := newSolaceReaderFromParsed(pc, service.MockResources())
	require.NoError(t, err)
	require.Error(t, r.Connect(t.Context()))
}
