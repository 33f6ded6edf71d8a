package input

import (
	"context"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/require"
)

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
