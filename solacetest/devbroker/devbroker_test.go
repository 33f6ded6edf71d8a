package devbroker

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/urfave/cli/v2"
)

// TestBadFlagsNameTheFlag checks that a malformed flag fails before any
// listener opens, with an error that names the flag and the expected form.
// Serving is covered end to end by tests/devbroker_test.go.
func TestBadFlagsNameTheFlag(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "user without password", args: []string{"--user", "app"}, want: `--user "app": want NAME:PASSWORD`},
		{name: "semp user without password", args: []string{"--semp-user", "admin"}, want: "--semp-user: want NAME:PASSWORD"},
		{name: "log level", args: []string{"--log-level", "loud"}, want: "--log-level"},
		{name: "extra listener without transport", args: []string{"--extra-listener", "127.0.0.1:0"}, want: `--extra-listener "127.0.0.1:0": want TRANSPORT=ADDR`},
		{name: "extra listener of unknown transport", args: []string{"--extra-listener", "mqtt=127.0.0.1:0"}, want: `unknown transport "mqtt"`},
		{name: "oauth clients with a given key set", args: []string{"--oauth-addr", "127.0.0.1:0", "--oauth-jwks-file", "jwks.json", "--oauth-client", "a:b"}, want: "leave --oauth-jwks-file out"},
		{name: "oauth client without secret", args: []string{"--oauth-addr", "127.0.0.1:0", "--oauth-client", "a"}, want: `--oauth-client "a": want ID:SECRET`},
		{name: "kerberos principal without keytab", args: []string{"--kerberos-principal", "solace/localhost"}, want: "--kerberos-principal needs --kerberos-keytab"},
		{name: "kerberos keytab missing", args: []string{"--kerberos-keytab", "/nonexistent/solace.keytab"}, want: "--kerberos-keytab: reading keytab"},
		{name: "oauth files without address", args: []string{"--oauth-jwks-file", "jwks.json"}, want: "need --oauth-addr"},
		{name: "console address", args: []string{"--console-addr", "127.0.0.1:1:2"}, want: `--console-addr "127.0.0.1:1:2": want HOST:PORT`},
		{name: "oauth key set missing", args: []string{"--oauth-addr", "127.0.0.1:0", "--oauth-jwks-file", "/nonexistent/jwks.json"}, want: "--oauth-jwks-file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			app := &cli.App{Name: "custom", Commands: []*cli.Command{Command()}, Writer: &out, ErrWriter: &out}
			err := app.RunContext(t.Context(), append([]string{"custom", "devbroker", "--smf-addr", "127.0.0.1:0", "--semp-addr", "-"}, tt.args...))
			require.ErrorContains(t, err, tt.want)
			require.NotContains(t, out.String(), "devbroker ready")
		})
	}
}
