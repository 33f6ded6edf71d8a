package input

import (
	"context"
	"fmt"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/require"

	_ "github.com/connect-solace/connect-solace/output"

	"github.com/connect-solace/connect-solace/internal/testkit/componenttest"
	"github.com/connect-solace/connect-solace/solacetest"
)

// What the solace output sends as an SDT map, stream or string, the input
// reads back as the same JSON or text, through the broker and the real
// client on both sides (queue and direct mode).
func TestSolaceOutputToInputStructuredPayloads(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	require.NoError(t, b.CreateQueue("default", solacetest.QueueConfig{Name: "sdt", Subscriptions: []string{"sdt/>"}}))
	conn := fmt.Sprintf("urls: [ %s ]\nusername: default\npassword: default\n", b.SMFURL())
	direct := newSiReader(t, b, "topic_subscriptions: [ 'sdt/>' ]\n")
	queued := newSiReader(t, b, "queue: sdt\n")
	for _, tc := range []struct{ payloadType, in, want string }{
		{"map", `{"i":3,"f":1.5,"s":"x","b":true,"nested":{"k":[1,"two"]}}`, `{"i":3,"f":1.5,"s":"x","b":true,"nested":{"k":[1,"two"]}}`},
		{"stream", `[1,-2.25,"a",false]`, `[1,-2.25,"a",false]`},
		{"string", "héllo wörld", "héllo wörld"},
	} {
		t.Run(tc.payloadType, func(t *testing.T) {
			out := service.NewStreamBuilder()
			require.NoError(t, out.SetLoggerYAML("level: off"))
			produce, err := out.AddProducerFunc()
			require.NoError(t, err)
			require.NoError(t, out.AddOutputYAML("solace:\n"+componenttest.IndentYAML(conn+"topic: sdt/"+tc.payloadType+"\npayload_type: "+tc.payloadType+"\n")))
			stream, err := out.Build()
			require.NoError(t, err)
			go func() { _ = stream.Run(t.Context()) }()
			t.Cleanup(func() { _ = stream.Stop(context.Background()) })
			require.NoError(t, produce(t.Context(), service.NewMessage([]byte(tc.in))))

			for _, r := range []*solaceReader{queued, direct} {
				batch, ack := readBatch(t, r)
				require.NoError(t, ack(t.Context(), nil))
				body, err := batch[0].AsBytes()
				require.NoError(t, err)
				if tc.payloadType == "string" {
					require.Equal(t, tc.want, string(body))
				} else {
					require.JSONEq(t, tc.want, string(body))
				}
			}
		})
	}
}
