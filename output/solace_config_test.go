package output

import (
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/testkit/componenttest"
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
			componenttest.LintIsConstructor(t, componenttest.Output, "solace", conn+yaml, func(fields string) error {
				pc, err := solaceOutputSpec().ParseYAML(fields, nil)
				require.NoError(t, err)
				_, err = newSolaceWriterFromParsed(pc, service.MockResources())
				return err
			})
		})
	}
}
