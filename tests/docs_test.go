package tests

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// readTree returns the files under dir keyed by slash-separated relative path.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	require.NoError(t, err)
	return out
}

// TestComponentDocsAreCurrent regenerates the component reference pages
// into a temporary directory and fails when the committed docs/components
// differ, so a spec change cannot land without its docs.
func TestComponentDocsAreCurrent(t *testing.T) {
	tmp := t.TempDir()
	out, err := run(t, "docs", "--out", tmp)
	require.NoError(t, err, out)

	fresh := readTree(t, tmp)
	committed := readTree(t, "../docs/components")
	require.Contains(t, fresh, "README.md")
	for _, plugin := range ourPlugins(t) {
		found := false
		for p := range fresh {
			if filepath.Base(p) == plugin+".md" {
				found = true
			}
		}
		require.True(t, found, "no page generated for plugin %q", plugin)
	}

	var stale []string
	for p, want := range fresh {
		if committed[p] != want {
			stale = append(stale, p)
		}
	}
	for p := range committed {
		if _, ok := fresh[p]; !ok {
			stale = append(stale, p)
		}
	}
	sort.Strings(stale)
	require.Empty(t, stale, "docs/components is stale in these files: run `make docs` (connect-solace docs --out docs/components) and commit the result")

	// --check agrees with the comparison above.
	out, err = run(t, "docs", "--out", "../docs/components", "--check")
	require.NoError(t, err, out)
}

func TestDocsCheckFailsOnStaleDocs(t *testing.T) {
	tmp := t.TempDir()
	out, err := run(t, "docs", "--out", tmp)
	require.NoError(t, err, out)
	require.NoError(t, os.WriteFile(filepath.Join(tmp, "README.md"), []byte("hand edited\n"), 0o644))
	out, err = run(t, "docs", "--out", tmp, "--check")
	require.Error(t, err)
	require.Contains(t, out, "README.md")
	require.Contains(t, out, "make docs")
}
