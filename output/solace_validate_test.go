package output

import (
	"fmt"
	"strings"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/session"
	"github.com/connect-solace/connect-solace/internal/testkit/componenttest"
	"github.com/connect-solace/connect-solace/solacetest"
)

// soStaticCases are static field values with the words their error must
// contain ("" = valid). Lint and the constructor must agree on each.
var soStaticCases = []struct {
	name string
	yaml string
	want []string
}{
	{name: "plain topic", yaml: "topic: a/b"},
	{name: "topic of 250 bytes", yaml: "topic: " + strings.Repeat("t", 250)},
	{name: "topic of 303 bytes", yaml: "topic: " + strings.Repeat("t", 303), want: []string{"field topic", "303 bytes", "maximum is 250"}},
	{name: "topic with NUL", yaml: `topic: "a/b\u0000c"`, want: []string{"field topic", "NUL"}},
	{name: "topic of 129 levels", yaml: "topic: " + strings.Repeat("/", 128), want: []string{"field topic", "129 levels", "maximum is 128"}},
	{name: "queue", yaml: "queue: orders/eu"},
	{name: "queue with star", yaml: "queue: ord*ers", want: []string{"field queue", `'*'`}},
	{name: "queue of 201 bytes", yaml: "queue: " + strings.Repeat("q", 201), want: []string{"field queue", "maximum is 200"}},
	{name: "queue empty level", yaml: "queue: a//b", want: []string{"field queue", "empty level"}},
	{name: "queue as topic", yaml: "queue: a*b\ndestination_type: topic"},
	{name: "priority 0", yaml: "topic: a\npriority: 0"},
	{name: "priority 255", yaml: "topic: a\npriority: 255"},
	{name: "priority 300", yaml: "topic: a\npriority: 300", want: []string{"field priority", "0 to 255"}},
	{name: "priority -1", yaml: "topic: a\npriority: -1", want: []string{"field priority", "0 to 255"}},
	{name: "priority word", yaml: "topic: a\npriority: high", want: []string{"field priority", "0 to 255"}},
	{name: "class_of_service 2", yaml: "topic: a\nclass_of_service: 2"},
	{name: "class_of_service 3", yaml: "topic: a\nclass_of_service: 3", want: []string{"field class_of_service", "0 to 2"}},
	{name: "ttl 30s", yaml: "topic: a\nttl: 30s"},
	{name: "ttl 0", yaml: "topic: a\nttl: 0"},
	{name: "ttl -5s", yaml: "topic: a\nttl: -5s", want: []string{"field ttl", "negative", "0 or more"}},
	{name: "ttl -5000", yaml: "topic: a\nttl: -5000", want: []string{"field ttl", "negative"}},
	{name: "ttl soon", yaml: "topic: a\nttl: soon", want: []string{"field ttl", "neither a duration nor milliseconds"}},
	{name: "dmq_eligible maybe", yaml: "topic: a\ndmq_eligible: maybe", want: []string{"field dmq_eligible", "true or false"}},
	{name: "destination_type bad", yaml: "topic: a\ndestination_type: tube", want: []string{"field destination_type", "neither topic nor queue"}},
	{name: "dynamic priority", yaml: "topic: a\npriority: ${! meta(\"p\") }"},
	{name: "dynamic topic", yaml: "topic: ${! meta(\"t\") }"},
}

// TestSolaceOutputStaticValues: lint (connect-solace lint, which runs no
// constructor) and the constructor reject the same static values, each
// naming the field and the allowed range.
func TestSolaceOutputStaticValues(t *testing.T) {
	conn := "urls: [ tcp://127.0.0.1:1 ]\nusername: u\n"
	check := func(t *testing.T, err error, want []string) {
		t.Helper()
		if want == nil {
			require.NoError(t, err)
			return
		}
		require.Error(t, err)
		for _, w := range want {
			assert.Contains(t, err.Error(), w)
		}
	}
	for _, tc := range soStaticCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Run("lint", func(t *testing.T) {
				check(t, componenttest.Lint(componenttest.Output, "solace", conn+tc.yaml), tc.want)
			})
			t.Run("constructor", func(t *testing.T) {
				pc, err := solaceOutputSpec().ParseYAML(conn+tc.yaml, nil)
				require.NoError(t, err)
				_, err = newSolaceWriterFromParsed(pc, service.MockResources())
				check(t, err, tc.want)
			})
		})
	}
}

