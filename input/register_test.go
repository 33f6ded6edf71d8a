package input

import (
	"flag"
	"strings"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/require"
)

func TestRegisterIntoEmptyEnvironment(t *testing.T) {
	const conf = "solace:\n  urls: [ tcp://127.0.0.1:55555 ]\n  username: u\n  queue: q\n"

	bare := service.NewEmptyEnvironment()
	require.Error(t, bare.NewStreamBuilder().AddInputYAML(conf), "an empty environment must not know the solace input")

	env := service.NewEmptyEnvironment()
	require.NoError(t, Register(env))
	var names []string
	env.WalkInputs(func(name string, _ *service.ConfigView) { names = append(names, name) })
	require.Equal(t, []string{"solace"}, names)
	require.NoError(t, env.NewStreamBuilder().AddInputYAML(conf), "the config parses and lints in the custom environment")
	require.ErrorContains(t, env.NewStreamBuilder().AddInputYAML("solace:\n  username: u\n  queue: q\n"),
		"at least one broker url", "lint rules run in the custom environment")
}

// TestImportDefinesNoFlags checks that importing the package adds nothing
// to the process-wide flag set (only the testing package's own flags).
func TestImportDefinesNoFlags(t *testing.T) {
	flag.VisitAll(func(f *flag.Flag) {
		require.True(t, strings.HasPrefix(f.Name, "test."), "flag -%s defined by an import", f.Name)
	})
}
