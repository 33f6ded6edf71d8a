package tests

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// urlSecret is a password given inside a URL's userinfo.
const urlSecret = "hunter2-in-url"

// TestEchoScrubsURLPasswords checks that `connect-solace echo` scrubs a
// password written into a URL (scheme://user:password@host) in every URL
// field of our plugins, as Benthos does for its own URL fields, and keeps
// URLs without a password as they are.
func TestEchoScrubsURLPasswords(t *testing.T) {
	tests := []struct {
		name   string
		config string
		keep   string // a URL without password that must be echoed verbatim
	}{
		{name: "jms output urls", keep: "amqp://127.0.0.1:5673", config: `
input:
  generate: { mapping: 'root = "x"' }
output:
  jms:
    urls: [ "amqp://u:` + urlSecret + `@127.0.0.1:5672", "amqp://127.0.0.1:5673" ]
    queue: q
`},
		{name: "solace output urls", keep: "tcp://127.0.0.1:55556", config: `
input:
  generate: { mapping: 'root = "x"' }
output:
  solace:
    urls: [ "tcp://u:` + urlSecret + `@127.0.0.1:55555", "tcp://127.0.0.1:55556" ]
    topic: a/b
`},
		{name: "solace input urls and semp url", keep: "tcp://127.0.0.1:55556", config: `
input:
  solace:
    urls: [ "tcp://u:` + urlSecret + `@127.0.0.1:55555", "tcp://127.0.0.1:55556" ]
    queue: q
    semp: { url: "http://admin:` + urlSecret + `@127.0.0.1:8080" }
output:
  drop: {}
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conf := filepath.Join(t.TempDir(), "config.yaml")
			require.NoError(t, writeFile(conf, tt.config))
			out, err := exec.CommandContext(t.Context(), binPath(t), "echo", conf).Output()
			require.NoError(t, err, string(out))
			require.NotContains(t, string(out), urlSecret)
			require.Contains(t, string(out), scrubbedMark)
			require.Contains(t, string(out), tt.keep, "URLs without a password must be kept")
		})
	}
}
