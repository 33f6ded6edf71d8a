package output

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/go-amqp"
	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/redpanda-data/benthos/v4/public/service/integration"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/jms"

	"github.com/connect-solace/connect-solace/internal/testkit/jmskit"
)

// TestIntegrationJMSEncoding sends each message type through the output to
// RabbitMQ and checks, with the independent Proton receiver, every section
// and header a JMS consumer relies on.
func TestIntegrationJMSEncoding(t *testing.T) {
	integration.CheckSkip(t)
	b := jmskit.TestBroker(t)

	type check func(t *testing.T, m receivedMsg, sentAt time.Time)
	tests := []struct {
		name    string
		config  string
		payload string
		meta    map[string]any
		check   check
	}{
		{
			name: "text with every header",
			config: `
message_type: text
priority: '${! meta("prio") }'
ttl: 1m
message_id: order-1
correlation_id: '${! json("order") }'
jms_type: OrderCreated
reply_to: replies
group_id: g1
group_sequence: "3"
metadata:
  include_patterns: [ "^p_" ]
`,
			payload: `{"order":"o-17"}`,
			meta: map[string]any{
				"prio":      "7",
				"p_str":     "s",
				"p_int":     int64(42),
				"p_float":   1.5,
				"p_bool":    true,
				"p_time":    time.UnixMilli(1700000000123),
				"p_nested":  map[string]any{"a": 1},
				"p_small":   uint8(200),
				"not_sent":  "x",
				"p_int32":   int32(-5),
				"p_float32": float32(0.25),
			},
			check: func(t *testing.T, m receivedMsg, sentAt time.Time) {
				assert.Equal(t, "amqp-value", m.BodySection)
				assert.Equal(t, "str", m.Body.Type)
				assert.Equal(t, `{"order":"o-17"}`, m.Body.str(t))
				assert.Nil(t, m.ContentType, "content type %q", deref(m.ContentType))
				assertAnnotation(t, m, jms.AnnMsgType, jms.MsgTypeText)
				assertAnnotation(t, m, jms.AnnDest, int8(jms.KindQueue))
				assertAnnotation(t, m, jms.AnnReplyType, int8(jms.KindQueue))
				assert.True(t, m.Durable)
				assert.Equal(t, 7, m.Priority)
				assert.Equal(t, int64(60000), m.TTLMs)
				assert.Equal(t, int64(60000), m.ExpiryTimeMs-m.CreationTimeMs)
				assert.Equal(t, "ID:order-1", m.MessageID.str(t))
				assert.Equal(t, "o-17", m.CorrelationID.str(t))
				assert.Equal(t, "OrderCreated", deref(m.Subject))
				assert.Equal(t, "/queue/replies", deref(m.ReplyTo))
				assert.Equal(t, "g1", deref(m.GroupID))
				require.NotNil(t, m.GroupSequence)
				assert.Equal(t, int64(3), *m.GroupSequence)
				assertCreationTime(t, m, sentAt)

				// Every value on the wire has a JMS property type.
				want := map[string]struct{ typ, val string }{
					"p_str":     {"str", `"s"`},
					"p_int":     {"int", `42`},            // AMQP long -> Java Long
					"p_float":   {"float", `1.5`},         // AMQP double -> Java Double
					"p_bool":    {"bool", `true`},         // boolean
					"p_time":    {"int", `1700000000123`}, // epoch ms, not an AMQP timestamp
					"p_nested":  {"str", `"{\"a\":1}"`},
					"p_small":   {"short", `200`},    // uint8 widened to a signed short
					"p_int32":   {"int32", `-5`},     // AMQP int -> Java Integer
					"p_float32": {"float32", `0.25`}, // AMQP float -> Java Float
				}
				require.Len(t, m.Properties, len(want), "properties %v", m.Properties)
				for k, w := range want {
					got, ok := m.Properties[k]
					if assert.True(t, ok, "property %s missing", k) {
						assert.Equal(t, w.typ, got.Type, "type of %s", k)
						assert.JSONEq(t, w.val, string(got.Value), "value of %s", k)
					}
				}
			},
		},
		{
			name: "bytes non-persistent with defaults",
			config: `
message_type: bytes
delivery_mode: non_persistent
`,
			payload: "\x00\x01binary\xff",
			check: func(t *testing.T, m receivedMsg, sentAt time.Time) {
				assert.Equal(t, "data", m.BodySection)
				assert.Equal(t, "bytes", m.Body.Type)
				var b64 string
				require.NoError(t, json.Unmarshal(m.Body.Value, &b64))
				assert.Equal(t, "AAFiaW5hcnn/", b64)
				assert.Equal(t, jms.ContentTypeOctetStream, deref(m.ContentType))
				assertAnnotation(t, m, jms.AnnMsgType, jms.MsgTypeBytes)
				assertAnnotation(t, m, jms.AnnDest, int8(jms.KindQueue))
				assert.NotContains(t, m.Annotations, jms.AnnReplyType)
				assert.False(t, m.Durable)
				assert.Equal(t, 4, m.Priority, "JMS default priority")
				assert.Zero(t, m.TTLMs)
				assert.Zero(t, m.ExpiryTimeMs)
				assert.True(t, strings.HasPrefix(m.MessageID.str(t), "ID:"), "generated message id %s", m.MessageID.Value)
				assert.Equal(t, "null", m.CorrelationID.Type)
				assert.Nil(t, m.Subject)
				assert.Nil(t, m.ReplyTo)
				assertCreationTime(t, m, sentAt)
				assert.Empty(t, m.Properties)
			},
		},
		{
			name:    "map",
			config:  "message_type: map\nreply_to: answers\nreply_to_type: topic\n",
			payload: `{"s":"x","i":42,"f":1.5,"b":false,"n":null}`,
			check: func(t *testing.T, m receivedMsg, sentAt time.Time) {
				assert.Equal(t, "amqp-value", m.BodySection)
				assert.Nil(t, m.ContentType, "content type %q", deref(m.ContentType))
				assertAnnotation(t, m, jms.AnnMsgType, jms.MsgTypeMap)
				assertAnnotation(t, m, jms.AnnReplyType, int8(jms.KindTopic))
				assert.Equal(t, "/topic/answers", deref(m.ReplyTo))
				var body map[string]typedVal
				require.NoError(t, json.Unmarshal(m.Body.Value, &body))
				want := map[string]struct{ typ, val string }{
					"s": {"str", `"x"`},
					"i": {"int", `42`},
					"f": {"float", `1.5`},
					"b": {"bool", `false`},
					"n": {"null", `null`},
				}
				require.Len(t, body, len(want))
				for k, w := range want {
					assert.Equal(t, w.typ, body[k].Type, "type of %s", k)
					assert.JSONEq(t, w.val, string(body[k].Value), "value of %s", k)
				}
				assertCreationTime(t, m, sentAt)
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			queue := jmskit.RandName("jms-it-")
			o := newTestJMSOutput(t, b.YAML()+"queue: "+queue+"\n"+tc.config)
			require.NoError(t, o.Connect(t.Context()))
			t.Cleanup(func() { _ = o.Close(t.Context()) })

			msg := service.NewMessage([]byte(tc.payload))
			for k, v := range tc.meta {
				msg.MetaSetMut(k, v)
			}
			sentAt := time.Now()
			writeOK(t, o, service.MessageBatch{msg})

			got := receiveWithPython(t, b, "/queue/"+queue, 1)
			require.Len(t, got, 1)
			assert.Equal(t, "/queue/"+queue, deref(got[0].To))
			tc.check(t, got[0], sentAt)
		})
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func assertAnnotation(t *testing.T, m receivedMsg, key string, want int8) {
	t.Helper()
	a, ok := m.Annotations[key]
	if !assert.True(t, ok, "annotation %s missing from %v", key, m.Annotations) {
		return
	}
	// The mapping types these annotations as a signed byte.
	assert.Equal(t, "byte", a.Type, "type of %s", key)
	assert.JSONEq(t, fmt.Sprint(want), string(a.Value), "value of %s", key)
}

func assertCreationTime(t *testing.T, m receivedMsg, sentAt time.Time) {
	t.Helper()
	assert.GreaterOrEqual(t, m.CreationTimeMs, sentAt.Add(-time.Millisecond).UnixMilli(), "creation time before send")
	assert.LessOrEqual(t, m.CreationTimeMs, time.Now().UnixMilli(), "creation time after receive")
}

// TestIntegrationJMSDynamicTopics routes messages to a topic per message and
// checks each subscriber gets only its own.
func TestIntegrationJMSDynamicTopics(t *testing.T) {
	integration.CheckSkip(t)
	b := jmskit.TestBroker(t)
	base := jmskit.RandName("jms-topic-")
	o := newTestJMSOutput(t, b.YAML()+`topic: '`+base+`.${! meta("sym") }'`+"\n")
	require.NoError(t, o.Connect(t.Context()))
	t.Cleanup(func() { _ = o.Close(t.Context()) })

	// Subscribe first: a topic keeps nothing for absent subscribers.
	subA := startPyReceiver(t, b, "/topic/"+base+".A", 2)
	subB := startPyReceiver(t, b, "/topic/"+base+".B", 2)

	var batch service.MessageBatch
	for i, sym := range []string{"A", "B", "A", "B"} {
		m := service.NewMessage(fmt.Appendf(nil, "%s-%d", sym, i))
		m.MetaSetMut("sym", sym)
		batch = append(batch, m)
	}
	writeOK(t, o, batch)

	for sym, sub := range map[string]*pyReceiver{"A": subA, "B": subB} {
		got := sub.wait(t)
		var bodies []string
		for _, m := range got {
			bodies = append(bodies, m.Body.str(t))
			assertAnnotation(t, m, jms.AnnDest, int8(jms.KindTopic))
			assert.Equal(t, "/topic/"+base+"."+sym, deref(m.To))
		}
		assert.ElementsMatch(t, []string{sym + "-" + map[string]string{"A": "0", "B": "1"}[sym], sym + "-" + map[string]string{"A": "2", "B": "3"}[sym]}, bodies)
	}
	// No anonymous relay on RabbitMQ 3.x: one cached link per topic.
	c, _ := o.current()
	assert.False(t, c.UsesRelay())
	assert.Equal(t, 2, c.OpenLinks())
}

// TestIntegrationJMSLinkCache sends to more queues than link_cache_size
// allows, interleaved in one batch, and checks every message arrives while
// no more links than the bound stay open.
func TestIntegrationJMSLinkCache(t *testing.T) {
	integration.CheckSkip(t)
	b := jmskit.TestBroker(t)
	base := jmskit.RandName("jms-cache-")
	o := newTestJMSOutput(t, b.YAML()+`queue: '`+base+`-${! meta("n") }'`+"\nlink_cache_size: 2\n")
	require.NoError(t, o.Connect(t.Context()))
	t.Cleanup(func() { _ = o.Close(t.Context()) })

	const queues, perQueue = 5, 3
	var batch service.MessageBatch
	for k := range perQueue {
		for n := range queues {
			m := service.NewMessage(fmt.Appendf(nil, "%d-%d", n, k))
			m.MetaSetMut("n", fmt.Sprint(n))
			batch = append(batch, m)
		}
	}
	writeOK(t, o, batch)
	c, _ := o.current()
	assert.LessOrEqual(t, c.OpenLinks(), 2)

	for n := range queues {
		got := receiveWithPython(t, b, fmt.Sprintf("/queue/%s-%d", base, n), perQueue)
		for k, m := range got {
			assert.Equal(t, fmt.Sprintf("%d-%d", n, k), m.Body.str(t), "queue %d keeps order", n)
		}
	}
}

// TestIntegrationJMSWrongPassword checks a bad password fails Connect with
// an error that says so and does not leak the password.
func TestIntegrationJMSWrongPassword(t *testing.T) {
	integration.CheckSkip(t)
	b := jmskit.TestBroker(t)
	b.Pass = "not-the-password-4711"
	o := newTestJMSOutput(t, b.YAML()+"queue: nowhere\n")
	err := o.Connect(t.Context())
	require.Error(t, err)
	assert.ErrorIs(t, err, jms.ErrAuth)
	assert.Contains(t, err.Error(), "check username and password")
	assert.Contains(t, err.Error(), b.User)
	assert.NotContains(t, err.Error(), b.Pass)
	assert.ErrorIs(t, o.WriteBatch(t.Context(), service.MessageBatch{service.NewMessage([]byte("x"))}), service.ErrNotConnected)
}

// TestIntegrationJMSPasswordFile logs in with the password read from a file
// at connect time (JMS_TEST_PASSWORD written to a temp file) and checks a
// wrong password in the file fails as a bad password does.
func TestIntegrationJMSPasswordFile(t *testing.T) {
	integration.CheckSkip(t)
	b := jmskit.TestBroker(t)
	dir := t.TempDir()
	tests := []struct {
		name     string
		content  string
		wantAuth bool
	}{
		{name: "right password", content: b.Pass + "\n"},
		{name: "wrong password", content: "not-the-password-4711\n", wantAuth: true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("password-%d", i))
			require.NoError(t, os.WriteFile(path, []byte(tt.content), 0o600))
			o := newTestJMSOutput(t, fmt.Sprintf("urls: [ %q ]\nusername: %q\npassword_file: %q\nqueue: %s\n",
				b.URL, b.User, path, jmskit.RandName("jms-pwfile-")))
			t.Cleanup(func() { _ = o.Close(context.Background()) })
			err := o.Connect(t.Context())
			if tt.wantAuth {
				require.ErrorIs(t, err, jms.ErrAuth)
				assert.NotContains(t, err.Error(), "not-the-password-4711")
				return
			}
			require.NoError(t, err)
			writeOK(t, o, service.MessageBatch{service.NewMessage([]byte("from a password file"))})
		})
	}
}

