package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/redpanda-data/benthos/v4/public/service/integration"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/solacetest"
)

// streamsAPI drives the streams-mode HTTP API of a running binary.
type streamsAPI struct {
	t    *testing.T
	base string
}

func (a streamsAPI) do(method, path, body string) (int, string) {
	a.t.Helper()
	req, err := http.NewRequestWithContext(a.t.Context(), method, a.base+path, strings.NewReader(body))
	require.NoError(a.t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(a.t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(a.t, err)
	return resp.StatusCode, string(out)
}

// metrics scrapes /metrics, or returns nil while it cannot.
func (a streamsAPI) metrics() map[string]*dto.MetricFamily {
	code, body, err := httpGet(a.base + "/metrics")
	if err != nil || code != http.StatusOK {
		return nil
	}
	return parseMetrics(a.t, body)
}

func (a streamsAPI) readyCode() int {
	code, _, err := httpGet(a.base + "/ready")
	if err != nil {
		return 0
	}
	return code
}

// publishStream is a stream that publishes a message every 10ms to a queue
// of the test broker through the solace output. reconnect_attempts: 0 makes
// a dropped session fail at once, so that /ready reflects it.
func publishStream(smfURL, queue, label string) string {
	return fmt.Sprintf(`
input:
  generate:
    interval: 10ms
    mapping: 'root = {"n": counter()}'
output:
  label: %s
  solace:
    urls: [ %s ]
    username: default
    password: ${CS_SOLACE_PASSWORD}
    queue: %s
    reconnect_attempts: 0
    connect_retries: 0
    connect_timeout: 2s
`, label, smfURL, queue)
}

// TestStreamsModeEndToEnd runs `connect-solace streams` against the
// in-process solacetest broker and drives it through the HTTP API: create,
// read, update and delete streams, messages reaching the broker, their
// metrics on /metrics with the stream label, and /ready following a broker
// that goes down and comes back.
func TestStreamsModeEndToEnd(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	for _, q := range []string{"e2e_out", "e2e_out2"} {
		require.NoError(t, b.CreateQueue("default", solacetest.QueueConfig{Name: q, AccessType: solacetest.AccessNonExclusive}))
	}
	spooled := func(q string) int {
		_, st, err := b.Queue("default", q)
		require.NoError(t, err)
		return st.SpooledMsgCount
	}

	addr := freeLoopbackAddr(t)
	p := startBinaryEnv(t, []string{"CS_SOLACE_PASSWORD=default"},
		"streams", "--set", "http.address="+addr, "--set", "logger.level=warn")
	api := streamsAPI{t: t, base: "http://" + addr}
	require.Eventually(t, func() bool { return api.readyCode() == http.StatusOK },
		15*time.Second, 20*time.Millisecond, "streams mode did not come up:\n%s", p.out.String())

	// Create.
	code, body := api.do(http.MethodPost, "/streams/pub", publishStream(b.SMFURL(), "e2e_out", "to_solace"))
	require.Equal(t, http.StatusOK, code, body)
	require.Eventually(t, func() bool { return spooled("e2e_out") >= 20 },
		15*time.Second, 20*time.Millisecond, "messages did not reach the queue:\n%s", p.out.String())

	// Read.
	code, body = api.do(http.MethodGet, "/streams/pub", "")
	require.Equal(t, http.StatusOK, code, body)
	var info struct {
		Active bool           `json:"active"`
		Config map[string]any `json:"config"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &info))
	require.True(t, info.Active)
	require.Contains(t, info.Config, "output")
	code, body = api.do(http.MethodGet, "/streams", "")
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, `"pub"`)

	// The stream's metrics, core and ours, carry the stream label.
	require.Eventually(t, func() bool {
		fams := api.metrics()
		sent, ok1 := metricValue(fams["output_sent"], map[string]string{"stream": "pub", "label": "to_solace"})
		published, ok2 := metricValue(fams["solace_output_published"], map[string]string{"stream": "pub"})
		return ok1 && ok2 && sent >= 20 && published >= 20
	}, 10*time.Second, 50*time.Millisecond, "no output_sent/solace_output_published for stream pub on /metrics")

	// Update: the same stream now publishes to another queue.
	before := spooled("e2e_out")
	code, body = api.do(http.MethodPut, "/streams/pub", publishStream(b.SMFURL(), "e2e_out2", "to_solace_v2"))
	require.Equal(t, http.StatusOK, code, body)
	require.Eventually(t, func() bool { return spooled("e2e_out2") >= 20 },
		15*time.Second, 20*time.Millisecond, "updated stream did not publish to the new queue")
	code, body = api.do(http.MethodGet, "/streams/pub", "")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "e2e_out2")
	require.Contains(t, body, "to_solace_v2")
	// The old output is gone: its queue grows by at most what was in
	// flight during the swap.
	require.Less(t, spooled("e2e_out")-before, 50)

	// A consuming stream, when the solace input exists in this tree.
	if _, err := os.Stat("../input/solace.go"); err == nil {
		code, body = api.do(http.MethodPost, "/streams/sub", fmt.Sprintf(`
input:
  label: from_solace
  solace:
    urls: [ %s ]
    username: default
    password: ${CS_SOLACE_PASSWORD}
    queue: e2e_out
    flows: 2
output:
  drop: {}
`, b.SMFURL()))
		require.Equal(t, http.StatusOK, code, body)
		require.Eventually(t, func() bool {
			received, ok := metricValue(api.metrics()["input_received"], map[string]string{"stream": "sub", "label": "from_solace"})
			return ok && received >= 20 && spooled("e2e_out") == 0
		}, 15*time.Second, 50*time.Millisecond, "the sub stream did not drain e2e_out:\n%s", p.out.String())
		code, body = api.do(http.MethodDelete, "/streams/sub", "")
		require.Equal(t, http.StatusOK, code, body)
	}

	// Readiness follows the broker: down while logins are refused after
	// the connections dropped, up again once they are accepted.
	require.Eventually(t, func() bool { return api.readyCode() == http.StatusOK }, 10*time.Second, 20*time.Millisecond)
	b.Faults().RefuseLogins(time.Hour)
	b.Faults().DropConnections()
	require.Eventually(t, func() bool { return api.readyCode() == http.StatusServiceUnavailable },
		15*time.Second, 20*time.Millisecond, "/ready did not report the lost broker")
	code, body, err := httpGet(api.base + "/ready")
	require.NoError(t, err)
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Contains(t, body, "pub", "the failing stream must be named")
	b.Faults().RefuseLogins(0)
	require.Eventually(t, func() bool { return api.readyCode() == http.StatusOK },
		20*time.Second, 50*time.Millisecond, "/ready did not recover with the broker:\n%s", p.out.String())
	after := spooled("e2e_out2")
	require.Eventually(t, func() bool { return spooled("e2e_out2") > after }, 10*time.Second, 20*time.Millisecond,
		"publishing did not resume")

	// Delete.
	code, body = api.do(http.MethodDelete, "/streams/pub", "")
	require.Equal(t, http.StatusOK, code, body)
	code, _ = api.do(http.MethodGet, "/streams/pub", "")
	require.Equal(t, http.StatusNotFound, code)
	require.Eventually(t, func() bool { return b.ClientCount() == 0 }, 10*time.Second, 20*time.Millisecond,
		"a deleted stream must close its broker session")

	// A config that does not lint is refused with the lint errors.
	code, body = api.do(http.MethodPost, "/streams/bad", "input:\n  solace:\n    nope: 1\noutput:\n  drop: {}\n")
	require.Equal(t, http.StatusBadRequest, code, body)
	require.True(t, bytes.Contains([]byte(body), []byte("lint")), body)
}

// TestStreamsAPIPasswordFileNotExposed posts a stream whose solace output
// reads its password from a file (password_file) and checks that
// GET /streams/{id} shows the path but not the password, while the output
// logs in with it and publishes. This is the streams-mode remedy for the
// exposure TestStreamsAPIExposure pins down.
func TestStreamsAPIPasswordFileNotExposed(t *testing.T) {
	const password = "s3cret-in-a-file-4711"
	b := solacetest.NewTestBroker(t, solacetest.Config{Users: map[string]string{"app": password}})
	require.NoError(t, b.CreateQueue("default", solacetest.QueueConfig{Name: "pwfile_out", AccessType: solacetest.AccessNonExclusive}))
	passFile := filepath.Join(t.TempDir(), "solace-password")
	require.NoError(t, os.WriteFile(passFile, []byte(password+"\n"), 0o600))

	addr := freeLoopbackAddr(t)
	p := startBinaryEnv(t, nil, "streams", "--set", "http.address="+addr, "--set", "logger.level=warn")
	api := streamsAPI{t: t, base: "http://" + addr}
	require.Eventually(t, func() bool { return api.readyCode() == http.StatusOK },
		15*time.Second, 20*time.Millisecond, "streams mode did not come up:\n%s", p.out.String())

	code, body := api.do(http.MethodPost, "/streams/pwfile", fmt.Sprintf(`
input:
  generate:
    interval: 10ms
    mapping: 'root = {"n": counter()}'
output:
  solace:
    urls: [ %s ]
    username: app
    password_file: %s
    queue: pwfile_out
    connect_retries: 0
    connect_timeout: 2s
`, b.SMFURL(), passFile))
	require.Equal(t, http.StatusOK, code, body)
	require.Eventually(t, func() bool {
		_, st, err := b.Queue("default", "pwfile_out")
		require.NoError(t, err)
		return st.SpooledMsgCount >= 20
	}, 15*time.Second, 20*time.Millisecond, "messages did not reach the queue:\n%s", p.out.String())

	code, body = api.do(http.MethodGet, "/streams/pwfile", "")
	require.Equal(t, http.StatusOK, code, body)
	var got struct {
		Config struct {
			Output struct {
				Solace map[string]any `json:"solace"`
			} `json:"output"`
		} `json:"config"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &got), body)
	require.Equal(t, passFile, got.Config.Output.Solace["password_file"], body)
	require.NotContains(t, body, password, "the streams API must not show the password read from the file")
	require.NotContains(t, p.out.String(), password, "nor may the logs")
}

// TestIntegrationStreamsModeJMS adds a stream that sends to RabbitMQ through
// the jms output (the broker .ci/setup.d/20-rabbitmq.sh starts; the
// JMS_TEST_* variables it exports are honoured) and checks the messages are
// settled and counted on /metrics under the stream's label.
func TestIntegrationStreamsModeJMS(t *testing.T) {
	integration.CheckSkip(t)
	amqpURL := envOr("JMS_TEST_AMQP_URL", "amqp://127.0.0.1:5672")
	u, err := url.Parse(amqpURL)
	require.NoError(t, err)
	c, err := net.DialTimeout("tcp", u.Host, 3*time.Second)
	require.NoError(t, err, "RabbitMQ is not reachable at %s: run `bash -c 'source .ci/setup.d/20-rabbitmq.sh'`", amqpURL)
	require.NoError(t, c.Close())

	addr := freeLoopbackAddr(t)
	p := startBinaryEnv(t, []string{"CS_JMS_PASSWORD=" + envOr("JMS_TEST_PASSWORD", "connect-solace-test")},
		"streams", "--set", "http.address="+addr, "--set", "logger.level=warn")
	api := streamsAPI{t: t, base: "http://" + addr}
	require.Eventually(t, func() bool { return api.readyCode() == http.StatusOK },
		15*time.Second, 20*time.Millisecond, "streams mode did not come up:\n%s", p.out.String())

	queue := fmt.Sprintf("cs-streams-e2e-%d", time.Now().UnixNano())
	code, body := api.do(http.MethodPost, "/streams/jms", fmt.Sprintf(`
input:
  generate:
    count: 25
    interval: 5ms
    mapping: 'root = {"n": counter()}'
output:
  label: to_rabbit
  jms:
    urls: [ %q ]
    username: %q
    password: ${CS_JMS_PASSWORD}
    queue: %s
`, amqpURL, envOr("JMS_TEST_USERNAME", "connect-solace"), queue))
	require.Equal(t, http.StatusOK, code, body)

	require.Eventually(t, func() bool {
		fams := api.metrics()
		sent, ok1 := metricValue(fams["output_sent"], map[string]string{"stream": "jms", "label": "to_rabbit"})
		settled, ok2 := metricValue(fams["jms_messages_sent"], map[string]string{"stream": "jms"})
		return ok1 && ok2 && sent == 25 && settled == 25
	}, 20*time.Second, 50*time.Millisecond, "jms stream did not send 25 messages:\n%s", p.out.String())
	code, body = api.do(http.MethodDelete, "/streams/jms", "")
	require.Equal(t, http.StatusOK, code, body)
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
