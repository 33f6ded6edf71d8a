package output

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/amqpwire/amqpwiretest"
	"github.com/connect-solace/connect-solace/internal/jms"
	"github.com/connect-solace/connect-solace/internal/testkit/componenttest"
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
		{"password and password_file", "queue: q\nusername: u\npassword: secret\npassword_file: /run/p", "fields password and password_file: both are set; keep one"},
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
		{"static negative ttl", "urls: [ amqp://h ]\nqueue: q\nttl: '-5000'", "field ttl: ttl cannot be negative"},
		{"static negative ttl duration", "urls: [ amqp://h ]\nqueue: q\nttl: -5s", "field ttl: ttl cannot be negative"},
		{"static bad ttl", "urls: [ amqp://h ]\nqueue: q\nttl: soon", "field ttl: ttl must be a duration"},
		{"static bad group sequence", "urls: [ amqp://h ]\nqueue: q\ngroup_sequence: '-1'", "field group_sequence"},
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
	assert.Equal(t, []string{"amqp://a:1", "amqp://b:2", "amqps://c"}, o.connConf.Dial.URLs)
}

// TestJMSPrepare checks the per-message view built from interpolations,
// without a broker.
func TestJMSPrepare(t *testing.T) {
	tests := []struct {
		name    string
		conf    string
		payload string
		meta    map[string]any
		check   func(t *testing.T, p *jms.Outgoing)
		wantErr string
	}{
		{
			name:    "interpolated headers",
			conf:    "topic: 'px.${! meta(\"s\") }'\npriority: '${! meta(\"p\") }'\nttl: '${! meta(\"ttl\") }'\ngroup_sequence: '${! meta(\"seq\") }'\nmessage_id: abc\nreply_to: r",
			payload: "x",
			meta:    map[string]any{"s": "EUR", "p": "9", "ttl": "1500", "seq": "42"},
			check: func(t *testing.T, p *jms.Outgoing) {
				assert.Equal(t, "px.EUR", p.DestName)
				assert.Equal(t, uint8(9), p.Priority)
				assert.Equal(t, 1500*time.Millisecond, p.TTL)
				assert.Equal(t, uint32(42), *p.GroupSequence)
				assert.Equal(t, "abc", p.MessageID)
				assert.Equal(t, "r", p.ReplyToName)
				assert.True(t, p.Persistent)
			},
		},
		{
			name:    "defaults",
			conf:    "queue: q\ndelivery_mode: non_persistent",
			payload: "x",
			check: func(t *testing.T, p *jms.Outgoing) {
				assert.Equal(t, jms.DefaultPriority, p.Priority)
				assert.Zero(t, p.TTL)
				assert.Regexp(t, "^ID:", p.MessageID, "generated once, kept across retries")
				assert.False(t, p.Persistent)
				assert.Nil(t, p.GroupSequence)
				assert.Nil(t, p.Properties)
				assert.False(t, p.CreationTime.IsZero())
			},
		},
		{
			name:    "metadata filter and conversion",
			conf:    "queue: q\nmetadata:\n  include_prefixes: [ app_ ]",
			payload: "x",
			meta:    map[string]any{"app_n": uint16(7), "app_t": time.UnixMilli(99), "other": "no"},
			check: func(t *testing.T, p *jms.Outgoing) {
				assert.Equal(t, map[string]any{"app_n": int32(7), "app_t": int64(99)}, p.Properties)
			},
		},
		{
			name:    "map payload",
			conf:    "queue: q\nmessage_type: map",
			payload: `{"a":1,"b":"x"}`,
			check: func(t *testing.T, p *jms.Outgoing) {
				assert.Equal(t, map[string]any{"a": int64(1), "b": "x"}, p.Map)
			},
		},
		{name: "illegal property name", conf: "queue: q\nmetadata:\n  include_patterns: [ '.*' ]", payload: "x", meta: map[string]any{"kafka-key": "k"}, wantErr: "kafka-key"},
		{name: "nested map value", conf: "queue: q\nmessage_type: map", payload: `{"a":{"b":1}}`, wantErr: `map entry "a": a nested object`},
		{name: "map needs JSON", conf: "queue: q\nmessage_type: map", payload: `not json`, wantErr: "JSON object"},
		{name: "bad priority", conf: "queue: q\npriority: '${! meta(\"p\") }'", payload: "x", meta: map[string]any{"p": "high"}, wantErr: "0 to 9"},
		{name: "dynamic bad ttl", conf: "queue: q\nttl: '${! meta(\"ttl\") }'", payload: "x", meta: map[string]any{"ttl": "soon"}, wantErr: "field ttl: ttl must be a duration"},
		{name: "dynamic negative ttl", conf: "queue: q\nttl: '${! meta(\"ttl\") }'", payload: "x", meta: map[string]any{"ttl": "-5000"}, wantErr: "field ttl: ttl cannot be negative"},
		{name: "dynamic bad group sequence", conf: "queue: q\ngroup_sequence: '${! meta(\"g\") }'", payload: "x", meta: map[string]any{"g": "-1"}, wantErr: "unsigned 32-bit"},
		{name: "invalid UTF-8 property value", conf: "queue: q\nmetadata:\n  include_prefixes: [ app_ ]", payload: "x", meta: map[string]any{"app_bad": "a\xffb"}, wantErr: `JMS property "app_bad": value is not valid UTF-8`},
		{name: "empty destination", conf: "queue: '${! meta(\"missing\").or(\"\") }'", payload: "x", wantErr: "empty"},
		{name: "missing destination metadata", conf: "topic: '${! meta(\"missing\") }'", payload: "x", wantErr: "field topic: evaluated empty"},
		{name: "empty destination metadata", conf: "queue: '${! @d }'", payload: "x", meta: map[string]any{"d": ""}, wantErr: "field queue: evaluated empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := newTestJMSOutput(t, "urls: [ amqp://h ]\n"+tc.conf)
			m := service.NewMessage([]byte(tc.payload))
			for k, v := range tc.meta {
				m.MetaSetMut(k, v)
			}
			batch := service.MessageBatch{m}
			p := new(jms.Outgoing)
			ev := o.fields.Batch(batch)
			err := o.prepare(p, batch, &ev, 0)
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
			assert.Empty(t, o.connConf.Dial.Password, "the file is not read at parse")
			assert.NotNil(t, o.connConf.Password, "read at connect")
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

// current returns the connection and its addresser, nil when disconnected.
func (o *jmsOutput) current() (*jms.Conn, jms.Addresser) {
	if s := o.sender.Load(); s != nil {
		return s.Conn(), s.Addresser()
	}
	return nil, jms.Addresser{}
}

// TestJMSWriteBatchAgainstPeer drives WriteBatch against the in-process AMQP
// peer: a message whose metadata value is not UTF-8 fails alone, naming the
// key, with no reconnect and no duplicate of the good ones (issue 11 finding
// 2); a dynamic negative ttl fails its message with the reason; and a
// dropped connection makes WriteBatch report ErrNotConnected so Benthos
// reconnects, without the output dialing itself.
func TestJMSWriteBatchAgainstPeer(t *testing.T) {
	var drop atomic.Bool
	p := amqpwiretest.New(t, func(p *amqpwiretest.Peer) {
		p.Decide = func(amqpwiretest.Delivery, int) amqpwiretest.Action {
			if drop.Load() {
				return amqpwiretest.DropConn
			}
			return amqpwiretest.Accept
		}
	})
	o := newTestJMSOutput(t, "urls: [ "+p.URL+" ]\nqueue: q\nttl: '${! meta(\"ttl\").or(\"\") }'\nmetadata:\n  include_prefixes: [ app_ ]\n")
	require.NoError(t, o.Connect(t.Context()))
	t.Cleanup(func() { _ = o.Close(t.Context()) })

	batch := service.MessageBatch{service.NewMessage([]byte("a")), service.NewMessage([]byte("b")), service.NewMessage([]byte("c")), service.NewMessage([]byte("d"))}
	batch[1].MetaSetMut("app_name", "bad\xff")
	batch[2].MetaSetMut("ttl", "-5000")
	ix := batch.Index()
	err := o.WriteBatch(t.Context(), batch)
	var bErr *service.BatchError
	require.ErrorAs(t, err, &bErr)
	assert.Equal(t, 2, bErr.IndexedErrors())
	for i, want := range map[int]string{1: `JMS property "app_name": value is not valid UTF-8`, 2: "field ttl: ttl cannot be negative"} {
		ierr := indexFailed(ix, bErr, i)
		require.Error(t, ierr, "message %d", i)
		assert.Contains(t, ierr.Error(), want)
	}
	assert.Equal(t, []string{"a", "d"}, p.Bodies(), "good messages sent once")
	assert.Equal(t, 1, p.Connections(), "no reconnect")

	drop.Store(true)
	err = o.WriteBatch(t.Context(), service.MessageBatch{service.NewMessage([]byte("e"))})
	require.ErrorIs(t, err, service.ErrNotConnected)
	assert.ErrorIs(t, o.WriteBatch(t.Context(), batch), service.ErrNotConnected, "no dial inside WriteBatch")
	assert.Equal(t, 1, p.Connections())

	drop.Store(false)
	require.NoError(t, o.Connect(t.Context()))
	writeOK(t, o, service.MessageBatch{service.NewMessage([]byte("f"))})
	assert.Equal(t, 2, p.Connections())
}

// TestJMSOrdered checks ordered mode sends one batch at a time, whatever
// max_in_flight says.
func TestJMSOrdered(t *testing.T) {
	spec := jmsOutputSpec()
	for _, tc := range []struct {
		conf    string
		ordered bool
		want    int
	}{
		{"ordered: true\nmax_in_flight: 8", true, 1},
		{"max_in_flight: 8", false, 8},
	} {
		conf, err := spec.ParseYAML("urls: [ amqp://h ]\nqueue: q\n"+tc.conf, nil)
		require.NoError(t, err)
		o, err := newJMSOutputFromParsed(conf, service.MockResources())
		require.NoError(t, err)
		assert.Equal(t, tc.ordered, o.sendConf.Ordered)
		mif, err := conf.FieldMaxInFlight()
		require.NoError(t, err)
		assert.Equal(t, tc.want, jmsMaxInFlight(o, mif))
	}
}

// TestJMSLintIsConstructor checks that lint and the constructor refuse a
// config the constructor refuses in the same words: the destination rule and
// the connection fields' rule each live once.
func TestJMSLintIsConstructor(t *testing.T) {
	for _, fields := range []string{
		"urls: [ amqp://127.0.0.1:1 ]\nqueue: q\nusername: u\npassword: p\npassword_file: /run/p",
		"urls: [ amqp://127.0.0.1:1 ]\nqueue: q\ntopic: t",
		"urls: [ amqp://127.0.0.1:1 ]",
	} {
		t.Run(fields, func(t *testing.T) {
			componenttest.LintIsConstructor(t, componenttest.Output, "jms", fields, func(fields string) error {
				pc, err := jmsOutputSpec().ParseYAML(fields, nil)
				require.NoError(t, err)
				_, err = newJMSOutputFromParsed(pc, service.MockResources())
				return err
			})
		})
	}
}
