package output

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/go-amqp"
	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/jms"
)

// TestJMSLintRules checks the spec's lint rules name the field and the fix.
func TestJMSLintRules(t *testing.T) {
	tests := []struct {
		name string
		conf string
		want string // "" means the config lints clean
	}{
		{"queue only", "queue: q", ""},
		{"topic only", "topic: t", ""},
		{"neither", "message_type: text", "field queue or topic is required"},
		{"both", "queue: q\ntopic: t", "remove one of them"},
		{"prefix without custom", "queue: q\nqueue_prefix: 'x://'", "address_style: custom"},
		{"prefix with artemis", "queue: q\naddress_style: artemis\nqueue_prefix: 'anycast://'", ""},
		{"password without username", "queue: q\npassword: secret", "set username too"},
		{"password and password_file", "queue: q\nusername: u\npassword: secret\npassword_file: /run/p", "fields password and password_file are both set: keep one"},
		{"password_file without username", "queue: q\npassword_file: /run/p", "set username too"},
		{"password_file", "queue: q\nusername: u\npassword_file: /run/p", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sb := service.NewStreamBuilder()
			err := sb.AddOutputYAML("jms:\n  urls: [ amqp://127.0.0.1:5672 ]\n  " + strings.ReplaceAll(tc.conf, "\n", "\n  "))
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestJMSConstructorErrors(t *testing.T) {
	tests := []struct {
		name string
		conf string
		want string
	}{
		{"no destination", "urls: [ amqp://h ]", "queue or topic is required"},
		{"both destinations", "urls: [ amqp://h ]\nqueue: q\ntopic: t", "remove one"},
		{"empty urls", "urls: [ ' , ' ]\nqueue: q", "at least one broker URL"},
		{"static priority out of range", "urls: [ amqp://h ]\nqueue: q\npriority: '12'", "0 to 9"},
		{"link cache", "urls: [ amqp://h ]\nqueue: q\nlink_cache_size: 0", "link_cache_size"},
		{"negative retries", "urls: [ amqp://h ]\nqueue: q\nretry:\n  max_retries: -1", "negative"},
		{"password and password_file", "urls: [ amqp://h ]\nqueue: q\nusername: u\npassword: p\npassword_file: /run/p", "fields password and password_file: both are set"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			conf, err := jmsOutputSpec().ParseYAML(tc.conf, nil)
			require.NoError(t, err)
			_, err = newJMSOutputFromParsed(conf, service.MockResources())
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestJMSURLsAreSplit(t *testing.T) {
	o := newTestJMSOutput(t, "urls: [ 'amqp://a:1, amqp://b:2', amqps://c ]\nqueue: q")
	assert.Equal(t, []string{"amqp://a:1", "amqp://b:2", "amqps://c"}, o.dial.URLs)
}

// TestJMSPrepare checks the per-message view built from interpolations,
// without a broker.
func TestJMSPrepare(t *testing.T) {
	tests := []struct {
		name    string
		conf    string
		payload string
		meta    map[string]any
		check   func(t *testing.T, p *jmsPrepared)
		wantErr string
	}{
		{
			name:    "interpolated headers",
			conf:    "topic: 'px.${! meta(\"s\") }'\npriority: '${! meta(\"p\") }'\nttl: '${! meta(\"ttl\") }'\ngroup_sequence: '${! meta(\"seq\") }'\nmessage_id: abc\nreply_to: r",
			payload: "x",
			meta:    map[string]any{"s": "EUR", "p": "9", "ttl": "1500", "seq": "42"},
			check: func(t *testing.T, p *jmsPrepared) {
				assert.Equal(t, "px.EUR", p.destName)
				assert.Equal(t, uint8(9), p.msg.Priority)
				assert.Equal(t, 1500*time.Millisecond, p.msg.TTL)
				assert.Equal(t, uint32(42), *p.msg.GroupSequence)
				assert.Equal(t, "abc", p.msg.MessageID)
				assert.Equal(t, "r", p.replyTo)
				assert.True(t, p.msg.Persistent)
			},
		},
		{
			name:    "defaults",
			conf:    "queue: q\ndelivery_mode: non_persistent",
			payload: "x",
			check: func(t *testing.T, p *jmsPrepared) {
				assert.Equal(t, jms.DefaultPriority, p.msg.Priority)
				assert.Zero(t, p.msg.TTL)
				assert.Regexp(t, "^ID:", p.msg.MessageID, "generated once, kept across retries")
				assert.False(t, p.msg.Persistent)
				assert.Nil(t, p.msg.GroupSequence)
				assert.Nil(t, p.msg.Properties)
				assert.False(t, p.msg.CreationTime.IsZero())
			},
		},
		{
			name:    "metadata filter and conversion",
			conf:    "queue: q\nmetadata:\n  include_prefixes: [ app_ ]",
			payload: "x",
			meta:    map[string]any{"app_n": uint16(7), "app_t": time.UnixMilli(99), "other": "no"},
			check: func(t *testing.T, p *jmsPrepared) {
				assert.Equal(t, map[string]any{"app_n": int32(7), "app_t": int64(99)}, p.msg.Properties)
			},
		},
		{
			name:    "map payload",
			conf:    "queue: q\nmessage_type: map",
			payload: `{"a":1,"b":"x"}`,
			check: func(t *testing.T, p *jmsPrepared) {
				assert.Equal(t, map[string]any{"a": int64(1), "b": "x"}, p.msg.Map)
			},
		},
		{name: "illegal property name", conf: "queue: q\nmetadata:\n  include_patterns: [ '.*' ]", payload: "x", meta: map[string]any{"kafka-key": "k"}, wantErr: "kafka-key"},
		{name: "nested map value", conf: "queue: q\nmessage_type: map", payload: `{"a":{"b":1}}`, wantErr: `map entry "a": a nested object`},
		{name: "map needs JSON", conf: "queue: q\nmessage_type: map", payload: `not json`, wantErr: "JSON object"},
		{name: "bad priority", conf: "queue: q\npriority: '${! meta(\"p\") }'", payload: "x", meta: map[string]any{"p": "high"}, wantErr: "0 to 9"},
		{name: "bad ttl", conf: "queue: q\nttl: soon", payload: "x", wantErr: "ttl must be a duration"},
		{name: "negative ttl", conf: "queue: q\nttl: '-5'", payload: "x", wantErr: "negative"},
		{name: "bad group sequence", conf: "queue: q\ngroup_sequence: '-1'", payload: "x", wantErr: "unsigned 32-bit"},
		{name: "empty destination", conf: "queue: '${! meta(\"missing\").or(\"\") }'", payload: "x", wantErr: "empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := newTestJMSOutput(t, "urls: [ amqp://h ]\n"+tc.conf)
			m := service.NewMessage([]byte(tc.payload))
			for k, v := range tc.meta {
				m.MetaSetMut(k, v)
			}
			p, err := o.prepare(o.newEval(service.MessageBatch{m}), 0)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			tc.check(t, p)
		})
	}
}

func TestJMSOutcomes(t *testing.T) {
	tests := []struct {
		name      string
		state     amqp.DeliveryState
		outcome   string
		condition string
		text      string
	}{
		{"accepted", &amqp.StateAccepted{}, "", "", ""},
		{"rejected with error", &amqp.StateRejected{Error: &amqp.Error{Condition: "amqp:resource-limit-exceeded", Description: "queue full"}}, "rejected", "amqp:resource-limit-exceeded", "broker rejected the message: amqp:resource-limit-exceeded: queue full"},
		{"rejected bare", &amqp.StateRejected{}, "rejected", "rejected", "broker rejected the message"},
		{"released", &amqp.StateReleased{}, "released", "released", "broker released the message"},
		{"modified", &amqp.StateModified{UndeliverableHere: true}, "modified", "modified", "undeliverable here"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := jmsOutcome(tc.state)
			if tc.outcome == "" {
				require.NoError(t, err)
				return
			}
			var oe *jmsOutcomeError
			require.ErrorAs(t, err, &oe)
			assert.Equal(t, tc.outcome, oe.Outcome)
			assert.Equal(t, tc.condition, oe.metricCondition())
			assert.Contains(t, err.Error(), tc.text)
		})
	}
}

func TestJMSBackoff(t *testing.T) {
	r := jmsRetry{initial: 100 * time.Millisecond, max: time.Second}
	for n, want := range []time.Duration{100, 200, 400, 800, 1000, 1000} {
		want *= time.Millisecond
		for range 50 {
			d := r.backoff(n)
			require.GreaterOrEqual(t, d, want/2, "retry %d", n)
			require.LessOrEqual(t, d, want, "retry %d", n)
		}
	}
	assert.Zero(t, jmsRetry{}.backoff(3))
}

func TestJMSWriteWithoutConnection(t *testing.T) {
	o := newTestJMSOutput(t, "urls: [ amqp://127.0.0.1:1 ]\nqueue: q")
	err := o.WriteBatch(t.Context(), service.MessageBatch{service.NewMessage([]byte("x"))})
	assert.ErrorIs(t, err, service.ErrNotConnected)
	require.NoError(t, o.Close(t.Context()))
	// A retry loop still running at shutdown must not dial again.
	assert.ErrorContains(t, o.Connect(t.Context()), "closed")
}

// TestJMSConnectFailover checks every URL is tried and each failure named,
// with credentials redacted.
func TestJMSConnectFailover(t *testing.T) {
	o := newTestJMSOutput(t, "urls: [ 'amqp://u:hunter2@127.0.0.1:1', 'amqp://127.0.0.1:2' ]\nqueue: q")
	err := o.Connect(t.Context())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "127.0.0.1:1")
	assert.Contains(t, err.Error(), "127.0.0.1:2")
	assert.NotContains(t, err.Error(), "hunter2")
}

// TestJMSPasswordFile checks the password file is read at connect, not at
// parse, and that a missing or empty file fails Connect naming the field and
// the path but not the contents.
func TestJMSPasswordFile(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		content string // "-" means no file
		wantErr []string
	}{
		{name: "missing", content: "-", wantErr: []string{"field password_file", "no such file"}},
		{name: "empty", content: "\n", wantErr: []string{"field password_file", "is empty"}},
		// A readable file gets as far as dialing the (closed) port.
		{name: "readable", content: "hunter2\n", wantErr: []string{"127.0.0.1:1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name)
			if tt.content != "-" {
				require.NoError(t, os.WriteFile(path, []byte(tt.content), 0o600))
			}
			o := newTestJMSOutput(t, "urls: [ amqp://127.0.0.1:1 ]\nqueue: q\nusername: u\npassword_file: "+path)
			assert.Empty(t, o.dial.Password, "the file is not read at parse")
			assert.Equal(t, path, o.connConf.PasswordFile)
			err := o.Connect(t.Context())
			require.Error(t, err)
			for _, w := range tt.wantErr {
				assert.Contains(t, err.Error(), w)
			}
			if tt.name != "readable" {
				assert.Contains(t, err.Error(), path)
			}
			assert.NotContains(t, err.Error(), "hunter2")
		})
	}
}
