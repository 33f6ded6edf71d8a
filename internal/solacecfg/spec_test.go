package solacecfg

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/session"
)

// testSpec builds a spec the way plugins do: the shared fields plus the rule.
func testSpec() *service.ConfigSpec {
	return service.NewConfigSpec().Fields(ConnectionFields()...).LintRule(connectionLintRule())
}

func TestConnectionLintRule(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string // substrings, one per expected lint; empty = clean
	}{
		{name: "minimal", yaml: "urls: [ tcp://localhost:55555 ]\nusername: u"},
		{name: "no urls", yaml: "username: u", want: []string{"at least one broker url"}},
		{name: "bad scheme", yaml: "urls: [ http://x:1 ]\nusername: u", want: []string{"must start with tcp:// or tcps://"}},
		{name: "tcps without tls", yaml: "urls: [ tcps://x:1 ]\nusername: u", want: []string{"set tls.enabled: true"}},
		{name: "tls with tcp", yaml: "urls: [ tcp://x:1 ]\nusername: u\ntls: { enabled: true, validate_server_cert: false }", want: []string{"use tcps:// urls"}},
		{name: "tls without trust store", yaml: "urls: [ tcps://x:1 ]\nusername: u\ntls: { enabled: true }", want: []string{"tls.trust_store_path"}},
		{name: "tls ok", yaml: "urls: [ tcps://x:1 ]\nusername: u\ntls: { enabled: true, trust_store_path: /tmp }"},
		{name: "cert without key", yaml: "urls: [ tcps://x:1 ]\nusername: u\ntls: { enabled: true, validate_server_cert: false, client_certificate_file: c.pem }", want: []string{"set both or neither"}},
		{name: "client cert scheme without files", yaml: "urls: [ tcps://x:1 ]\ntls: { enabled: true, validate_server_cert: false }\nauth: { scheme: client_certificate }", want: []string{"needs tls.client_certificate_file"}},
		{name: "client cert scheme without tls", yaml: "urls: [ tcp://x:1 ]\ntls: { client_certificate_file: c, client_key_file: k }\nauth: { scheme: client_certificate }", want: []string{"client_certificate needs TLS"}},
		{name: "oauth2 without token", yaml: "urls: [ tcp://x:1 ]\nauth: { scheme: oauth2 }", want: []string{"auth.oauth2.access_token"}},
		{name: "oauth2 ok", yaml: "urls: [ tcps://x:1 ]\ntls: { enabled: true, validate_server_cert: false }\nauth: { scheme: oauth2, oauth2: { access_token: t } }"},
		{name: "oauth2 without tls", yaml: "urls: [ tcp://x:1 ]\nauth: { scheme: oauth2, oauth2: { access_token: t } }", want: []string{"field auth.scheme: oauth2 needs TLS"}},
		{name: "oauth2 grant ok", yaml: "urls: [ tcps://x:1 ]\ntls: { enabled: true, validate_server_cert: false }\nauth: { scheme: oauth2, oauth2: { token_url: https://idp/token, client_id: c, client_secret_file: /run/s } }"},
		{name: "oauth2 grant incomplete", yaml: "urls: [ tcps://x:1 ]\ntls: { enabled: true, validate_server_cert: false }\nauth: { scheme: oauth2, oauth2: { token_url: https://idp/token, access_token: t } }",
			want: []string{"field auth.oauth2.client_id: required with auth.oauth2.token_url", "field auth.oauth2.client_secret: required", "the client_credentials grant fetches the access token; remove auth.oauth2.access_token"}},
		{name: "oauth2 grant secret twice", yaml: "urls: [ tcps://x:1 ]\ntls: { enabled: true, validate_server_cert: false }\nauth: { scheme: oauth2, oauth2: { token_url: https://idp/token, client_id: c, client_secret: s, client_secret_file: /run/s } }",
			want: []string{"fields auth.oauth2.client_secret and auth.oauth2.client_secret_file: both are set"}},
		{name: "basic without username", yaml: "urls: [ tcp://x:1 ]", want: []string{"field username"}},
		{name: "password and password_file", yaml: "urls: [ tcp://x:1 ]\nusername: u\npassword: p\npassword_file: /run/p", want: []string{"fields password and password_file: both are set; keep one"}},
		{name: "password_file only", yaml: "urls: [ tcp://x:1 ]\nusername: u\npassword_file: /run/p"},
		{name: "client key password and file", yaml: "urls: [ tcp://x:1 ]\nusername: u\ntls: { client_key_password: p, client_key_password_file: /run/k }", want: []string{"fields tls.client_key_password and tls.client_key_password_file: both are set"}},
		{name: "access token and file", yaml: "urls: [ tcp://x:1 ]\nauth: { scheme: oauth2, oauth2: { access_token: t, access_token_file: /run/t } }", want: []string{"fields auth.oauth2.access_token and auth.oauth2.access_token_file: both are set"}},
		{name: "id token and file", yaml: "urls: [ tcp://x:1 ]\nauth: { scheme: oauth2, oauth2: { id_token: t, id_token_file: /run/t } }", want: []string{"fields auth.oauth2.id_token and auth.oauth2.id_token_file: both are set"}},
		{name: "oauth2 with token file", yaml: "urls: [ tcps://x:1 ]\ntls: { enabled: true, validate_server_cert: false }\nauth: { scheme: oauth2, oauth2: { access_token_file: /run/t } }"},
		{name: "compression", yaml: "urls: [ tcp://x:55003 ]\nusername: u\ncompression_level: 9"},
		{name: "compression too high", yaml: "urls: [ tcp://x:55003 ]\nusername: u\ncompression_level: 10", want: []string{"field compression_level: must be 0 (off) to 9, got 10"}},
		{name: "compression negative", yaml: "urls: [ tcp://x:55003 ]\nusername: u\ncompression_level: -1", want: []string{"field compression_level"}},
		{name: "bad multiplier", yaml: "urls: [ tcp://x:1 ]\nusername: u\nconnect_retry_backoff: { multiplier: 0.5 }", want: []string{"multiplier"}},
	}
	env := service.NewEnvironment()
	require.NoError(t, env.RegisterOutput("session_lint_test", testSpec(),
		func(*service.ParsedConfig, *service.Resources) (service.Output, int, error) { return nil, 1, nil }))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := env.NewStreamBuilder()
			err := b.AddOutputYAML("session_lint_test:\n" + indent(tt.yaml))
			if len(tt.want) == 0 {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}

