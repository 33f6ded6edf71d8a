package plugins_test

import (
	"slices"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/plugins"
)

func TestRegisterAddsEveryComponent(t *testing.T) {
	env := service.NewEmptyEnvironment()
	require.NoError(t, plugins.Register(env))
	names := func(walk func(func(string, *service.ConfigView))) []string {
		var ns []string
		walk(func(n string, _ *service.ConfigView) { ns = append(ns, n) })
		slices.Sort(ns)
		return ns
	}
	require.Equal(t, []string{"jms", "solace"}, names(env.WalkInputs))
	require.Equal(t, []string{"jms", "solace"}, names(env.WalkOutputs))
	require.Equal(t, []string{"solace_request_reply"}, names(env.WalkProcessors))
}
