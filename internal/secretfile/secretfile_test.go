package secretfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		content string // written to the file; "-" means no file
		want    string
		wantErr []string // substrings of the error; nil means no error
	}{
		{name: "plain", content: "s3cret", want: "s3cret"},
		{name: "one trailing newline trimmed", content: "s3cret\n", want: "s3cret"},
		{name: "crlf trimmed", content: "s3cret\r\n", want: "s3cret"},
		{name: "only one newline trimmed", content: "s3cret\n\n", want: "s3cret\n"},
		{name: "inner and leading whitespace kept", content: " s3 cret\n", want: " s3 cret"},
		{name: "missing file", content: "-", wantErr: []string{"field password_file", "no such file"}},
		{name: "empty file", content: "\n", wantErr: []string{"field password_file", "is empty"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name)
			if tt.content != "-" {
				require.NoError(t, os.WriteFile(path, []byte(tt.content), 0o600))
			}
			got, err := Read("password_file", path)
			if tt.wantErr == nil {
				require.NoError(t, err)
				assert.Equal(t, tt.want, got)
				return
			}
			require.Error(t, err)
			for _, w := range append(tt.wantErr, path) {
				assert.Contains(t, err.Error(), w)
			}
			assert.Equal(t, 1, strings.Count(err.Error(), path), "the path is named once: %v", err)
		})
	}
}

func TestReadUnreadableHidesContents(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads files regardless of their mode")
	}
	path := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(path, []byte("hunter2\n"), 0o000))
	_, err := Read("semp.password_file", path)
	require.ErrorContains(t, err, "field semp.password_file")
	require.ErrorContains(t, err, "permission denied")
	assert.NotContains(t, err.Error(), "hunter2")
}

func TestResolve(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(path, []byte("from-file\n"), 0o600))
	tests := []struct {
		name, value, path, want string
	}{
		{name: "no file keeps value", value: "inline", want: "inline"},
		{name: "file", path: path, want: "from-file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Resolve(tt.value, "password_file", tt.path)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
