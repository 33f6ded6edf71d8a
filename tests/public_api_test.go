package tests

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPublicPackagesAreDocumented keeps the README's list of public packages
// (section "Use the plugins in your own build") equal to the module's
// importable library packages, and checks each has a package doc comment
// that `go doc` shows first. A new package outside internal/ must be listed
// there (and so kept compatible) or moved under internal/.
func TestPublicPackagesAreDocumented(t *testing.T) {
	out, err := exec.CommandContext(t.Context(), "go", "list", "-f", "{{.ImportPath}}\t{{.Name}}\t{{.Doc}}\t.", "../...").CombinedOutput()
	require.NoError(t, err, string(out))
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(readme), "## Use the plugins in your own build")
	require.True(t, ok, "README section missing")
	section, _, _ = strings.Cut(section, "\n## ")

	var public []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.SplitN(line, "\t", 4)
		require.Len(t, fields, 4, line)
		path, name, doc := fields[0], fields[1], fields[2]
		if name == "main" || strings.Contains(path, "/internal/") || strings.HasSuffix(path, "/tests") {
			continue
		}
		public = append(public, path)
		require.True(t, strings.HasPrefix(doc, "Package "+name+" "), "%s: package doc must say what it is for, starting %q; got %q", path, "Package "+name, doc)
		require.True(t, strings.Contains(section, "| `"+path+"` |"), "public package %s is not in the README's list", path)
	}
	require.Contains(t, public, "github.com/connect-solace/connect-solace/input", "the listing must cover the module")
	require.Equal(t, len(public), strings.Count(section, "| `github.com/connect-solace/connect-solace/"),
		"the README lists a package that is not public (or no longer exists)")
}
