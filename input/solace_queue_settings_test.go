package input

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/semp"
	"github.com/connect-solace/connect-solace/internal/semp/sempwire"
	"github.com/connect-solace/connect-solace/internal/testkit/componenttest"
	"github.com/connect-solace/connect-solace/internal/testkit/solacekit"
	"github.com/connect-solace/connect-solace/solacetest"
)

const siAllQueueSettings = `queue_settings:
  access_type: exclusive
  max_redelivery_count: 4
  dead_message_queue: dmq
  max_spool_usage_mb: 300
  respect_ttl: true
  max_ttl: 90s
`

// Every setting is applied when the input creates the queue, and reads
// back over SEMP. (The test broker models no maxTtl and refuses any but its
// default, 0; TestSolaceInputQueueSettingsSEMPBody shows 90s sent as 90.)
func TestSolaceInputQueueSettingsOnCreate(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	newSiReader(t, b, "topic: qs/>\nqueue_name: qs\n"+siSEMPYAML(b)+strings.Replace(siAllQueueSettings, "max_ttl: 90s", "max_ttl: 0s", 1))
	q, err := sempClient(t, b).GetQueue(t.Context(), "default", "qs")
	require.NoError(t, err)
	assert.Equal(t, semp.AccessTypeExclusive, q.AccessType)
	assert.Equal(t, int64(4), *q.MaxRedeliveryCount)
	assert.Equal(t, "dmq", q.DeadMsgQueue)
	assert.Equal(t, int64(300), *q.MaxMsgSpoolUsage)
	assert.True(t, *q.RespectTTLEnabled)
	assert.Equal(t, int64(0), *q.MaxTTL)

	// Partitions need a non-exclusive queue.
	newSiReader(t, b, "topic: qp/>\nqueue_name: qp\n"+siSEMPYAML(b)+"queue_settings: { partition_count: 3 }\n")
	q, err = sempClient(t, b).GetQueue(t.Context(), "default", "qp")
	require.NoError(t, err)
	assert.Equal(t, semp.AccessTypeNonExclusive, q.AccessType)
	require.NotNil(t, q.PartitionCount)
	assert.Equal(t, int32(3), *q.PartitionCount)
}

// The create body holds only MsgVpnQueue attributes of the config API, with
// their JSON types (sempwire.ConfigQueue is checked against the OpenAPI spec
// by solacetest; TestQueueAttributesAreMsgVpnQueues keeps semp.Queue within
// it), and every setting under its SEMP name.
func TestSolaceInputQueueSettingsSEMPBody(t *testing.T) {
	pc, err := siSpec().ParseYAML(solacekit.ConnectionYAML("tcp://127.0.0.1:1")+"topic: a\nsemp: { url: http://127.0.0.1:1 }\n"+siAllQueueSettings, nil)
	require.NoError(t, err)
	f, err := siFieldsFromParsed(pc)
	require.NoError(t, err)
	body, err := json.Marshal(f.qs.sempQueue("q"))
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal(body, &got))
	attrs := map[string]bool{}
	ft := reflect.TypeFor[sempwire.ConfigQueue]()
	for i := range ft.NumField() {
		name, _, _ := strings.Cut(ft.Field(i).Tag.Get("json"), ",")
		attrs[name] = true
	}
	for k := range got {
		assert.True(t, attrs[k], "%s is not a MsgVpnQueue attribute", k)
	}
	assert.Equal(t, map[string]any{
		"queueName": "q", "accessType": "exclusive", "permission": "consume", "ingressEnabled": true, "egressEnabled": true,
		"maxRedeliveryCount": float64(4), "deadMsgQueue": "dmq", "maxMsgSpoolUsage": float64(300),
		"respectTtlEnabled": true, "maxTtl": float64(90),
	}, got)
}

// siLogs is a logger whose warnings a test reads.
type siLogs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *siLogs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *siLogs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// An existing queue with other settings is consumed as it is, with one
// warning naming each differing setting; with on_mismatch: fail the input
// refuses to start, naming them.
func TestSolaceInputQueueSettingsExistingQueue(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	createQueueSEMP(t, b, semp.Queue{QueueName: "old", AccessType: semp.AccessTypeNonExclusive, MaxRedeliveryCount: semp.Int64(2)})
	settings := "topic: old/>\nqueue_name: old\n" + siSEMPYAML(b) + "queue_settings:\n  access_type: exclusive\n  max_redelivery_count: 4\n  max_spool_usage_mb: 5000\n"

	logs := &siLogs{}
	res := service.MockResources(service.MockResourcesOptUseLogger(service.NewLoggerFromSlog(slog.New(slog.NewTextHandler(logs, nil)))))
	r := newSiReaderWith(t, b, res, settings)
	warns := strings.Count(logs.String(), "differ from queue_settings")
	require.Equal(t, 1, warns, logs.String())
	assert.Contains(t, logs.String(), "access_type: non_exclusive (wanted exclusive)")
	assert.Contains(t, logs.String(), "max_redelivery_count: 2 (wanted 4)")
	assert.NotContains(t, logs.String(), "max_spool_usage_mb", "a setting the queue has is not named")
	q, err := sempClient(t, b).GetQueue(t.Context(), "default", "old")
	require.NoError(t, err)
	assert.Equal(t, semp.AccessTypeNonExclusive, q.AccessType, "the queue is not changed")
	assert.Equal(t, int64(2), *q.MaxRedeliveryCount)
	// A reconnect does not warn again.
	require.NoError(t, r.Close(t.Context()))
	componenttest.Connect(t, r)
	require.Equal(t, 1, strings.Count(logs.String(), "differ from queue_settings"))

	pc, err := siSpec().ParseYAML(solacekit.ConnectionYAML(b.SMFURL())+settings+"  on_mismatch: fail\n", nil)
	require.NoError(t, err)
	fr, err := newSolaceReaderFromParsed(pc, service.MockResources())
	require.NoError(t, err)
	err = fr.Connect(t.Context())
	require.ErrorIs(t, err, errQueueMismatch)
	assert.ErrorContains(t, err, "access_type: non_exclusive (wanted exclusive), max_redelivery_count: 2 (wanted 4)")
}

func TestSolaceInputQueueSettingsLint(t *testing.T) {
	conn := "urls: [ tcp://127.0.0.1:55555 ]\nusername: u\n"
	topic := "topic: a/>\nsemp: { url: http://h:8080 }\n"
	tests := []struct{ name, yaml, want string }{
		{"all", topic + siAllQueueSettings, ""},
		{"with queue", "queue: q\nqueue_settings: { respect_ttl: true }", "field queue_settings: only used with topic"},
		{"negative", topic + "queue_settings: { max_spool_usage_mb: -1 }", "field queue_settings.max_spool_usage_mb: must be 0 or more"},
		{"partitions on exclusive", topic + "queue_settings: { access_type: exclusive, partition_count: 2 }", "field queue_settings.partition_count: only a non-exclusive"},
		{"fractional ttl", topic + "queue_settings: { max_ttl: 1500ms }", "field queue_settings.max_ttl: must be whole seconds"},
		{"bad access", topic + "queue_settings: { access_type: shared }", "shared"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			componenttest.LintWants(t, componenttest.Input, "solace", conn+tc.yaml, tc.want)
		})
	}
}
