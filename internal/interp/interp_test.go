package interp

import (
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFields(t *testing.T) {
	spec := service.NewConfigSpec().Fields(
		service.NewInterpolatedStringField("static"),
		service.NewInterpolatedStringField("dynamic"),
		service.NewInterpolatedStringField("empty").Default(""),
		service.NewInterpolatedStringField("absent").Optional(),
		service.NewInterpolatedStringField("bad"),
	)
	conf, err := spec.ParseYAML(`
static: q1
dynamic: 'q-${! meta("n") }'
bad: '${! throw("no") }'
`, nil)
	require.NoError(t, err)

	static, err := Required(conf, "static")
	require.NoError(t, err)
	v, ok := static.Static()
	assert.True(t, ok)
	assert.Equal(t, "q1", v)

	for _, name := range []string{"empty", "absent"} {
		f, err := Optional(conf, name)
		require.NoError(t, err)
		assert.Nil(t, f, name)
	}

	dyn, err := Optional(conf, "dynamic")
	require.NoError(t, err)
	_, ok = dyn.Static()
	assert.False(t, ok)
	bad, err := Required(conf, "bad")
	require.NoError(t, err)

	batch := service.MessageBatch{service.NewMessage(nil), service.NewMessage(nil)}
	batch[0].MetaSetMut("n", "a")
	batch[1].MetaSetMut("n", "b")
	ev := NewBatch(batch)
	for i, want := range []string{"q-a", "q-b"} {
		got, err := ev.String(dyn, i)
		require.NoError(t, err)
		assert.Equal(t, want, got)
		got, err = ev.String(static, i)
		require.NoError(t, err)
		assert.Equal(t, "q1", got)
	}
	_, err = ev.String(bad, 0)
	require.ErrorContains(t, err, "interpolating bad")
}
