package input

import (
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/testkit/componenttest"
)

// TestSolaceInputLintIsConstructor checks that lint and the constructor
// apply the same rules in the same words: both call siFields.problems.
func TestSolaceInputLintIsConstructor(t *testing.T) {
	conn := "urls: [ tcp://127.0.0.1:1 ]\nusername: u\n"
	for _, yaml := range []string{
		"",
		"queue: q\ntopic: t\nqueue_name: n\nflows: 0\nbatch_size: 0\nreceive_buffer: 0",
		"topic: t\nsemp: { url: \"\", password: p, password_file: /run/p }",
		"queue: q\ndeduplicate: true\ndedup_window: { size: -1, age: 0s }",
		"queue: q\ntimestamp: mapping\nreplay: { from: message_id }",
		"queue: q\ntimestamp_mapping: 'root = now()'\nreplay: { from: time }",
		// A time the old regular expression let through.
		"queue: q\nreplay: { from: time, time: '2025-02-30T12:00:00Z' }",
	} {
		t.Run(yaml, func(t *testing.T) {
			componenttest.LintIsConstructor(t, componenttest.Input, "solace", conn+yaml, func(fields string) error {
				pc, err := solaceInputSpec().ParseYAML(fields, nil)
				require.NoError(t, err)
				_, err = newSolaceReaderFromParsed(pc, service.MockResources())
				return err
			})
		})
	}
}

func TestSolaceInputReplayTimeIsTimeParse(t *testing.T) {
	conn := "urls: [ tcp://127.0.0.1:1 ]\nusername: u\nqueue: q\n"
	for _, tc := range []struct {
		time string
		ok   bool
	}{
		{"2025-01-31T12:00:00Z", true},
		{"2025-01-31T12:00:00.123456789+01:00", true},
		{"2025-02-30T12:00:00Z", false},
		{"2025-01-31T24:00:00Z", false},
		{"2025-01-31 12:00:00Z", false},
	} {
		t.Run(tc.time, func(t *testing.T) {
			err := componenttest.Lint(componenttest.Input, "solace", conn+"replay: { from: time, time: '"+tc.time+"' }")
			if tc.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, "not an RFC 3339 time")
		})
	}
}
