package input

import (
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/jms"
	"github.com/connect-solace/connect-solace/internal/testkit/jmskit"
)

// BenchmarkJMSInputToMessage measures turning a received BytesMessage into
// a Benthos message with its metadata. It cycles through 64 messages as
// the jms output sends them, each with its own message id and timestamp.
func BenchmarkJMSInputToMessage(b *testing.B) {
	rabbit, _ := jms.NewAddresser(jms.StyleRabbitMQ, "", "", nil)
	dest, _ := rabbit.Resolve(jms.KindQueue, "q")
	ds := make([]jms.Delivery, 64)
	for i := range ds {
		am, err := jmskit.Encode(&jms.Message{Type: jms.BodyBytes, Body: make([]byte, 1024), Destination: dest, Priority: jms.DefaultPriority})
		require.NoError(b, err)
		ds[i].Payload, err = am.MarshalBinary()
		require.NoError(b, err)
	}
	r := newTestJMSReader(b, "urls: [ amqp://x ]\nqueue: q\n", service.MockResources())
	opts := &jms.DecodeOptions{Addresser: rabbit, Kind: jms.KindQueue, Source: dest.Address}
	opts.Prepare()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		m := r.toMessage(ds[i%len(ds)], opts)
		_, _ = m.AsBytes()
		i++
	}
}
