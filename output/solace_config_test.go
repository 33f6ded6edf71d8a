package output

import (
	"strings"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSolaceOutputLintIsConstructor checks that lint and the constructor
// apply the same rules between fields in the same words: both call
// soProblems.
func TestSolaceOutputLintIsConstructor(t *testing.T) {
	conn := "urls: [ tcp://127.0.0.1:1 ]\nusername: u\n"
	for _, yaml := range []string{
		"clients: 0\nmax_in_flight: 0",
		"topic: a\nqueue: q\nwriter: streaming\nbatching: { count: 10 }",
		"topic: a\nsubmission_mode: custom\nback_pressure: { strategy: wait, buffer_capacity: 0 }",
		"topic: a\nback_pressure: { buffer_capacity: -1 }",
	} {
		t.Run(yaml, func(t *testing.T) {
			pc, err := solaceOutputSpec().ParseYAML(conn+yaml, nil)
			require.NoError(t, err)
			_, cerr := newSolaceWriterFromParsed(pc, service.MockResources())
			require.Error(t, cerr)
			lerr := service.NewStreamBuilder().AddOutputYAML("solace:\n" + indentYAML(conn+yaml))
			require.Error(t, lerr)
			msgs := strings.Split(cerr.Error(), "\n")
			for _, m := range msgs {
				assert.Contains(t, lerr.Error(), m)
			}
			assert.Len(t, strings.Split(lerr.Error(), "\n"), len(msgs), "lint reports no rule of its own: %v", lerr)
		})
	}
}
