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
	out, err := run(t, "list", "inputs", "outputs")
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