// TestIntegrationJMSRejectedMessage sends a batch in which the broker
// refuses one message and checks that exactly that message fails, with the
// broker's condition, while the others are delivered. RabbitMQ 3.10's AMQP
// 1.0 plugin cannot reject a single transfer gracefully (a publisher nack, as
// from a reject-publish queue, crashes its session), so the refused message
// goes to an exchange that does not exist, which the broker refuses with
// amqp:not-found.
func TestIntegrationJMSRejectedMessage(t *testing.T) {
	integration.CheckSkip(t)
	b := jmskit.TestBroker(t)
	queue := jmskit.RandName("jms-it-")
	missing := "/exchange/" + jmskit.RandName("jms-missing-") + "/key"
	o := newTestJMSOutput(t, b.YAML()+`queue: '${! meta("dest") }'`+"\naddress_style: rabbitmq\n")
	require.NoError(t, o.Connect(t.Context()))
	t.Cleanup(func() { _ = o.Close(t.Context()) })

	var batch service.MessageBatch
	for i, dest := range []string{queue, queue, missing, queue} {
		m := service.NewMessage(fmt.Appendf(nil, "%d", i))
		m.MetaSetMut("dest", dest)
		batch = append(batch, m)
	}
	ix := batch.Index()
	err := o.WriteBatch(t.Context(), batch)
	require.Error(t, err)
	var bErr *service.BatchError
	require.ErrorAs(t, err, &bErr)
	assert.Equal(t, 1, bErr.IndexedErrors())
	for i := range batch {
		ierr := indexFailed(ix, bErr, i)
		if i != 2 {
			assert.NoError(t, ierr, "message %d", i)
			continue
		}
		require.Error(t, ierr)
		assert.Contains(t, ierr.Error(), "amqp:not-found")
		assert.Contains(t, ierr.Error(), missing)
	}
	// Drain: messages 0 and 1 may arrive twice, as RabbitMQ ended the session
	// before their settlement was read and they were resent.
	got := receiveWithPython(t, b, "/queue/"+queue, 0)
	bodies := map[string]bool{}
	for _, m := range got {
		bodies[m.Body.str(t)] = true
	}
	assert.Equal(t, map[string]bool{"0": true, "1": true, "3": true}, bodies)
	// The connection survived the refusal: no reconnect was needed.
	c, _ := o.current()
	require.NotNil(t, c)
}

