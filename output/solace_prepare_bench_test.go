package output

import (
	"strconv"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/session"
)

// BenchmarkSolaceOutputPrepare measures turning a batch of 50 Benthos
// messages into Solace messages (no broker): with static fields only, and
// with three interpolated fields, which are evaluated with one executor per
// field and batch rather than TryInterpolatedString's copy of the batch per
// call. Reported per message.
func BenchmarkSolaceOutputPrepare(b *testing.B) {
	for _, bc := range []struct{ name, yaml string }{
		{name: "static", yaml: "topic: orders/eu\npriority: 4\ncorrelation_id: c\n"},
		{name: "dynamic_3_fields", yaml: "topic: orders/${! meta(\"region\") }\npriority: 4\ncorrelation_id: ${! meta(\"id\") }\napplication_message_id: ${! meta(\"id\") }\n"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			pc, err := solaceOutputSpec().ParseYAML("urls: [ tcp://127.0.0.1:1 ]\nusername: u\n"+bc.yaml, nil)
			require.NoError(b, err)
			w, err := newSolaceWriterFromParsed(pc, service.MockResources())
			require.NoError(b, err)
			batch := make(service.MessageBatch, 50)
			for i := range batch {
				batch[i] = service.NewMessage([]byte("payload"))
				batch[i].MetaSetMut("region", "eu")
				batch[i].MetaSetMut("id", strconv.Itoa(i))
			}
			vals := make([]session.Outbound, len(batch))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				ev := w.fields.Batch(batch)
				for i := range batch {
					if err := w.toOutbound(batch, &ev, i, &vals[i]); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(batch)), "ns/msg")
		})
	}
}
