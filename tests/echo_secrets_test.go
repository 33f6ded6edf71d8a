package tests

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

const (
	literalSecret = "hunter2-literal"
	scrubbedMark  = "!!!SECRET_SCRUBBED!!!"
)

// TestEchoScrubsSecrets checks that `connect-solace echo`, which operators
// use to share a resolved config, never prints a secret field's value, for
// our plugins as for core Benthos components.
func TestEchoScrubsSecrets(t *testing.T) {
	tests := []struct {
		name   string
		plugin string // our plugin whose source must exist, "" for core
		config string
	}{
		{name: "core http_client basic auth", config: `
input:
  generate: { mapping: 'root = "x"' }
output:
  http_client:
    url: http://127.0.0.1:1/
    basic_auth: { enabled: true, username: u, password: ` + literalSecret + ` }
`},
		{name: "prometheus pushgateway", config: `
input:
  generate: { mapping: 'root = "x"' }
output:
  drop: {}
metrics:
  prometheus:
    push_url: http://127.0.0.1:1
    push_basic_auth: { username: u, password: ` + literalSecret + ` }
`},
		{name: "solace input", plugin: "../input/solace.go", config: `
input:
  solace:
    urls: [ tcp://127.0.0.1:55555 ]
    username: u
    password: ` + literalSecret + `
    queue: q
    semp: { url: http://127.0.0.1:8080, password: ` + literalSecret + ` }
output:
  drop: {}
`},
		{name: "solace output", plugin: "../output/solace.go", config: `
input:
  generate: { mapping: 'root = "x"' }
output:
  solace:
    urls: [ tcp://127.0.0.1:55555 ]
    username: u
    password: ` + literalSecret + `
    topic: a/b
`},
		{name: "solace output oauth2 client secret", plugin: "../output/solace.go", config: `
input:
  generate: { mapping: 'root = "x"' }
output:
  solace:
    urls: [ tcps://127.0.0.1:55443 ]
    username: u
    tls: { enabled: true, validate_server_cert: false }
    auth:
      scheme: oauth2
      oauth2: { token_url: https://127.0.0.1:1/token, client_id: c, client_secret: ` + literalSecret + ` }
    topic: a/b
`},
		{name: "jms output", plugin: "../output/jms.go", config: `
input:
  generate: { mapping: 'root = "x"' }
output:
  jms:
    urls: [ amqp://127.0.0.1:5672 ]
    username: u
    password: ` + literalSecret + `
    queue: q
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.plugin != "" {
				if ok, _ := filepath.Glob(tt.plugin); len(ok) == 0 {
					// The plugin has not landed in this tree; ourPlugins
					// grows the same way in binary_test.go.
					return
				}
			}
			conf := filepath.Join(t.TempDir(), "config.yaml")
			require.NoError(t, writeFile(conf, tt.config))
			cmd := exec.CommandContext(t.Context(), binPath(t), "echo", conf)
			outBytes, err := cmd.Output()
			out := string(outBytes)
			require.NoError(t, err, out)
			require.NotContains(t, out, literalSecret)
			require.Contains(t, out, scrubbedMark, out)
			require.Contains(t, out, "username: u", "non-secret fields must be kept")
		})
	}
}

// TestEchoScrubsEnvResolvedSecrets checks the recommended form: a secret
// given as an environment reference is resolved before echo prints the
// config, and must be scrubbed all the same.
func TestEchoScrubsEnvResolvedSecrets(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, writeFile(conf, `
input:
  generate: { mapping: 'root = "x"' }
output:
  http_client:
    url: http://127.0.0.1:1/
    basic_auth: { enabled: true, username: u, password: "${CS_TEST_PASSWORD}" }
`))
	cmd := exec.CommandContext(t.Context(), binPath(t), "echo", conf)
	cmd.Env = append(cmd.Environ(), "CS_TEST_PASSWORD="+literalSecret)
	out, err := cmd.Output()
	require.NoError(t, err, string(out))
	require.NotContains(t, string(out), literalSecret)
	require.Contains(t, string(out), scrubbedMark)
}

// streamWithSecret is a stream config whose output holds a secret taken from
// the environment of the streams process.
const streamWithSecret = `
input:
  generate: { interval: 1s, mapping: 'root = "x"' }
output:
  http_client:
    url: http://127.0.0.1:1/
    basic_auth: { enabled: true, username: u, password: "${CS_TEST_PASSWORD}" }
`

// TestStreamsAPIExposure pins down what docs/operations.md says about
// streams mode: Benthos v4.60.0 resolves `${ENV}` references before it keeps
// a stream's config, and GET /streams/{id} returns that config unscrubbed;
// `--no-api` removes the endpoint. If the first case starts failing, Benthos
// now scrubs the response: update docs/operations.md.
func TestStreamsAPIExposure(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantLeak bool
	}{
		{name: "api on", wantLeak: true},
		{name: "no-api", args: []string{"--no-api"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, writeFile(filepath.Join(dir, "leaky.yaml"), streamWithSecret))
			addr := freeLoopbackAddr(t)
			args := append([]string{"streams", "--set", "http.address=" + addr, "--set", "logger.level=warn"}, tt.args...)
			args = append(args, filepath.Join(dir, "leaky.yaml"))
			p := startBinaryEnv(t, []string{"CS_TEST_PASSWORD=" + literalSecret}, args...)

			var code int
			var body string
			require.Eventually(t, func() bool {
				var err error
				code, _, err = httpGet("http://" + addr + "/ping")
				return err == nil && code == http.StatusOK
			}, 15*time.Second, 20*time.Millisecond, "no /ping; output:\n%s", p.out.String())

			code, body, err := httpGet("http://" + addr + "/streams/leaky")
			require.NoError(t, err)
			if !tt.wantLeak {
				require.Equal(t, http.StatusNotFound, code, body)
				return
			}
			require.Equal(t, http.StatusOK, code, body)
			var got struct {
				Config map[string]any `json:"config"`
			}
			require.NoError(t, json.Unmarshal([]byte(body), &got), body)
			require.True(t, strings.Contains(body, literalSecret),
				"GET /streams/{id} no longer returns the resolved secret (%s): update docs/operations.md", body)
		})
	}
}

// startBinaryEnv is startBinary with extra environment variables.
func startBinaryEnv(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	p := startBinaryCmd(t, func(cmd *exec.Cmd) { cmd.Env = append(cmd.Environ(), env...) }, args...)
	return p
}

// envRef is an environment reference, optionally with a default:
// ${NAME} or ${NAME:default}.
var envRef = regexp.MustCompile(`^\$\{[A-Za-z_][A-Za-z0-9_]*(:[^}]*)?\}$`)

// secretKey matches the config keys that hold credentials in our plugins and
// the core components.
var secretKey = regexp.MustCompile(`(?i)(password|passphrase|secret|token|private_key)$`)

// literalSecrets walks a decoded YAML tree and returns the paths of
// credential fields set to a literal (non-empty, not an env reference).
func literalSecrets(path string, v any) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		for k, child := range x {
			p := path + "." + k
			if s, ok := child.(string); ok && secretKey.MatchString(k) && s != "" && !envRef.MatchString(s) {
				out = append(out, p)
				continue
			}
			out = append(out, literalSecrets(p, child)...)
		}
	case []any:
		for i, child := range x {
			out = append(out, literalSecrets(fmt.Sprintf("%s[%d]", path, i), child)...)
		}
	}
	return out
}

// TestExamplesTakeSecretsFromEnv enforces that no shipped config (examples
// and the Kubernetes ConfigMap) holds a literal credential: operators copy
// them, and a literal password would end up in git and in the streams API.
func TestExamplesTakeSecretsFromEnv(t *testing.T) {
	require.Equal(t, []string{".a.password"},
		literalSecrets("", map[string]any{"a": map[string]any{"password": "x", "token": "${T}", "user": "u"}}),
		"the checker must flag exactly the literal")

	configs := map[string]string{}
	examples, err := filepath.Glob("../config/examples/*.yaml")
	require.NoError(t, err)
	for _, ex := range examples {
		raw, err := os.ReadFile(ex)
		require.NoError(t, err)
		configs[filepath.Base(ex)] = string(raw)
	}
	cm, err := os.ReadFile("../deploy/k8s/configmap.yaml")
	require.NoError(t, err)
	var obj struct {
		Data map[string]string `yaml:"data"`
	}
	require.NoError(t, yaml.Unmarshal(cm, &obj))
	configs["deploy/k8s/configmap.yaml"] = obj.Data["config.yaml"]

	for name, raw := range configs {
		t.Run(name, func(t *testing.T) {
			var tree any
			require.NoError(t, yaml.Unmarshal([]byte(raw), &tree))
			require.Empty(t, literalSecrets("", tree), "use ${ENV} references for credentials")
		})
	}
}