func TestConfigFromParsedDefaults(t *testing.T) {
	pc, err := testSpec().ParseYAML("urls: [ tcp://127.0.0.1:1 ]\nusername: u\npassword: hunter2", nil)
	require.NoError(t, err)
	c, err := ConfigFromParsed(pc)
	require.NoError(t, err)
	want := defaultConfig("tcp://127.0.0.1:1")
	want.Username, want.Password = "u", "hunter2"
	assert.Equal(t, want, c)
	assert.NotContains(t, c.String(), "hunter2")
	assert.NotContains(t, c.GoString(), "hunter2")
}

func TestConfigSecretFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
		return p
	}
	pass := write("password", "s3cret\n")
	key := write("key", "k3y\n")
	tok := write("token", "t0k\n")
	missing := filepath.Join(dir, "missing")
	tests := []struct {
		name    string
		yaml    string
		want    func(*session.Config)
		wantErr []string // parse or resolve error substrings
	}{
		{name: "password_file", yaml: "username: u\npassword_file: " + pass,
			want: func(c *session.Config) { c.Password = "s3cret" }},
		{name: "tls key password file", yaml: "username: u\ntls: { client_key_password_file: " + key + " }",
			want: func(c *session.Config) { c.TLS.ClientKeyPassword = "k3y" }},
		{name: "oauth2 token files", yaml: "urls: [ tcps://x:1 ]\ntls: { enabled: true, validate_server_cert: false }\nauth: { scheme: oauth2, oauth2: { access_token_file: " + tok + ", id_token_file: " + tok + " } }",
			want: func(c *session.Config) { c.OAuth2.AccessToken, c.OAuth2.IDToken = "t0k", "t0k" }},
		{name: "no file keeps inline password", yaml: "username: u\npassword: inline",
			want: func(c *session.Config) { c.Password = "inline" }},
		{name: "missing file", yaml: "username: u\npassword_file: " + missing,
			wantErr: []string{"field password_file", missing, "no such file"}},
		{name: "both set", yaml: "username: u\npassword: inline\npassword_file: " + pass,
			wantErr: []string{"fields password and password_file: both are set"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			yaml := tt.yaml
			if !strings.HasPrefix(yaml, "urls:") {
				yaml = "urls: [ tcp://127.0.0.1:1 ]\n" + yaml
			}
			pc, err := testSpec().ParseYAML(yaml, nil)
			require.NoError(t, err)
			c, err := ConfigFromParsed(pc)
			if err == nil {
				c, err = c.ResolveSecretFiles()
			}
			if tt.wantErr != nil {
				require.Error(t, err)
				for _, w := range tt.wantErr {
					assert.Contains(t, err.Error(), w)
				}
				assert.NotContains(t, err.Error(), "s3cret")
				return
			}
			require.NoError(t, err)
			got := session.Config{Password: c.Password, TLS: session.TLSConfig{ClientKeyPassword: c.TLS.ClientKeyPassword}, OAuth2: session.OAuth2Config{AccessToken: c.OAuth2.AccessToken, IDToken: c.OAuth2.IDToken}}
			var want session.Config
			tt.want(&want)
			assert.Equal(t, want, got)
			assert.Empty(t, c.PasswordFile+c.TLS.ClientKeyPasswordFile+c.OAuth2.AccessTokenFile+c.OAuth2.IDTokenFile, "file fields are cleared once read")
			assert.NotContains(t, c.String(), "s3cret")
		})
	}
}

