// Package tests holds end-to-end tests that drive the connect-solace binary as
// a user would. The binary is built once per `go test` run and shared by every
// test in the package.
package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// testVersion is stamped into the shared binary so tests can check -ldflags.
const testVersion = "v0.0.0-e2e"

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
	buildOut  []byte
	buildDir  string
)

// binPath returns the path of the connect-solace binary, building it on first
// use. The build uses the normal Go build cache, so repeated runs only relink.
func binPath(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "connect-solace-e2e-")
		if err != nil {
			buildErr = err
			return
		}
		buildDir = dir
		name := "connect-solace"
		if runtime.GOOS == "windows" {
			name += ".exe"
		}
		builtBin = filepath.Join(dir, name)
		cmd := exec.Command("go", "build",
			"-ldflags", "-X main.Version="+testVersion+" -X main.DateBuilt=e2e",
			"-o", builtBin, "../cmd/connect-solace")
		buildOut, buildErr = cmd.CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("building connect-solace: %v\n%s", buildErr, buildOut)
	}
	return builtBin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
	os.Exit(code)
}
