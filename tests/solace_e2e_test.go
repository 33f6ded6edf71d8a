package tests

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/solacetest"
)

// TestSolaceEndToEnd runs the binary twice against an in-process test
// broker: a consumer (solace input in topic mode, which provisions its queue
// over SEMP, into a file) and a producer (generate into the solace output on
// that topic). Every generated message must arrive once, with its attributes,
// and the queue must end empty (everything acked).
func TestSolaceEndToEnd(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	dir := t.TempDir()
	outFile := filepath.Join(dir, "received.jsonl")
	const n = 50
	const topic = "e2e/orders/eu"
	const queue = "e2e-orders"

	consumer := fmt.Sprintf(`
input:
  solace:
    urls: [ %[1]s ]
    username: default
    password: "${E2E_SOLACE_PASSWORD}"
    topic: e2e/orders/>
    queue_name: %[2]s
    flows: 2
    semp:
      url: %[3]s
      username: admin
      password: "${E2E_SEMP_PASSWORD}"
pipeline:
  processors:
    - mapping: |
        root.body = this
        root.meta = {
          "destination": @solace_destination,
          "destination_type": @solace_destination_type,
          "application_message_id": @solace_application_message_id,
          "correlation_id": @solace_correlation_id,
          "priority": @solace_priority,
          "redelivered": @solace_redelivered,
          "time_to_live": @solace_time_to_live,
          "region": @region,
          "sender_timestamp_type": @solace_sender_timestamp.type(),
          "timestamp_type": @solace_timestamp.type(),
        }
output:
  file:
    path: %[4]s
    codec: lines
logger:
  level: warn
`, b.SMFURL(), queue, b.SEMPURL(), outFile)

	producer := fmt.Sprintf(`
input:
  generate:
    count: %[1]d
    interval: ""
    mapping: |
      root.id = "order-%%d".format(counter())
      root.amount = counter() * 10
      meta region = "eu"
output:
  solace:
    urls: [ %[2]s ]
    username: default
    password: "${E2E_SOLACE_PASSWORD}"
    topic: %[3]s
    application_message_id: ${! json("id") }
    correlation_id: corr-${! json("id") }
    priority: "7"
    ttl: 1h
    metadata:
      include_patterns: [ "^region$" ]
logger:
  level: warn
`, n, b.SMFURL(), topic)

	consumerPath := filepath.Join(dir, "consumer.yaml")
	producerPath := filepath.Join(dir, "producer.yaml")
	require.NoError(t, writeFile(consumerPath, consumer))
	require.NoError(t, writeFile(producerPath, producer))
	env := append(os.Environ(), "E2E_SOLACE_PASSWORD=default", "E2E_SEMP_PASSWORD=admin")

	for _, p := range []string{consumerPath, producerPath} {
		lint := exec.CommandContext(t.Context(), binPath(t), "lint", p)
		lint.Env = env
		out, err := lint.CombinedOutput()
		require.NoError(t, err, "lint %s:\n%s", p, out)
	}

	var consumerOut bytes.Buffer
	cons := exec.CommandContext(t.Context(), binPath(t), "run", consumerPath)
	cons.Env = env
	cons.Stdout, cons.Stderr = &consumerOut, &consumerOut
	require.NoError(t, cons.Start())
	consDone := make(chan error, 1)
	go func() { consDone <- cons.Wait() }()
	t.Cleanup(func() {
		if cons.ProcessState == nil {
			_ = cons.Process.Kill()
			<-consDone
		}
	})

	// The consumer provisions its queue; publish only once it exists.
	require.Eventually(t, func() bool {
		_, st, err := b.Queue("default", queue)
		return err == nil && st.Consumers == 2
	}, 30*time.Second, 20*time.Millisecond, "consumer did not bind: %s", &consumerOut)
	cfg, _, err := b.Queue("default", queue)
	require.NoError(t, err)
	assert.Equal(t, solacetest.AccessNonExclusive, cfg.AccessType)
	assert.True(t, cfg.Durable)

	prod := exec.CommandContext(t.Context(), binPath(t), "run", producerPath)
	prod.Env = env
	out, err := prod.CombinedOutput()
	require.NoError(t, err, "producer:\n%s", out)
	require.Equal(t, n, b.PublishedCount(topic))

	// Once every message is in the file, stop the consumer as an operator
	// would; a graceful shutdown acks what the output wrote.
	require.Eventually(t, func() bool {
		data, _ := os.ReadFile(outFile)
		return bytes.Count(data, []byte("\n")) >= n
	}, 30*time.Second, 20*time.Millisecond, "consumer output incomplete:\n%s", &consumerOut)
	require.NoError(t, cons.Process.Signal(os.Interrupt))
	select {
	case err := <-consDone:
		require.NoError(t, err, "consumer:\n%s", &consumerOut)
	case <-time.After(30 * time.Second):
		t.Fatalf("consumer did not stop:\n%s", &consumerOut)
	}

	f, err := os.Open(outFile)
	require.NoError(t, err)
	defer f.Close()
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var rec struct {
			Body struct {
				ID     string `json:"id"`
				Amount int    `json:"amount"`
			} `json:"body"`
			Meta map[string]any `json:"meta"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &rec), sc.Text())
		id := rec.Body.ID
		require.False(t, seen[id], "%s arrived twice", id)
		seen[id] = true
		m := rec.Meta
		assert.Equal(t, topic, m["destination"], id)
		assert.Equal(t, "topic", m["destination_type"], id)
		assert.Equal(t, id, m["application_message_id"], id)
		assert.Equal(t, "corr-"+id, m["correlation_id"], id)
		assert.EqualValues(t, 7, m["priority"], id)
		assert.Equal(t, false, m["redelivered"], id)
		assert.EqualValues(t, time.Hour.Milliseconds(), m["time_to_live"], id)
		assert.Equal(t, "eu", m["region"], id)
		// The output does not stamp sender timestamps by default (see its
		// sender_timestamp field); the input's default timestamp: sender
		// then falls back to the receive time.
		assert.Equal(t, "null", m["sender_timestamp_type"], id)
		assert.Equal(t, "timestamp", m["timestamp_type"], id)
	}
	require.NoError(t, sc.Err())
	require.Len(t, seen, n, "every generated message must arrive")
	for i := 1; i <= n; i++ {
		require.True(t, seen[fmt.Sprintf("order-%d", i)], "order-%d missing", i)
	}

	// Everything read was acked, and the input left its queue in place.
	require.Eventually(t, func() bool {
		_, st, err := b.Queue("default", queue)
		return err == nil && st.SpooledMsgCount == 0 && st.Consumers == 0
	}, 10*time.Second, 20*time.Millisecond)
}
