package input

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/Azure/go-amqp"
	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/jms"
)

// jmsBroker is the RabbitMQ that .ci/setup.d/20-rabbitmq.sh starts; the
// defaults match what the script creates (as in output's jms tests).
type jmsBroker struct {
	url, user, pass string
	stop, start     string
}

const jmsSetupHint = "run `bash -c 'source .ci/setup.d/20-rabbitmq.sh'` from the repository root to install and start RabbitMQ with AMQP 1.0 on 127.0.0.1"

func jmsEnv(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// jmsTestBroker returns the broker, failing (never skipping) when it is not
// reachable.
func jmsTestBroker(t testing.TB) jmsBroker {
	t.Helper()
	b := jmsBroker{
		url:   jmsEnv("JMS_TEST_AMQP_URL", "amqp://127.0.0.1:5672"),
		user:  jmsEnv("JMS_TEST_USERNAME", "connect-solace"),
		pass:  jmsEnv("JMS_TEST_PASSWORD", "connect-solace-test"),
		stop:  jmsEnv("JMS_TEST_BROKER_STOP", "rabbitmqctl -q -n rabbit@localhost stop_app"),
		start: jmsEnv("JMS_TEST_BROKER_START", "rabbitmqctl -q -n rabbit@localhost start_app && rabbitmqctl -q -n rabbit@localhost await_startup"),
	}
	u, err := url.Parse(b.url)
	require.NoError(t, err)
	c, err := net.DialTimeout("tcp", u.Host, 3*time.Second)
	if err != nil {
		t.Fatalf("RabbitMQ is not reachable at %s (%v): %s", b.url, err, jmsSetupHint)
	}
	_ = c.Close()
	return b
}

func (b jmsBroker) yaml() string {
	return fmt.Sprintf("urls: [ %q ]\nusername: %q\npassword: %q\n", b.url, b.user, b.pass)
}

func jmsRandName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// newTestJMSReader builds the input from YAML as Benthos would.
func newTestJMSReader(t testing.TB, yaml string, res *service.Resources) *jmsReader {
	t.Helper()
	conf, err := jmsInputSpec().ParseYAML(yaml, nil)
	require.NoError(t, err)
	if res == nil {
		res = service.MockResources()
	}
	r, err := newJMSReaderFromParsed(conf, res)
	require.NoError(t, err)
	return r
}

func connectReader(t testing.TB, r *jmsReader) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, r.Connect(ctx))
	t.Cleanup(func() { _ = r.Close(context.Background()) })
}

// rawSender is a plain go-amqp sender, independent of the jms output, that
// puts test messages on the broker.
type rawSender struct {
	conn *amqp.Conn
	s    *amqp.Sender
}

func newRawSender(t testing.TB, b jmsBroker, address string) *rawSender {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := amqp.Dial(ctx, b.url, &amqp.ConnOptions{SASLType: amqp.SASLTypePlain(b.user, b.pass)})
	require.NoError(t, err)
	sess, err := conn.NewSession(ctx, nil)
	require.NoError(t, err)
	opts := &amqp.SenderOptions{}
	if strings.HasPrefix(address, "/queue/") {
		// As the jms output declares RabbitMQ queues: durable.
		opts.TargetDurability = amqp.DurabilityConfiguration
	}
	s, err := sess.NewSender(ctx, address, opts)
	require.NoError(t, err)
	rs := &rawSender{conn: conn, s: s}
	t.Cleanup(func() { _ = conn.Close() })
	return rs
}

// send transfers msgs and waits for the broker to accept each.
func (s *rawSender) send(t testing.TB, msgs ...*amqp.Message) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, m := range msgs {
		require.NoError(t, s.s.Send(ctx, m, nil))
	}
}

// textMsg is a JMS TextMessage as the jms output encodes it.
func textMsg(t testing.TB, body string, props map[string]any) *amqp.Message {
	t.Helper()
	m, err := jms.Encode(&jms.Message{
		Type: jms.BodyText, Body: []byte(body), Priority: jms.DefaultPriority, Persistent: true,
		Destination: jms.Destination{Address: "unused"}, Properties: props,
	})
	require.NoError(t, err)
	m.Properties.To = nil
	// Encode shares one annotations map per message class with every
	// message it builds; tests edit theirs, so each gets its own copy.
	m.Annotations = maps.Clone(m.Annotations)
	return m
}

// readOne reads one single-message batch within the timeout.
func readOne(t testing.TB, r *jmsReader) (*service.Message, service.AckFunc) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	batch, ack, err := r.ReadBatch(ctx)
	require.NoError(t, err)
	require.Len(t, batch, 1)
	return batch[0], ack
}

func body(t testing.TB, m *service.Message) string {
	t.Helper()
	b, err := m.AsBytes()
	require.NoError(t, err)
	return string(b)
}

func meta(t testing.TB, m *service.Message, key string) any {
	t.Helper()
	v, ok := m.MetaGetMut(key)
	require.True(t, ok, "metadata %s missing", key)
	return v
}

func runShell(t *testing.T, cmd string) {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), "sh", "-c", cmd).CombinedOutput()
	require.NoError(t, err, "%s: %s", cmd, out)
}
