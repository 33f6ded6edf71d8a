// Package componenttest holds the test helpers that the input and output
// plugin packages share: the checks each makes of its registration and of its
// lint rules, and connecting a component for a test. One copy keeps the two
// packages' checks the same.
//
// The package imports testing and testify, so only _test.go files may import
// it: TestBinaryLinksNoTestCode in tests/ keeps both out of the binary.
package componenttest

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Kind is the kind of component a plugin package registers.
type Kind string

// The kinds of component this module's plugin packages register.
const (
	Input  Kind = "Input"
	Output Kind = "Output"
)

// AddYAML adds a component config of kind k to sb.
func (k Kind) AddYAML(sb *service.StreamBuilder, yaml string) error {
	if k == Input {
		return sb.AddInputYAML(yaml)
	}
	return sb.AddOutputYAML(yaml)
}

func (k Kind) walk(env *service.Environment, fn func(name string, _ *service.ConfigView)) {
	if k == Input {
		env.WalkInputs(fn)
		return
	}
	env.WalkOutputs(fn)
}

// IndentYAML indents each line of s by two spaces, to nest a component's
// fields under its name.
func IndentYAML(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ") + "\n"
}

// NoImportFlags checks that importing the package under test adds nothing to
// the process-wide flag set (only the testing package's own flags).
func NoImportFlags(t *testing.T) {
	t.Helper()
	flag.VisitAll(func(f *flag.Flag) {
		require.True(t, strings.HasPrefix(f.Name, "test."), "flag -%s defined by an import", f.Name)
	})
}

// RegisterCoversSource checks that register adds every component of kind k
// that the source files of the package under test (the test's working
// directory) register, so a component added later (registered in its file's
// init) cannot be left out of register.
func RegisterCoversSource(t *testing.T, k Kind, register func(*service.Environment) error) {
	t.Helper()
	registration := regexp.MustCompile(`Register(?:Batch)?` + string(k) + `\(\s*"([a-z0-9_]+)"`)
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var inSource []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range registration.FindAllStringSubmatch(string(src), -1) {
			inSource = append(inSource, m[1])
		}
	}
	require.NotEmpty(t, inSource, "the pattern must find the registrations")

	env := service.NewEmptyEnvironment()
	require.NoError(t, register(env))
	var registered []string
	k.walk(env, func(name string, _ *service.ConfigView) { registered = append(registered, name) })
	slices.Sort(inSource)
	slices.Sort(registered)
	require.Equal(t, inSource, registered, "add the missing component's register function to Register")
}

// Lint lints a config of the component name (kind k) whose fields are
// fields, as a stream config would hold it, and returns the lint error.
func Lint(k Kind, name, fields string) error {
	return k.AddYAML(service.NewStreamBuilder(), name+":\n"+IndentYAML(fields))
}

// LintWants checks that lint accepts the component's fields (want empty) or
// rejects them with an error containing want.
func LintWants(t *testing.T, k Kind, name, fields, want string) {
	t.Helper()
	err := Lint(k, name, fields)
	if want == "" {
		require.NoError(t, err)
		return
	}
	require.Error(t, err)
	assert.Contains(t, err.Error(), want)
}

// LintIsConstructor checks that the constructor and lint reject a config of
// the component name (kind k) in the same words and that lint adds no rule of
// its own. construct builds the component from fields, the config without the
// component's name.
func LintIsConstructor(t *testing.T, k Kind, name, fields string, construct func(fields string) error) {
	t.Helper()
	cerr := construct(fields)
	require.Error(t, cerr)
	lerr := Lint(k, name, fields)
	require.Error(t, lerr)
	msgs := strings.Split(cerr.Error(), "\n")
	for _, m := range msgs {
		assert.Contains(t, lerr.Error(), m)
	}
	assert.Len(t, strings.Split(lerr.Error(), "\n"), len(msgs), "lint reports no rule of its own: %v", lerr)
}

// RunStream builds sb and runs the stream in the background with ctx; when
// the test ends it stops the stream, allowing stopWithin, then cancels Run's
// context (so a stream that did not stop in time cannot hold the test) and
// waits for Run to return.
func RunStream(t testing.TB, ctx context.Context, sb *service.StreamBuilder, stopWithin time.Duration) {
	t.Helper()
	stream, err := sb.Build()
	require.NoError(t, err)
	runCtx, cancelRun := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- stream.Run(runCtx) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), stopWithin)
		defer cancel()
		_ = stream.Stop(ctx)
		cancelRun()
		<-done
	})
}

// Component is the lifecycle an input or output shares.
type Component interface {
	Connect(ctx context.Context) error
	Close(ctx context.Context) error
}

// Connect connects c, allowing 10 s, and closes it (allowing 5 s) when the
// test ends.
func Connect(t testing.TB, c Component) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, c.Connect(ctx))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = c.Close(ctx)
	})
}
