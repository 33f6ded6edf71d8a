// Package secretfile reads secrets from files named in a plugin config, the
// `*_file` fields next to each password. A config holding only a path keeps
// the secret out of everything that shows the config: in streams mode
// `GET /streams/{id}` returns a stream's config with `${ENV}` references
// already resolved, so a password given inline or through the environment is
// readable there, while a path is harmless. Files are read when the plugin
// connects, so a rotated secret (a Kubernetes Secret mount is updated in
// place) is used on the next reconnect.
package secretfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// Read returns the contents of the file at path with one trailing newline
// ("\n" or "\r\n") removed, as editors and `kubectl create secret
// --from-file` leave one. field is the config field naming the file, e.g.
// "password_file"; errors name it and the path, never the contents.
func Read(field, path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is named below already
		}
		return "", fmt.Errorf("field %s: cannot read secret file %q: %w", field, path, err)
	}
	s := string(b)
	if t, ok := strings.CutSuffix(s, "\n"); ok {
		s = strings.TrimSuffix(t, "\r")
	}
	if s == "" {
		return "", fmt.Errorf("field %s: secret file %q is empty", field, path)
	}
	return s, nil
}

// Resolve returns value when path is empty, and otherwise the secret read
// from path (see Read), fileField naming the field that holds path.
func Resolve(value, fileField, path string) (string, error) {
	if path == "" {
		return value, nil
	}
	return Read(fileField, path)
}

// BothSetError is the error for a config that sets a secret field and its
// file field at once; field and fileField are the full field paths.
func BothSetError(field, fileField string) error {
	return fmt.Errorf("fields %s and %s: both are set; keep one (prefer %s in streams mode, where the API shows %s)", field, fileField, fileField, field)
}

// PasswordField is the spec field of a `password` that has a
// `password_file` beside it (see PasswordFileField): a secret, empty by
// default. description says what the password is for; the field adds that
// the two exclude each other.
func PasswordField(name, description string) *service.ConfigField {
	return service.NewStringField(name).
		Description(description + " Mutually exclusive with `password_file`.").
		Default("").Secret()
}

// PasswordFileField is the spec field of a `password_file` beside a
// `password` field: what names the secret in its description (e.g. "the
// client password"), example is a path shown as an example.
func PasswordFileField(name, what, example string) *service.ConfigField {
	return service.NewStringField(name).
		Description("A file holding " + what + ", read on every connect (so a rotated secret is used on the next reconnect); one trailing newline is trimmed. Use it instead of `password` with a Kubernetes Secret mounted as a file, and always in streams mode: there `GET /streams/{id}` returns the stream config with `${ENV}` references resolved, so a `password` is readable through the API, whereas this field only shows the path. Mutually exclusive with `password`.").
		Default("").Example(example)
}
