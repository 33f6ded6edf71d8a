package input

import (
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/testkit/componenttest"
)

func TestRegisterIntoEmptyEnvironment(t *testing.T) {
	const conf = "solace:\n  urls: [ tcp://127.0.0.1:55555 ]\n  username: u\n  queue: q\n"

	bare := service.NewEmptyEnvironment()
	require.Error(t, bare.NewStreamBuilder().AddInputYAML(conf), "an empty environment must not know the solace input")

	env := service.NewEmptyEnvironment()
	require.NoError(t, Register(env))
	var names []string
	env.WalkInputs(func(name string, _ *service.ConfigView) { names = append(names, name) })
	require.Contains(t, names, "solace") // completeness: TestRegisterCoversEveryComponent
	require.NoError(t, env.NewStreamBuilder().AddInputYAML(conf), "the config parses and lints in the custom environment")
	require.ErrorContains(t, env.NewStreamBuilder().AddInputYAML("solace:\n  username: u\n  queue: q\n"),
		"at least one broker url", "lint rules run in the custom environment")
}

// TestImportDefinesNoFlags checks that importing the package adds nothing
// to the process-wide flag set (only the testing package's own flags).
func TestImportDefinesNoFlags(t *testing.T) { componenttest.NoImportFlags(t) }

// TestRegisterCoversEveryComponent checks that Register adds every input this
// package's source registers, so a component added later (registered in its
// file's init) cannot be left out of Register.
func TestRegisterCoversEveryComponent(t *testing.T) {
	componenttest.RegisterCoversSource(t, componenttest.Input, Register)
}
