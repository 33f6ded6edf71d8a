package tests

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestProtocolLayersSpeakTheirProtocol checks the rest of the layering the
// README's Layout states (TestSolaceLayerImportRules checks internal/session),
// on the packages' own (non-test) imports: the other protocol layers
// (internal/jms, internal/amqpwire, internal/semp and their subpackages)
// import nothing of Benthos, the Benthos-facing pieces living in the plugins
// and in internal/jmscfg; and internal/jms and internal/amqpwire do not
// import go-amqp, which tests alone use, as an independent oracle.
func TestProtocolLayersSpeakTheirProtocol(t *testing.T) {
	out, err := exec.CommandContext(t.Context(), "go", "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "../...").CombinedOutput()
	require.NoError(t, err, string(out))
	layers := []string{"/internal/jms", "/internal/amqpwire", "/internal/semp"}
	seen := map[string]bool{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		pkg, imports := f[0], f[1:]
		for _, l := range layers {
			if !under(pkg, module+l) || testKit(pkg) || strings.HasSuffix(pkg, "test") {
				continue
			}
			seen[l] = true
			for _, imp := range imports {
				require.False(t, under(imp, "github.com/redpanda-data/benthos/v4"),
					"%s imports %s: the protocol layers speak their protocol, not Benthos", pkg, imp)
				if l == "/internal/jms" || l == "/internal/amqpwire" {
					require.False(t, under(imp, "github.com/Azure/go-amqp"),
						"%s imports %s: the jms mapping runs on amqpwire; go-amqp is for tests only", pkg, imp)
				}
			}
		}
	}
	for _, l := range layers {
		require.True(t, seen[l], "the listing must cover %s", module+l)
	}
}

// TestPluginFilesStayShort checks the plugins' layout rule: no file in
// input/ or output/ is over 550 lines; a plugin's further jobs go to side
// files (input/solace_*.go) rather than growing its main file.
func TestPluginFilesStayShort(t *testing.T) {
	const most = 550
	for _, dir := range []string{"../input", "../output"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		require.NotEmpty(t, files, dir)
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			require.LessOrEqual(t, bytes.Count(b, []byte("\n")), most,
				"%s is over %d lines: put a job of its own in a side file", f, most)
		}
	}
}
