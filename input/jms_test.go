package input

import (
	"errors"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/jms"
	"github.com/connect-solace/connect-solace/internal/testkit/componenttest"
)

func TestJMSInputConfigErrors(t *testing.T) {
	const conn = "urls: [ amqp://localhost:5672 ]\n"
	tests := []struct {
		name, yaml, want string
	}{
		{"no destination", "", "field queue or topic is required"},
		{"both destinations", "queue: q\ntopic: t\n", "both set"},
		{"subscription on a queue", "queue: q\nsubscription_name: s\ndurable: true\n", "only applies to a topic"},
		{"durable without name", "topic: t\ndurable: true\n", "need subscription_name"},
		{"name without durable or shared", "topic: t\nsubscription_name: s\n", "neither durable nor shared"},
		{"name with delimiter", "topic: t\nsubscription_name: a|b\nshared: true\n", "contains \"|\""},
		{"durable unshared without client id", "topic: t\nsubscription_name: s\ndurable: true\n", "set client_id"},
		{"unsubscribe without durable", "topic: t\nunsubscribe_on_close: true\n", "only applies to a durable subscription"},
		{"prefetch zero", "queue: q\nprefetch: 0\n", "prefetch must be at least 1"},
		{"batch above prefetch", "queue: q\nprefetch: 2\nbatch_size: 3\n", "batch_size must be from 1 to prefetch (2)"},
		{"unknown style", "queue: q\naddress_style: nope\n", "unknown address style"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			conf, err := jmsInputSpec().ParseYAML(conn+tc.yaml, nil)
			if err == nil {
				_, err = newJMSReaderFromParsed(conf, service.MockResources())
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestJMSInputSubscriptionConfig(t *testing.T) {
	const conn = "urls: [ amqp://localhost:5672 ]\ntopic: prices\n"
	tests := []struct {
		name, yaml, link string
		global           bool
	}{
		{"plain topic", "", "", false},
		{"durable", "subscription_name: s\ndurable: true\nclient_id: c\n", "s", false},
		{"shared durable with client id", "subscription_name: s\ndurable: true\nshared: true\nclient_id: c\n", "s", false},
		{"shared durable global", "subscription_name: s\ndurable: true\nshared: true\n", "s|global", true},
		{"shared volatile", "subscription_name: s\nshared: true\nclient_id: c\n", "s|volatile1", false},
		{"shared volatile global", "subscription_name: s\nshared: true\n", "s|global-volatile1", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newTestJMSReader(t, conn+tc.yaml, nil)
			assert.Equal(t, tc.link, r.src.Config.LinkName())
			assert.Equal(t, tc.global, r.src.Config.Global)
		})
	}
}

func TestJMSInputFailedIndexes(t *testing.T) {
	r := &jmsReader{}
	batch := service.MessageBatch{service.NewMessage([]byte("a")), service.NewMessage([]byte("b")), service.NewMessage([]byte("c"))}
	ix := batch.Index()
	assert.Equal(t, []bool{false, false, false}, r.failedIndexes(ix, 3, nil))
	assert.Equal(t, []bool{true, true, true}, r.failedIndexes(ix, 3, errors.New("all")))
	bErr := service.NewBatchError(batch, errors.New("some")).Failed(1, errors.New("b failed"))
	assert.Equal(t, []bool{false, true, false}, r.failedIndexes(ix, 3, bErr))
	// A batch error about a different batch (the pipeline split or
	// replaced the messages) accounts for none of ours: all failed.
	other := service.MessageBatch{service.NewMessage([]byte("x"))}
	assert.Equal(t, []bool{true, true, true}, r.failedIndexes(ix, 3, service.NewBatchError(other, errors.New("x")).Failed(0, errors.New("x"))))
}

func TestJMSInputOutcomeNames(t *testing.T) {
	for o, want := range map[jms.Outcome]string{jms.Accepted: "accepted", jms.Released: "released", jms.Modified: "modified", jms.Rejected: "rejected"} {
		assert.Equal(t, want, o.String())
	}
}

// TestJMSInputLintIsConstructor checks that lint and the constructor refuse a
// config the constructor refuses in the same words (the connection fields'
// rule lives once, in jmscfg).
func TestJMSInputLintIsConstructor(t *testing.T) {
	componenttest.LintIsConstructor(t, componenttest.Input, "jms",
		"urls: [ amqp://127.0.0.1:1 ]\nqueue: q\nusername: u\npassword: p\npassword_file: /run/p",
		func(fields string) error {
			pc, err := jmsInputSpec().ParseYAML(fields, nil)
			require.NoError(t, err)
			_, err = newJMSReaderFromParsed(pc, service.MockResources())
			return err
		})
}
