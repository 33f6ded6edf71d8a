// Package jmskit is the jms plugins' test harness over a real AMQP 1.0
// broker: the RabbitMQ that .ci/setup.d/20-rabbitmq.sh starts, reached
// through go-amqp, an AMQP client independent of internal/amqpwire. It puts
// messages on the broker and takes them off as a JMS client would, so the
// jms input and output tests check the plugins against another reading of
// the AMQP JMS Mapping, and it records the metrics a stream reports.
//
// The package imports testing, testify and go-amqp, so only _test.go files
// may import it: TestBinaryLinksNoTestCode in tests/ keeps them out of the
// binary.
package jmskit

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service/integration"
	"github.com/stretchr/testify/require"
)

// Broker is the test broker. The defaults match what
// .ci/setup.d/20-rabbitmq.sh creates, so a developer who ran it once needs
// no environment.
type Broker struct {
	URL, User, Pass string
	// Stop and Start are shell commands that stop and start the broker.
	Stop, Start string
}

// SetupHint says how to start the broker.
const SetupHint = "run `bash -c 'source .ci/setup.d/20-rabbitmq.sh'` from the repository root to install and start RabbitMQ with AMQP 1.0 on 127.0.0.1"

func env(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// TestBroker returns the broker, failing (never skipping) when it is not
// reachable, with the command that starts it.
func TestBroker(t testing.TB) Broker {
	t.Helper()
	b := Broker{
		URL:   env("JMS_TEST_AMQP_URL", "amqp://127.0.0.1:5672"),
		User:  env("JMS_TEST_USERNAME", "connect-solace"),
		Pass:  env("JMS_TEST_PASSWORD", "connect-solace-test"),
		Stop:  env("JMS_TEST_BROKER_STOP", "rabbitmqctl -q -n rabbit@localhost stop_app"),
		Start: env("JMS_TEST_BROKER_START", "rabbitmqctl -q -n rabbit@localhost start_app && rabbitmqctl -q -n rabbit@localhost await_startup"),
	}
	u, err := url.Parse(b.URL)
	require.NoError(t, err)
	c, err := net.DialTimeout("tcp", u.Host, 3*time.Second)
	if err != nil {
		t.Fatalf("RabbitMQ is not reachable at %s (%v): %s", b.URL, err, SetupHint)
	}
	_ = c.Close()
	return b
}

// YAML is the connection part of a jms plugin's config for the broker.
func (b Broker) YAML() string {
	return fmt.Sprintf("urls: [ %q ]\nusername: %q\npassword: %q\n", b.URL, b.User, b.Pass)
}

// StreamTestOpts are the options of Benthos's stream suite for a config
// template that reaches the broker through $URL, $USER and $PASS; the
// template's $BATCH_PERIOD is empty unless a test sets it.
func (b Broker) StreamTestOpts() []integration.StreamTestOptFunc {
	return []integration.StreamTestOptFunc{
		integration.StreamTestOptVarSet("URL", b.URL),
		integration.StreamTestOptVarSet("USER", b.User),
		integration.StreamTestOptVarSet("PASS", b.Pass),
		integration.StreamTestOptVarSet("BATCH_PERIOD", ""),
		integration.StreamTestOptTimeout(time.Minute),
	}
}

// RandName is prefix with a random suffix, for a queue or topic of one test.
func RandName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// RunShell runs cmd with sh and fails the test when it fails.
func RunShell(t testing.TB, cmd string) {
	t.Helper()
	out, err := ExecShell(t, cmd)
	require.NoError(t, err, "%s: %s", cmd, out)
}

// ExecShell runs cmd with sh and returns its combined output.
func ExecShell(t testing.TB, cmd string) (string, error) {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), "sh", "-c", cmd).CombinedOutput()
	return string(out), err
}

// DeleteQueues removes queues a test or benchmark left in the broker, when
// rabbitmqctl is at hand (in parallel: each call takes half a second).
func DeleteQueues(names ...string) {
	done := make(chan struct{}, len(names))
	for _, q := range names {
		go func() {
			_ = exec.Command("rabbitmqctl", "-q", "-n", "rabbit@localhost", "delete_queue", q).Run()
			done <- struct{}{}
		}()
	}
	for range names {
		<-done
	}
}

// RunStreamSuite runs Benthos's stream suite on template (see
// StreamTestOpts) twice: with max_in_flight 1, and with max_in_flight 32 and
// the output batching five messages ($OUTPUT_BATCH_COUNT, $BATCH_PERIOD).
func (b Broker) RunStreamSuite(t *testing.T, suite integration.StreamTestList, template string) {
	opts := b.StreamTestOpts()
	t.Run("max_in_flight 1", func(t *testing.T) {
		suite.Run(t, template, opts...)
	})
	t.Run("max_in_flight 32 batched", func(t *testing.T) {
		suite.Run(t, template, append(opts,
			integration.StreamTestOptMaxInFlight(32),
			integration.StreamTestOptVarSet("OUTPUT_BATCH_COUNT", "5"),
			integration.StreamTestOptVarSet("BATCH_PERIOD", "5ms"),
		)...)
	})
}
