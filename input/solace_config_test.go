package input

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/testkit/componenttest"
	"github.com/connect-solace/connect-solace/solacetest"
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

// TestSolaceInputPasswordFiles connects with the broker and SEMP passwords
// read from files, as in streams mode, where the config must hold only paths.
func TestSolaceInputPasswordFiles(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{
		Users:    map[string]string{"app": "s3cret", "default": "default"},
		SEMPUser: "ops", SEMPPassword: "semp-s3cret",
	})
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
		return p
	}
	pass, sempPass := write("password", "s3cret\n"), write("semp-password", "semp-s3cret\n")
	wrong := write("wrong", "hunter2\n")
	missing := filepath.Join(dir, "missing")
	tests := []struct {
		name               string
		passFile, sempFile string
		wantErr            []string // Connect error substrings; nil means it consumes
	}{
		{name: "both from files", passFile: pass, sempFile: sempPass},
		{name: "wrong broker password", passFile: wrong, sempFile: sempPass, wantErr: []string{"failed to authenticate", "Unauthorized"}},
		{name: "wrong semp password", passFile: pass, sempFile: wrong, wantErr: []string{"401"}},
		{name: "missing semp file", passFile: pass, sempFile: missing, wantErr: []string{"field semp.password_file", missing}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			topic := fmt.Sprintf("pwfile/%d", i)
			yaml := fmt.Sprintf(`urls: [ %s ]
username: app
password_file: %s
connect_retries: 0
connect_timeout: 5s
topic: %s
semp: { url: %s, username: ops, password_file: %s }
`, b.SMFURL(), tt.passFile, topic, b.SEMPURL(), tt.sempFile)
			pc, err := solaceInputSpec().ParseYAML(yaml, nil)
			require.NoError(t, err)
			r, err := newSolaceReaderFromParsed(pc, service.MockResources())
			require.NoError(t, err)
			t.Cleanup(func() { _ = r.Close(context.Background()) })
			err = r.Connect(t.Context())
			if tt.wantErr != nil {
				require.Error(t, err)
				for _, w := range tt.wantErr {
					assert.Contains(t, err.Error(), w)
				}
				assert.NotContains(t, err.Error(), "hunter2")
				assert.NotContains(t, err.Error(), "s3cret")
				return
			}
			require.NoError(t, err)
			newSiPublisher(t, b).send(t, topic, []string{"hello"}, nil)
			batch, ack := readBatch(t, r)
			body, err := batch[0].AsBytes()
			require.NoError(t, err)
			assert.Equal(t, "hello", string(body))
			require.NoError(t, ack(t.Context(), nil))
		})
	}
}

func TestSolaceInputPasswordFileConfig(t *testing.T) {
	conn := "urls: [ tcp://127.0.0.1:1 ]\nusername: u\nqueue: q\n"
	tests := []struct {
		name, yaml, wantLint, wantErr string
	}{
		{name: "semp password and file", yaml: conn + "semp: { url: http://h:8080, password: p, password_file: /run/p }",
			wantLint: "fields semp.password and semp.password_file: both are set; keep one", wantErr: "fields semp.password and semp.password_file: both are set"},
		{name: "password and file", yaml: conn + "password: p\npassword_file: /run/p",
			wantLint: "fields password and password_file: both are set; keep one", wantErr: "fields password and password_file: both are set"},
		{name: "files only", yaml: conn + "password_file: /run/p\nsemp: { url: http://h:8080, password_file: /run/s }"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lintErr := componenttest.Lint(componenttest.Input, "solace", tt.yaml)
			pc, err := solaceInputSpec().ParseYAML(tt.yaml, nil)
			require.NoError(t, err)
			_, err = newSolaceReaderFromParsed(pc, service.MockResources())
			if tt.wantLint == "" {
				require.NoError(t, lintErr)
				require.NoError(t, err, "files are read at connect, not at parse")
				return
			}
			require.ErrorContains(t, lintErr, tt.wantLint)
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
}
