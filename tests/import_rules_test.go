package tests

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/connect-solace/connect-solace"

// testKit reports whether pkg is a test kit, a package only tests and
// benchmarks import (TestBinaryLinksNoTestCode keeps them out of the binary):
// kits may drive the Solace client directly, as a baseline or an oracle.
func testKit(pkg string) bool {
	for _, kit := range []string{module + "/internal/testkit", module + "/internal/benchbroker"} {
		if pkg == kit || strings.HasPrefix(pkg, kit+"/") {
			return true
		}
	}
	return false
}

// under reports whether pkg is dir or a package below it.
func under(pkg, dir string) bool { return pkg == dir || strings.HasPrefix(pkg, dir+"/") }

// TestSolaceLayerImportRules checks the layering the README's Layout states
// for the Solace side, on the packages' own (non-test) imports: only
// internal/session and its subpackages import the Solace Go client,
// internal/session, a protocol layer, imports nothing of Benthos, and its
// subpackages (the native path, ccsmp) do not import it: data flows down.
func TestSolaceLayerImportRules(t *testing.T) {
	out, err := exec.CommandContext(t.Context(), "go", "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "../...").CombinedOutput()
	require.NoError(t, err, string(out))
	session := module + "/internal/session"
	seen := false
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		pkg, imports := f[0], f[1:]
		seen = seen || pkg == session
		for _, imp := range imports {
			if under(imp, "solace.dev/go/messaging") {
				require.True(t, under(pkg, session) || testKit(pkg),
					"%s imports the Solace client (%s); only %s and its subpackages may", pkg, imp, session)
			}
			if under(pkg, session) {
				require.False(t, under(imp, "github.com/redpanda-data/benthos/v4"),
					"%s imports %s: the session layer speaks Solace, not Benthos", pkg, imp)
				require.False(t, pkg != session && imp == session,
					"%s imports %s, the layer above it", pkg, imp)
			}
		}
	}
	require.True(t, seen, "the listing must cover %s", session)
}