// TestIntegrationJMSBrokerRestart stops and restarts the broker while a
// producer runs. Like a pipeline, the producer writes every failed message
// again until the output reports it delivered; afterwards every generated id
// must be on the queue (0 lost; duplicates are allowed, at least once).
func TestIntegrationJMSBrokerRestart(t *testing.T) {
	integration.CheckSkip(t)
	b := jmskit.TestBroker(t)
	queue := jmskit.RandName("jms-restart-")
	o := newTestJMSOutput(t, b.YAML()+"queue: "+queue+`
retry:
  initial_interval: 50ms
  max_interval: 500ms
  max_elapsed_time: 60s
send_timeout: 5s
`)
	require.NoError(t, o.Connect(t.Context()))
	t.Cleanup(func() { _ = o.Close(t.Context()) })

	var (
		mu        sync.Mutex
		generated []string
		rewrites  int
	)
	// The producer runs until the broker is back and a few more batches went
	// through, so batches are in flight when the broker goes away.
	const perBatch, afterRestart, maxBatches = 10, 10, 5000
	started := make(chan struct{})
	restarted := make(chan struct{})
	producerDone := make(chan error, 1)
	go func() {
		extra := 0
		for n := 0; n < maxBatches && extra < afterRestart; n++ {
			var batch service.MessageBatch
			for k := range perBatch {
				body := fmt.Sprintf("m-%04d-%02d", n, k)
				batch = append(batch, service.NewMessage([]byte(body)))
				mu.Lock()
				generated = append(generated, body)
				mu.Unlock()
			}
			// Write until every message is delivered, as Benthos retries a
			// batch's failed messages.
			for attempt := 0; len(batch) > 0; attempt++ {
				if attempt == 50 {
					producerDone <- fmt.Errorf("batch %d still failing after %d writes", n, attempt)
					return
				}
				ix := batch.Index()
				err := writeReconnecting(t.Context(), o, batch)
				var bErr *service.BatchError
				if err != nil && !errors.As(err, &bErr) {
					producerDone <- err
					return
				}
				var failed service.MessageBatch
				for i, m := range batch {
					if bErr != nil && indexFailed(ix, bErr, i) != nil {
						failed = append(failed, m)
					}
				}
				if len(failed) > 0 {
					mu.Lock()
					rewrites += len(failed)
					mu.Unlock()
				}
				batch = failed
			}
			if n == 5 {
				close(started)
			}
			select {
			case <-restarted:
				extra++
			default:
			}
		}
		producerDone <- nil
	}()

	<-started
	jmskit.RunShell(t, b.Stop)
	jmskit.RunShell(t, b.Start)
	close(restarted)
	require.NoError(t, <-producerDone)

	mu.Lock()
	defer mu.Unlock()
	got := receiveWithPython(t, b, "/queue/"+queue, 0)
	seen := map[string]int{}
	for _, m := range got {
		seen[m.Body.str(t)]++
	}
	var lost []string
	for _, body := range generated {
		if seen[body] == 0 {
			lost = append(lost, body)
		}
	}
	t.Logf("%d ids generated, %d rewritten after failures; read back %d messages, %d unique, %d lost",
		len(generated), rewrites, len(got), len(seen), len(lost))
	require.Empty(t, lost, "delivered messages missing from the queue")
	require.Len(t, seen, len(generated), "only generated ids on the queue")
}

