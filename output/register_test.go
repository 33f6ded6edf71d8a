package output

import (
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/testkit/componenttest"
)

func TestRegisterIntoEmptyEnvironment(t *testing.T) {
	configs := map[string]string{
		"solace": "solace:\n  urls: [ tcp://127.0.0.1:55555 ]\n  username: u\n  topic: a/b\n",
		"jms":    "jms:\n  urls: [ amqp://127.0.0.1:5672 ]\n  queue: q\n",
	}
	bare := service.NewEmptyEnvironment()
	for name, conf := range configs {
		require.Error(t, bare.NewStreamBuilder().AddOutputYAML(conf), "an empty environment must not know the %s output", name)
	}

	env := service.NewEmptyEnvironment()
	require.NoError(t, Register(env))
	var names []string
	env.WalkOutputs(func(name string, _ *service.ConfigView) { names = append(names, name) })
	require.Subset(t, names, []string{"jms", "solace"}) // completeness: TestRegisterCoversEveryComponent
	for name, conf := range configs {
		require.NoError(t, env.NewStreamBuilder().AddOutputYAML(conf), "%s parses and lints in the custom environment", name)
	}
	require.ErrorContains(t, env.NewStreamBuilder().AddOutputYAML("solace:\n  username: u\n  topic: a/b\n"),
		"at least one broker url", "lint rules run in the custom environment")
}

// TestImportDefinesNoFlags checks that importing the package adds nothing
// to the process-wide flag set (only the testing package's own flags).
func TestImportDefinesNoFlags(t *testing.T) { componenttest.NoImportFlags(t) }

// TestRegisterCoversEveryComponent checks that Register adds every output this
// package's source registers, so a component added later (registered in its
// file's init) cannot be left out of Register.
func TestRegisterCoversEveryComponent(t *testing.T) {
	componenttest.RegisterCoversSource(t, componenttest.Output, Register)
}
