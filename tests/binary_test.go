package tests

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// run executes the shared binary and returns its combined output.
func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), binPath(t), args...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestVersionNamesTheProduct(t *testing.T) {
	out, err := run(t, "--version")
	require.NoError(t, err, out)
	require.Contains(t, out, "connect-solace "+testVersion)
	require.Contains(t, out, "Version: "+testVersion)
}

func TestListShowsComponents(t *testing.T) {
	out, err := run(t, "list", "inputs", "outputs", "processors")
	require.NoError(t, err, out)
	for _, want := range []string{"Inputs:", "Outputs:", "generate", "stdout"} {
		require.Contains(t, out, want)
	}
	for _, plugin := range ourPlugins(t) {
		require.Contains(t, out, "  - "+plugin+"\n", "plugin %q missing from list", plugin)
	}
}

// ourPlugins returns the plugins this project registers that exist so far,
// read from the source tree so the test grows with the project.
func ourPlugins(t *testing.T) []string {
	t.Helper()
	var names []string
	for _, f := range []struct{ file, name string }{
		{"../input/solace.go", "solace"},
		{"../input/jms.go", "jms"},
		{"../output/solace.go", "solace"},
		{"../output/jms.go", "jms"},
		{"../processor/solace_request_reply.go", "solace_request_reply"},
	} {
		if ok, _ := filepath.Glob(f.file); len(ok) > 0 {
			names = append(names, f.name)
		}
	}
	return names
}

func TestExamplesLint(t *testing.T) {
	examples, err := filepath.Glob("../config/examples/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, examples, "config/examples must hold at least one example")
	for _, ex := range examples {
		t.Run(filepath.Base(ex), func(t *testing.T) {
			out, err := run(t, "lint", ex)
			require.NoError(t, err, "connect-solace lint %s:\n%s", ex, out)
		})
	}
}

func TestLintRejectsBrokenConfig(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, writeFile(bad, "input:\n  generate:\n    mapping: 'root = '\n    nope: 1\noutput:\n  stdout: {}\n"))
	out, err := run(t, "lint", bad)
	require.Error(t, err, "lint must fail on a broken config")
	require.True(t, strings.Contains(out, "nope") || strings.Contains(out, "mapping"), out)
	var exitErr *exec.ExitError
	require.ErrorAs(t, err, &exitErr)
}

// TestGCFloorBeforeRegistrations checks that the binary's garbage-collector
// floor is installed before the component registrations run (Benthos's and
// ours build their config specs in init functions, tens of MiB of garbage
// that the runtime's default would collect about ten times), and that no
// collection ran before it.
func TestGCFloorBeforeRegistrations(t *testing.T) {
	cmd := exec.CommandContext(t.Context(), binPath(t), "--version")
	cmd.Env = append(cmd.Environ(), "GODEBUG=inittrace=1,gctrace=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	lines := strings.Split(string(out), "\n")
	at := func(prefix string) int {
		for i, l := range lines {
			if strings.HasPrefix(l, prefix) {
				return i
			}
		}
		return -1
	}
	floor := at("init github.com/connect-solace/connect-solace/internal/gcfloor/atinit ")
	require.GreaterOrEqual(t, floor, 0, "no init line for the floor:\n%s", out)
	for _, pkg := range []string{
		"github.com/redpanda-data/benthos/v4/internal/impl/pure",
		"github.com/redpanda-data/benthos/v4/internal/impl/io",
		"github.com/connect-solace/connect-solace/input",
		"github.com/connect-solace/connect-solace/output",
	} {
		i := at("init " + pkg + " ")
		require.Greater(t, i, floor, "%s initialised before the floor (or not traced):\n%s", pkg, out)
	}
	if gc := at("gc 1 "); gc >= 0 {
		require.Greater(t, gc, floor, "a collection ran before the floor:\n%s", out)
	}
}