// indexFailed returns the error of message idx of the batch that ix indexes.
func indexFailed(ix *service.Indexer, bErr *service.BatchError, idx int) error {
	var out error
	bErr.WalkMessagesIndexedBy(ix, func(i int, _ *service.Message, err error) bool {
		if i == idx {
			out = err
			return false
		}
		return true
	})
	return out
}

// ---- helpers shared by the jms integration tests and benchmark ----

// newTestJMSOutput builds the output from YAML the way Benthos would.
func newTestJMSOutput(t testing.TB, yaml string) *jmsOutput {
	t.Helper()
	conf, err := jmsOutputSpec().ParseYAML(yaml, nil)
	require.NoError(t, err)
	o, err := newJMSOutputFromParsed(conf, service.MockResources())
	require.NoError(t, err)
	return o
}

// receivedMsg is what jms_receive.py reports for one message.
type receivedMsg struct {
	BodySection    string              `json:"body_section"`
	Body           typedVal            `json:"body"`
	ContentType    *string             `json:"content_type"`
	Annotations    map[string]typedVal `json:"annotations"`
	Durable        bool                `json:"durable"`
	Priority       int                 `json:"priority"`
	TTLMs          int64               `json:"ttl_ms"`
	MessageID      typedVal            `json:"message_id"`
	CorrelationID  typedVal            `json:"correlation_id"`
	Subject        *string             `json:"subject"`
	To             *string             `json:"to"`
	ReplyTo        *string             `json:"reply_to"`
	CreationTimeMs int64               `json:"creation_time_ms"`
	ExpiryTimeMs   int64               `json:"expiry_time_ms"`
	GroupID        *string             `json:"group_id"`
	GroupSequence  *int64              `json:"group_sequence"`
	Properties     map[string]typedVal `json:"properties"`
}

