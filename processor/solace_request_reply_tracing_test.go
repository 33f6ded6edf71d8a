package processor

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	_ "github.com/connect-solace/connect-solace/input"
	"github.com/connect-solace/connect-solace/internal/testkit/componenttest"
	"github.com/connect-solace/connect-solace/internal/testkit/solacekit"
	"github.com/connect-solace/connect-solace/internal/testkit/tracekit"
	"github.com/connect-solace/connect-solace/solacetest"
)

// TestSolaceRequestReplyTracing sends one request from a traced pipeline
// (generate → solace_request_reply) to a traced pipeline whose solace input
// serves it in requests mode, and checks how the server's span relates to
// the requester's.
func TestSolaceRequestReplyTracing(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fields string
		// continues says whether the server's span continues the
		// requester's trace, or starts a new one.
		continues bool
	}{
		{name: "the default continues the trace", continues: true},
		{name: "an empty inject_tracing_map starts a new trace", fields: "inject_tracing_map: ''\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := solacetest.NewTestBroker(t, solacetest.Config{})
			conn := solacekit.ConnectionYAML(b.SMFURL())
			env, rec := tracekit.NewEnv(t)
			server := tracekit.Start(t, env, `
input:
  solace:
`+componenttest.IndentYAML(componenttest.IndentYAML(conn+"requests:\n  topics: [ rr/trace ]\n"))+`
pipeline:
  processors:
    - mapping: 'root = "re:" + content().string()'
output:
  sync_response: {}
tracer:
  `+tracekit.TracerYAML+"\n")
			// A request before the server subscribed would get no reply.
			require.Eventually(t, func() bool {
				clients, err := b.Clients("default")
				require.NoError(t, err)
				return slices.ContainsFunc(clients, func(c solacetest.ClientInfo) bool {
					return slices.Contains(c.Subscriptions, "rr/trace")
				})
			}, 10*time.Second, 10*time.Millisecond)

			got := tracekit.Receive(t, env, tracekit.TracerYAML, `
generate: { count: 1, interval: "", mapping: 'root = "q"' }
processors:
  - solace_request_reply:
`+componenttest.IndentYAML(componenttest.IndentYAML(componenttest.IndentYAML(conn+"topic: rr/trace\n"+tc.fields))), 1)
			require.NoError(t, got[0].GetError())
			body, err := got[0].AsBytes()
			require.NoError(t, err)
			require.Equal(t, "re:q", string(body))
			server.Stop(t) // its input span ends as the reply is sent

			gen := tracekit.One(t, rec, "input_generate")
			tracekit.RequireRoot(t, gen)
			served := tracekit.One(t, rec, "input_solace")
			if tc.continues {
				tracekit.RequireChild(t, gen, served, true)
			} else {
				tracekit.RequireRoot(t, served)
			}
		})
	}
}
