package input

import (
	"testing"

	"github.com/Azure/go-amqp"
	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/jms"
)

// BenchmarkJMSInputToMessage measures turning a received BytesMessage into
// a Benthos message with its metadata.
func BenchmarkJMSInputToMessage(b *testing.B) {
	rabbit, _ := jms.NewAddresser(jms.StyleRabbitMQ, "", "", nil)
	dest, _ := rabbit.Resolve(jms.KindQueue, "q")
	am, err := jms.Encode(&jms.Message{Type: jms.BodyBytes, Body: make([]byte, 1024), Destination: dest, Priority: jms.DefaultPriority})
	require.NoError(b, err)
	wire, err := am.MarshalBinary()
	require.NoError(b, err)
	am = &amqp.Message{}
	require.NoError(b, am.UnmarshalBinary(wire))
	r := newTestJMSReader(b, "urls: [ amqp://x ]\nqueue: q\n", service.MockResources())
	opts := &jms.DecodeOptions{Addresser: rabbit, Kind: jms.KindQueue, Source: dest.Address}
	b.ReportAllocs()
	for b.Loop() {
		m := r.toMessage(am, opts)
		_, _ = m.AsBytes()
	}
}