// typedVal is a value with the Proton type it decoded into.
type typedVal struct {
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

func (v typedVal) str(t testing.TB) string {
	t.Helper()
	var s string
	require.NoError(t, json.Unmarshal(v.Value, &s), "value %s is not a string", v.Value)
	return s
}

// pyReceiver is a running jms_receive.py.
type pyReceiver struct {
	cmd    *exec.Cmd
	lines  chan string
	stderr *strings.Builder
	done   chan error
}

// startPyReceiver starts the independent Proton receiver on address and
// waits until its link is attached. count 0 drains until idle.
func startPyReceiver(t testing.TB, b jmskit.Broker, address string, count int) *pyReceiver {
	t.Helper()
	ctx := t.Context()
	cmd := exec.CommandContext(ctx, "/usr/bin/python3", "testdata/jms_receive.py",
		"--url", b.URL, "--user", b.User, "--password", b.Pass,
		"--address", address, "--count", fmt.Sprint(count), "--timeout", "20")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	r := &pyReceiver{cmd: cmd, lines: make(chan string, 4), stderr: &strings.Builder{}, done: make(chan error, 1)}
	cmd.Stderr = r.stderr
	require.NoError(t, cmd.Start(), "starting /usr/bin/python3 (python3-qpid-proton): %s", jmskit.SetupHint)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			r.lines <- sc.Text()
		}
		close(r.lines)
		r.done <- cmd.Wait()
	}()
	select {
	case l, ok := <-r.lines:
		require.True(t, ok && l == "ready", "receiver did not attach (got %q): %s", l, r.stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("receiver did not attach in time: %s", r.stderr)
	}
	return r
}

