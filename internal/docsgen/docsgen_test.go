package docsgen

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/require"
)

type nopOutput struct{}

func (nopOutput) Connect(context.Context) error                 { return nil }
func (nopOutput) Write(context.Context, *service.Message) error { return nil }
func (nopOutput) Close(context.Context) error                   { return nil }
func (nopInput) Connect(context.Context) error                  { return nil }
func (nopInput) Close(context.Context) error                    { return nil }
func (nopInput) Read(context.Context) (*service.Message, service.AckFunc, error) {
	return nil, nil, service.ErrEndOfInput
}

type nopInput struct{}

// testEnv holds one input and two outputs with the field shapes the
// renderer must handle: nested objects, object lists, secrets, advanced
// fields, enums, interpolation, optional and deprecated fields.
func testEnv(t *testing.T) *service.Environment {
	t.Helper()
	env := service.NewEmptyEnvironment()
	outSpec := service.NewConfigSpec().
		Beta().
		Categories("Services").
		Summary("Writes things | somewhere.").
		Description("\nLonger text.").
		Fields(
			service.NewStringListField("urls").Description("Broker URLs.").Examples([]any{"tcp://a:55555"}),
			service.NewStringField("password").Description("The password.").Secret().Default(""),
			service.NewInterpolatedStringField("topic").Description("Where to.").Examples(`a/${! meta("k") }`).Optional(),
			service.NewStringAnnotatedEnumField("mode", map[string]string{"fast": "Quick.", "safe": "Careful."}).Default("safe"),
			service.NewObjectField("auth",
				service.NewStringField("user").Default("admin"),
				service.NewStringField("token").Secret().Optional(),
			).Advanced(),
			service.NewObjectListField("routes",
				service.NewStringField("name").Description("Route name."),
			).Default([]any{}),
			service.NewStringField("old").Deprecated().Default(""),
		).
		Example("Basic", "A simple one.", "output:\n  thing:\n    urls: [ tcp://a ]\n")
	require.NoError(t, env.RegisterOutput("thing", outSpec, func(*service.ParsedConfig, *service.Resources) (service.Output, int, error) {
		return nopOutput{}, 1, nil
	}))
	require.NoError(t, env.RegisterOutput("other", service.NewConfigSpec().Summary("Not ours."), func(*service.ParsedConfig, *service.Resources) (service.Output, int, error) {
		return nopOutput{}, 1, nil
	}))
	require.NoError(t, env.RegisterInput("thing", service.NewConfigSpec().Summary("Reads things.").Field(service.NewIntField("n").Default(3)),
		func(*service.ParsedConfig, *service.Resources) (service.Input, error) { return nopInput{}, nil }))
	return env
}

func TestGenerateRendersEveryField(t *testing.T) {
	files, err := Generate(testEnv(t), Selection{
		KindInputs:  {"thing"},
		KindOutputs: {"thing", "missing"},
	})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"README.md", "inputs/thing.md", "outputs/thing.md"}, keys(files))

	page := string(files["outputs/thing.md"])
	for _, want := range []string{
		GeneratedHeader,
		"# `thing` output",
		"**Status:** beta · **Categories:** Services",
		"Writes things | somewhere.",
		"## Description\n\nLonger text.",
		"### Basic\n\nA simple one.\n\n```yaml\noutput:\n  thing:\n    urls: [ tcp://a ]\n```",
		"| [`urls`](#urls) | `array of string` | required | no | no |",
		"| [`password`](#password) | `string` | `\"\"` | yes | no |",
		"| [`auth.token`](#authtoken) | `string` |  | yes | yes |",
		"| [`routes[].name`](#routesname) | `string` | required | no | no |",
		"### `auth.user`",
		"**Type:** `string` · **Default:** `\"admin\"` · **Secret:** no · **Advanced:** yes",
		"**Type:** `string` · **Optional** · **Secret:** no · **Advanced:** no",
		"| `fast` | Quick. |",
		"interpolation functions",
		"topic: a/${! meta(\"k\") }",
		"urls:\n  - tcp://a:55555",
		"This field holds a secret",
		"Common fields, with their defaults:\n\n```yaml\noutput:\n  label: \"\"\n  thing:\n",
	} {
		require.Contains(t, page, want)
	}
	require.NotContains(t, page, "`old`", "deprecated fields are not documented")
	// The common config leaves advanced fields out; the full one has them.
	common := page[strings.Index(page, "Common fields"):strings.Index(page, "Every field")]
	require.NotContains(t, common, "auth:")
	require.Contains(t, page[strings.Index(page, "Every field"):], "auth:")

	index := string(files["README.md"])
	require.Contains(t, index, "- [`thing`](inputs/thing.md): Reads things.")
	require.Contains(t, index, "- [`thing`](outputs/thing.md): Writes things \\| somewhere.")
	require.NotContains(t, index, "other")
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestGenerateIsDeterministic(t *testing.T) {
	sel := Selection{KindInputs: {"thing"}, KindOutputs: {"thing"}}
	first, err := Generate(testEnv(t), sel)
	require.NoError(t, err)
	for range 5 {
		again, err := Generate(testEnv(t), sel)
		require.NoError(t, err)
		require.Equal(t, first, again)
	}
}

func TestWriteAndDiff(t *testing.T) {
	dir := t.TempDir()
	files, err := Generate(testEnv(t), Selection{KindOutputs: {"thing"}})
	require.NoError(t, err)

	stale, err := Diff(dir, files)
	require.NoError(t, err)
	require.Equal(t, []string{"README.md", "outputs/thing.md"}, stale, "an empty dir lacks every page")

	// A page of a plugin that no longer exists must go away on Write and
	// be reported by Diff.
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "outputs"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "outputs", "gone.md"), []byte("x"), 0o644))
	stale, err = Diff(dir, files)
	require.NoError(t, err)
	require.Contains(t, stale, "outputs/gone.md")

	require.NoError(t, Write(dir, files))
	stale, err = Diff(dir, files)
	require.NoError(t, err)
	require.Empty(t, stale)
	require.NoFileExists(t, filepath.Join(dir, "outputs", "gone.md"))

	require.NoError(t, os.WriteFile(filepath.Join(dir, "outputs", "thing.md"), []byte("edited"), 0o644))
	stale, err = Diff(dir, files)
	require.NoError(t, err)
	require.Equal(t, []string{"outputs/thing.md"}, stale)
}