// TestSolaceOutputDynamicValues fails exactly the messages whose interpolated
// values are invalid, with the reason, and publishes the rest; a NUL byte in
// a topic must not reach the broker as the truncated topic.
func TestSolaceOutputDynamicValues(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	require.NoError(t, b.CreateQueue("default", solacetest.QueueConfig{Name: "dyn", Subscriptions: []string{"dyn/>"}}))
	for _, writer := range []string{soWriterBatched, soWriterStreaming} {
		t.Run(writer, func(t *testing.T) {
			w := newSoWriter(t, b, "writer: "+writer+"\ntopic: ${! meta(\"t\").or(\"\") }\npriority: ${! meta(\"p\").or(\"\") }\nttl: ${! meta(\"ttl\").or(\"\") }\nclients: 1\n")
			cases := []struct {
				topic, prio, ttl string
				want             []string // "" = published
			}{
				{topic: "dyn/" + writer + "/ok"},
				{topic: "dyn/" + writer + "/nul\x00tail", want: []string{"field topic", "NUL"}},
				{topic: "dyn/" + strings.Repeat("x", 300), want: []string{"field topic", "maximum is 250"}},
				{topic: "dyn/ok", prio: "300", want: []string{"field priority", "0 to 255"}},
				{topic: "dyn/ok", ttl: "-5s", want: []string{"field ttl", "negative"}},
				{topic: "", want: []string{"field topic", "empty"}},
			}
			batch := make(service.MessageBatch, len(cases))
			for i, c := range cases {
				batch[i] = service.NewMessage([]byte(writer + "-" + c.topic))
				batch[i].MetaSetMut("t", c.topic)
				if c.prio != "" {
					batch[i].MetaSetMut("p", c.prio)
				}
				if c.ttl != "" {
					batch[i].MetaSetMut("ttl", c.ttl)
				}
			}
			got := map[int]string{}
			if writer == soWriterBatched {
				got = writeFailures(t, w, batch)
			} else {
				for i := range batch {
					if cases[i].want == nil {
						require.NoError(t, w.WriteBatch(t.Context(), batch[i:i+1]))
						continue
					}
					got[i] = writeFailures(t, w, batch[i:i+1])[0]
				}
			}
			for i, c := range cases {
				if c.want == nil {
					assert.NotContains(t, got, i)
					continue
				}
				for _, s := range c.want {
					assert.Contains(t, got[i], s, "message %d", i)
				}
			}
			assert.Zero(t, b.PublishedCount("dyn/"+writer+"/nul"), "the truncated topic got a message")
		})
	}
	assert.Equal(t, []string{"batched-dyn/batched/ok", "streaming-dyn/streaming/ok"}, solacetest.QueuePayloads(t, b, "default", "dyn"))
}

// TestSolaceOutputFailureReport: the batch error text (which Benthos logs)
// names the destination and the broker's reason; the metric label is the
// subcode's name.
func TestSolaceOutputFailureReport(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	require.NoError(t, b.CreateQueue("default", solacetest.QueueConfig{Name: "rep"}))
	w := newSoWriter(t, b, "queue: rep\nclients: 1\n")
	require.NoError(t, w.WriteBatch(t.Context(), soBatch([]string{"warm"}, nil)))
	b.Faults().NackNextPublishes(1, "Spool Over Quota")
	err := w.WriteBatch(t.Context(), soBatch([]string{"x", "y"}, nil))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `queue "rep"`)
	assert.Contains(t, err.Error(), "Spool Over Quota")
	assert.Contains(t, err.Error(), "1 of 2")

	reason, _ := soClassify(session.Destination{Name: "rep", Queue: true}, &session.RejectError{Reason: "Spool Over Quota: free text 42", SubCode: 0})
	assert.Equal(t, "rejected", reason)
	assert.Equal(t, "max_clients_for_queue", (&session.RejectError{SubCode: 63}).Label())
	assert.Equal(t, "rejected", (&session.RejectError{SubCode: 99999}).Label())
	reason, _ = soClassify(session.Destination{Name: "rep", Queue: true}, fmt.Errorf("%w: eof", session.ErrConnectionLost))
	assert.Equal(t, "connection_lost", reason)
}

// FuzzSolaceOutputFieldRules: no value of any field panics the rules, and a
// destination that passes validation is one the client sends unchanged.
func FuzzSolaceOutputFieldRules(f *testing.F) {
	for _, s := range []string{"", "a/b", "300", "-5s", "a\x00b", "\xff", strings.Repeat("a/", 200), "true", "queue", "1h", "9999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		for _, r := range soRules {
			var o session.Outbound
			_ = soApply(&o, r.Name, v)
			_ = soLintStatic(r.Name, v)
		}
		for _, queue := range []bool{false, true} {
			d := session.Destination{Name: v, Queue: queue}
			if d.Validate() == nil {
				require.NotContains(t, v, "\x00")
				require.NotEmpty(t, v)
				require.LessOrEqual(t, len(d.Topic()), session.MaxTopicBytes)
			}
		}
	})
}