// wait returns the messages the receiver printed.
func (r *pyReceiver) wait(t testing.TB) []receivedMsg {
	t.Helper()
	var out []receivedMsg
	select {
	case l, ok := <-r.lines:
		require.True(t, ok, "receiver printed nothing: %s", r.stderr)
		require.NoError(t, json.Unmarshal([]byte(l), &out), l)
	case <-time.After(60 * time.Second):
		t.Fatalf("receiver did not finish: %s", r.stderr)
	}
	require.NoError(t, <-r.done, r.stderr.String())
	return out
}

// receiveWithPython reads count messages from address with the Proton
// receiver.
func receiveWithPython(t testing.TB, b jmskit.Broker, address string, count int) []receivedMsg {
	t.Helper()
	return startPyReceiver(t, b, address, count).wait(t)
}

// writeReconnecting writes batch as Benthos's output loop does: while the
// output reports ErrNotConnected, reconnect (with Benthos's pacing) and
// write the batch again.
func writeReconnecting(ctx context.Context, o *jmsOutput, batch service.MessageBatch) error {
	wait := 50 * time.Millisecond
	for {
		err := o.WriteBatch(ctx, batch)
		if !errors.Is(err, service.ErrNotConnected) {
			return err
		}
		for o.Connect(ctx) != nil {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return ctx.Err()
			}
			wait = min(2*wait, time.Second)
		}
	}
}

// writeOK writes batch and requires it to be delivered.
func writeOK(t testing.TB, o *jmsOutput, batch service.MessageBatch) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	require.NoError(t, o.WriteBatch(ctx, batch))
}

// ---- Benthos's stream test suite ----

// The jms_test_receiver input exists only in this test binary: Benthos has no
// AMQP 1.0 input in core, so it reads back from RabbitMQ with a go-amqp
// receiver, which lets integration.StreamTests drive the jms output end to end.
func init() {
	service.MustRegisterInput("jms_test_receiver", service.NewConfigSpec().Fields(
		service.NewStringField("url"),
		service.NewStringField("username"),
		service.NewStringField("password"),
		service.NewStringField("address"),
	), func(conf *service.ParsedConfig, _ *service.Resources) (service.Input, error) {
		r := &jmsTestReceiver{}
		var err error
		for _, f := range []struct {
			name string
			dst  *string
		}{{"url", &r.url}, {"username", &r.user}, {"password", &r.pass}, {"address", &r.address}} {
			if *f.dst, err = conf.FieldString(f.name); err != nil {
				return nil, err
			}
		}
		return service.AutoRetryNacks(r), nil
	})
}

type jmsTestReceiver struct {
	url, user, pass, address string

	mu   sync.Mutex
	conn *amqp.Conn
	rcv  *amqp.Receiver
}

func (r *jmsTestReceiver) Connect(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.conn != nil {
		return nil
	}
	conn, rcv, err := jmskit.DialReceiver(ctx, r.url, r.user, r.pass, r.address)
	if err != nil {
		return err
	}
	r.conn, r.rcv = conn, rcv
	return nil
}

func (r *jmsTestReceiver) Read(ctx context.Context) (*service.Message, service.AckFunc, error) {
	r.mu.Lock()
	rcv := r.rcv
	r.mu.Unlock()
	if rcv == nil {
		return nil, nil, service.ErrNotConnected
	}
	am, err := jmskit.ReceiveOne(ctx, rcv)
	if err != nil {
		return nil, nil, err
	}
	msg := service.NewMessage(jmskit.Body(am))
	for k, v := range am.ApplicationProperties {
		msg.MetaSetMut(k, v)
	}
	return msg, func(ctx context.Context, err error) error {
		if err != nil {
			return rcv.ReleaseMessage(ctx, am)
		}
		return rcv.AcceptMessage(ctx, am)
	}, nil
}

func (r *jmsTestReceiver) Close(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.conn == nil {
		return nil
	}
	err := r.conn.Close()
	r.conn, r.rcv = nil, nil
	return err
}

// jmsGetter reads back what output-only stream tests sent. Their payloads
// are JSON documents with an "id" field; messages that arrive before the one
// asked for are kept for later calls.
type jmsGetter struct {
	b     jmskit.Broker
	mu    sync.Mutex
	tests map[string]*jmsGetterQueue
}

