package tests

import (
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// TestRunLogsNoURLPassword runs pipelines whose broker URL carries a
// password and checks the password never reaches the log: the jms output
// logs its failing connects with the URL redacted, and the solace plugins,
// whose client takes no credentials from a URL, refuse such a URL at start-up
// without echoing it.
func TestRunLogsNoURLPassword(t *testing.T) {
	t.Run("jms output, broker unreachable", func(t *testing.T) {
		conf := filepath.Join(t.TempDir(), "config.yaml")
		require.NoError(t, writeFile(conf, `
input:
  generate: { count: 1, mapping: 'root = "x"' }
output:
  jms:
    urls: [ "amqp://app:`+urlSecret+`@`+closedLoopbackAddr(t)+`" ]
    queue: q
http: { enabled: false }
shutdown_timeout: 1s
`))
		p := startBinary(t, "run", conf)
		// The first failed connect is logged with the URL, redacted.
		require.Eventually(t, func() bool { return strings.Contains(p.out.String(), "app:xxxxx@") },
			20*time.Second, 20*time.Millisecond, "no connection error logged:\n%s", p.out.String())
		require.NotContains(t, p.out.String(), urlSecret)
	})
	for _, kind := range []string{"input", "output"} {
		t.Run("solace "+kind+" refuses credentials in a URL", func(t *testing.T) {
			plugin := `
  solace:
    urls: [ "tcp://app:` + urlSecret + `@127.0.0.1:55555" ]
    username: app
    queue: q
    topic: a/b
`
			var config string
			if kind == "input" {
				plugin = strings.Replace(plugin, "    topic: a/b\n", "", 1)
				config = "input:" + plugin + "output:\n  drop: {}\n"
			} else {
				plugin = strings.Replace(plugin, "    queue: q\n", "", 1)
				config = "input:\n  generate: { count: 1, mapping: 'root = \"x\"' }\noutput:" + plugin
			}
			conf := filepath.Join(t.TempDir(), "config.yaml")
			require.NoError(t, writeFile(conf, config))
			out, err := exec.CommandContext(t.Context(), binPath(t), "run", conf).CombinedOutput()
			require.Error(t, err, "a Solace URL with credentials must not start:\n%s", out)
			require.Contains(t, string(out), "credentials (user:password@) in a Solace URL are not supported")
			require.NotContains(t, string(out), urlSecret)
		})
	}
}

// closedLoopbackAddr returns a loopback address nothing listens on.
func closedLoopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}