// TestConnectionLintIsValidate checks that lint and the constructor report
// the same rules with the same words: the lint rule calls Validate.
func TestConnectionLintIsValidate(t *testing.T) {
	env := service.NewEnvironment()
	require.NoError(t, env.RegisterOutput("session_lint_validate_test", testSpec(),
		func(*service.ParsedConfig, *service.Resources) (service.Output, int, error) { return nil, 1, nil }))
	for _, yaml := range []string{
		"username: u",
		"urls: [ tcps://x:1, http://y:2 ]\nusername: u",
		"urls: [ tcp://x:1 ]\ntls: { enabled: true, client_certificate_file: c }",
		"urls: [ tcp://x:1 ]\nauth: { scheme: oauth2 }\nconnect_retries: -1\nreconnect_attempts: -2",
		"urls: [ tcp://x:1 ]\nusername: u\npassword: p\npassword_file: /run/p\nconnect_retry_backoff: { multiplier: 0.5 }",
	} {
		t.Run(yaml, func(t *testing.T) {
			pc, err := testSpec().ParseYAML(yaml, nil)
			require.NoError(t, err)
			_, verr := ConfigFromParsed(pc)
			require.Error(t, verr)
			lerr := env.NewStreamBuilder().AddOutputYAML("session_lint_validate_test:\n" + indent(yaml))
			require.Error(t, lerr)
			msgs := strings.Split(verr.Error(), "\n")
			for _, m := range msgs {
				assert.Contains(t, lerr.Error(), m)
			}
			assert.Len(t, strings.Split(lerr.Error(), "\n"), len(msgs), "lint reports no rule of its own: %v", lerr)
		})
	}
}

// defaultConfig is what ConnectionFields' defaults read into, for urls.
func defaultConfig(urls ...string) session.Config {
	return session.Config{
		URLs:              urls,
		VPN:               "default",
		AuthScheme:        session.AuthBasic,
		TLS:               session.TLSConfig{ValidateServerCert: true, ValidateDate: true, ValidateServerName: true},
		ReconnectAttempts: 3,
		ReconnectInterval: 3 * time.Second,
		ConnectRetries:    0,
		ConnectBackoff:    session.Backoff{Initial: time.Second, Multiplier: 2, Max: 10 * time.Second},
		ConnectTimeout:    30 * time.Second,
	}
}