type jmsGetterQueue struct {
	mu   sync.Mutex
	rcv  *amqp.Receiver
	seen map[string]string // id -> body
}

func (g *jmsGetter) get(ctx context.Context, testID, messageID string) (string, []string, error) {
	g.mu.Lock()
	q := g.tests[testID]
	if q == nil {
		q = &jmsGetterQueue{seen: map[string]string{}}
		g.tests[testID] = q
	}
	g.mu.Unlock()

	q.mu.Lock()
	defer q.mu.Unlock()
	if q.rcv == nil {
		conn, r, err := jmskit.DialReceiver(ctx, g.b.URL, g.b.User, g.b.Pass, "/queue/jms-stream-"+testID)
		if err != nil {
			return "", nil, err
		}
		go func() { <-ctx.Done(); _ = conn.Close() }()
		q.rcv = r
	}
	for {
		if body, ok := q.seen[messageID]; ok {
			return body, nil, nil
		}
		am, err := jmskit.ReceiveOne(ctx, q.rcv)
		if err != nil {
			return "", nil, fmt.Errorf("waiting for message %s: %w", messageID, err)
		}
		if err := q.rcv.AcceptMessage(ctx, am); err != nil {
			return "", nil, err
		}
		body := jmskit.Body(am)
		var doc struct {
			ID json.Number `json:"id"`
		}
		if err := json.Unmarshal(body, &doc); err != nil {
			return "", nil, fmt.Errorf("payload %q is not the suite's JSON: %w", body, err)
		}
		q.seen[doc.ID.String()] = string(body)
	}
}

// TestIntegrationJMSStreams runs Benthos's broker test suite against the jms
// output and RabbitMQ.
func TestIntegrationJMSStreams(t *testing.T) {
	integration.CheckSkip(t)
	b := jmskit.TestBroker(t)

	template := `
output:
  jms:
    urls: [ $URL ]
    username: $USER
    password: $PASS
    queue: jms-stream-$ID
    max_in_flight: $MAX_IN_FLIGHT
    metadata:
      include_patterns: [ '.*' ]
    batching:
      count: $OUTPUT_BATCH_COUNT
      period: "$BATCH_PERIOD"
input:
  jms_test_receiver:
    url: $URL
    username: $USER
    password: $PASS
    address: /queue/jms-stream-$ID
`
	g := &jmsGetter{b: b, tests: map[string]*jmsGetterQueue{}}
	suite := integration.StreamTests(
		integration.StreamTestOpenClose(),
		integration.StreamTestMetadata(),
		integration.StreamTestSendBatch(10),
		integration.StreamTestSendBatches(10, 20, 4),
		integration.StreamTestStreamSequential(200),
		integration.StreamTestStreamParallel(200),
		integration.StreamTestOutputOnlySendSequential(20, g.get),
		integration.StreamTestOutputOnlySendBatch(20, g.get),
	)
	b.RunStreamSuite(t, suite, template)
}

// ---- metrics ----

// jmsMetrics records what the streams of TestIntegrationJMSMetrics report.
var jmsMetrics = jmskit.RegisterMetrics("jms_test_metrics")

// TestIntegrationJMSMetrics runs a real stream and checks the output reports
// messages sent, send latency and failures by the broker's condition.
func TestIntegrationJMSMetrics(t *testing.T) {
	integration.CheckSkip(t)
	b := jmskit.TestBroker(t)
	queue := jmskit.RandName("jms-metrics-")
	missing := "/exchange/" + jmskit.RandName("jms-missing-") + "/k"
	jmsMetrics.Reset()

	sb := service.NewStreamBuilder()
	require.NoError(t, sb.SetMetricsYAML("jms_test_metrics: {}"))
	require.NoError(t, sb.SetLoggerYAML("level: none"))
	require.NoError(t, sb.AddInputYAML(`
generate:
  count: 6
  interval: ""
  mapping: 'root = "m" + counter().string()'
`))
	require.NoError(t, sb.AddOutputYAML(fmt.Sprintf(`
fallback:
  - jms:
      urls: [ %q ]
      username: %q
      password: %q
      address_style: rabbitmq
      queue: '${! if content() == "m6" { %q } else { %q } }'
  - drop: {}
`, b.URL, b.User, b.Pass, missing, queue)))
	stream, err := sb.Build()
	require.NoError(t, err)
	require.NoError(t, stream.Run(t.Context()))

	assert.Equal(t, int64(5), jmsMetrics.Get("jms_messages_sent"))
	// Sampled: at most one batch per 10 ms, and at least the first.
	assert.GreaterOrEqual(t, jmsMetrics.Get("jms_send_latency_ns"), int64(1), "a latency sample for the delivered messages")
	assert.LessOrEqual(t, jmsMetrics.Get("jms_send_latency_ns"), int64(5), "no more samples than delivered batches")
	assert.Equal(t, int64(1), jmsMetrics.Get("jms_send_failures", "condition=amqp:not-found"))
	got := receiveWithPython(t, b, "/queue/"+queue, 5)
	assert.Len(t, got, 5)
}

