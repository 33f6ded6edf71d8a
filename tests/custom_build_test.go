package tests

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// customBuildDir is the example module the README's "Use the plugins in your
// own build" section walks through.
const customBuildDir = "../examples/custom-build"

// TestCustomBuildExample builds examples/custom-build, a Benthos distribution
// of a user's own that imports our packages, exactly as the README says, and
// checks that its binary offers our components next to the core ones and the
// devbroker subcommand. The build shares the Go build cache, so it mostly
// links. -mod=readonly makes a stale go.mod or an incomplete go.sum fail here
// rather than on a user's machine.
func TestCustomBuildExample(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "my-benthos")
	build := exec.CommandContext(t.Context(), "go", "build", "-mod=readonly", "-o", bin, ".")
	build.Dir = customBuildDir
	build.Env = append(build.Environ(), "GOWORK=off", "CGO_ENABLED=1")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "building %s (after changing the main module's requirements, run `go mod tidy` there):\n%s", customBuildDir, out)

	out, err = exec.CommandContext(t.Context(), bin, "list", "inputs", "outputs").CombinedOutput()
	require.NoError(t, err, string(out))
	inputs, outputs, ok := strings.Cut(string(out), "Outputs:")
	require.True(t, ok, "no Outputs section:\n%s", out)
	require.Contains(t, inputs, "Inputs:")
	require.Contains(t, inputs, "  - generate\n", "Benthos's pure components are in")
	require.Contains(t, outputs, "  - stdout\n", "Benthos's io components are in")
	require.Contains(t, inputs, "  - solace\n")
	for _, name := range []string{"solace", "jms"} {
		require.Contains(t, outputs, "  - "+name+"\n", "output %q missing:\n%s", name, out)
	}

	out, err = exec.CommandContext(t.Context(), bin, "devbroker", "--help").CombinedOutput()
	require.NoError(t, err, string(out))
	require.Contains(t, string(out), "my-benthos devbroker")
}

// TestCustomBuildExampleTests runs the example module's own test, which shows
// how a user's module tests its pipelines against solacetest.
func TestCustomBuildExampleTests(t *testing.T) {
	t.Parallel()
	cmd := exec.CommandContext(t.Context(), "go", "test", "-mod=readonly", "-vet=off", "-count=1", ".")
	cmd.Dir = customBuildDir
	cmd.Env = append(cmd.Environ(), "GOWORK=off", "CGO_ENABLED=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go test in %s:\n%s", customBuildDir, out)
	require.Contains(t, string(out), "ok  \texample.com/custom-build")
}

// TestLibraryNeedsNoObservabilityPlugins checks that importing our public
// plugin packages does not pull in this distribution's Prometheus exporter or
// OTLP tracer (or their client libraries), nor the binary's garbage-collector
// floor: a custom build chooses its own.
func TestLibraryNeedsNoObservabilityPlugins(t *testing.T) {
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", "../input", "../output").CombinedOutput()
	require.NoError(t, err, string(out))
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "github.com/connect-solace/connect-solace/internal/session", "the listing must cover our packages")
	for _, d := range deps {
		for _, banned := range []string{
			"github.com/connect-solace/connect-solace/internal/metrics",
			"github.com/connect-solace/connect-solace/internal/tracing",
			"github.com/connect-solace/connect-solace/internal/gcfloor",
			"github.com/prometheus/client_golang",
			"go.opentelemetry.io/otel/exporters",
			"go.opentelemetry.io/otel/sdk",
		} {
			// A package or one below it: internal/tracingcfg (the plugins'
			// tracing fields) is not internal/tracing (the OTLP tracer).
			require.False(t, d == banned || strings.HasPrefix(d, banned+"/"), "input/output import %s", d)
		}
	}
}

// TestBinaryLinksNoTestCode checks that the shipped binary does not link the
// standard testing package, our test-only packages or go-amqp (the tests'
// independent AMQP client; the plugins speak AMQP through internal/amqpwire).
// The devbroker command
// links solacetest, whose Go-test helpers (NewTestBroker, SelfSignedTLS) take
// solacetest.TB instead of testing.TB for this reason.
func TestBinaryLinksNoTestCode(t *testing.T) {
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", "../cmd/connect-solace").CombinedOutput()
	require.NoError(t, err, string(out))
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "github.com/connect-solace/connect-solace/solacetest", "the listing must cover the devbroker's broker")
	for _, d := range deps {
		require.False(t, d == "testing" || strings.HasPrefix(d, "testing/"), "the binary links %s", d)
		for _, banned := range []string{
			"github.com/connect-solace/connect-solace/internal/amqpwire/amqpwiretest",
			"github.com/connect-solace/connect-solace/internal/testkit/",
			"github.com/Azure/go-amqp",
			"github.com/stretchr/testify",
		} {
			require.False(t, strings.HasPrefix(d, banned), "the binary links %s", d)
		}
	}
}