// ---- anonymous relay and outcomes, against a Proton test peer ----

type relayRecord struct {
	LinkTarget *string `json:"link_target"`
	To         string  `json:"to"`
	Dest       int     `json:"dest"`
	MsgType    int     `json:"msg_type"`
	Body       string  `json:"body"`
	Outcome    string  `json:"outcome"`
}

// TestIntegrationJMSAnonymousRelay uses testdata/jms_relay_broker.py, a
// Proton peer that offers ANONYMOUS-RELAY and advertises ActiveMQ's address
// prefixes (RabbitMQ 3.x does neither), and settles each message with the
// outcome its address asks for. It checks that every message goes over one
// link without a target carrying its own `to`, that address_style auto uses
// the advertised prefixes, that SASL ANONYMOUS works, and that rejected,
// released and modified deliveries fail only their own message, with the
// broker's condition.
func TestIntegrationJMSAnonymousRelay(t *testing.T) {
	integration.CheckSkip(t)
	port, err := integration.GetFreePort()
	require.NoError(t, err)
	cmd := exec.CommandContext(t.Context(), "/usr/bin/python3", "testdata/jms_relay_broker.py", "--port", fmt.Sprint(port))
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start(), "starting /usr/bin/python3 (python3-qpid-proton): %s", jmskit.SetupHint)
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	t.Cleanup(func() { _ = stdin.Close(); _ = cmd.Wait() })
	select {
	case l := <-lines:
		require.Equal(t, "listening", l, stderr.String())
	case <-time.After(20 * time.Second):
		t.Fatalf("test peer did not start: %s", stderr.String())
	}

	o := newTestJMSOutput(t, fmt.Sprintf("urls: [ amqp://127.0.0.1:%d ]\ntopic: '${! meta(\"t\") }'\n", port))
	require.NoError(t, o.Connect(t.Context()))
	t.Cleanup(func() { _ = o.Close(t.Context()) })
	c, addr := o.current()
	assert.Contains(t, c.OfferedCapabilities(), jms.CapAnonymousRelay)
	assert.True(t, c.UsesRelay())
	qp, tp := addr.Prefixes()
	assert.Equal(t, "queue://", qp)
	assert.Equal(t, "topic://", tp)

	topics := []string{"prices.A", "prices.reject", "prices.B", "prices.release", "prices.modify", "prices.A"}
	var batch service.MessageBatch
	for i, tn := range topics {
		m := service.NewMessage(fmt.Appendf(nil, "m%d", i))
		m.MetaSetMut("t", tn)
		batch = append(batch, m)
	}
	ix := batch.Index()
	err = o.WriteBatch(t.Context(), batch)
	var bErr *service.BatchError
	require.ErrorAs(t, err, &bErr)
	assert.Equal(t, 3, bErr.IndexedErrors())
	want := map[int]string{
		1: "broker rejected the message: amqp:precondition-failed: refused by the test peer",
		3: "broker released the message",
		4: "broker modified the message: undeliverable here",
	}
	for i := range batch {
		ierr := indexFailed(ix, bErr, i)
		if w, ok := want[i]; ok {
			require.Error(t, ierr, "message %d", i)
			assert.Contains(t, ierr.Error(), w)
		} else {
			assert.NoError(t, ierr, "message %d", i)
		}
	}

	for i, tn := range topics {
		select {
		case l, ok := <-lines:
			require.True(t, ok, stderr.String())
			var r relayRecord
			require.NoError(t, json.Unmarshal([]byte(l), &r), l)
			assert.Nil(t, r.LinkTarget, "message %d went over a link with a target", i)
			assert.Equal(t, "topic://"+tn, r.To)
			assert.Equal(t, int(jms.KindTopic), r.Dest)
			assert.Equal(t, int(jms.MsgTypeText), r.MsgType)
			assert.Equal(t, fmt.Sprintf("m%d", i), r.Body)
		case <-time.After(10 * time.Second):
			t.Fatalf("peer reported only %d messages: %s", i, stderr.String())
		}
	}
	assert.Zero(t, c.OpenLinks(), "no per-destination links with relay")
}
