package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRewriteBody(t *testing.T) {
	ports := portMap{}
	require.NoError(t, ports.Set("55555=127.0.0.1:40001"))
	require.Error(t, ports.Set("smf=127.0.0.1:1"))
	for _, tt := range []struct{ name, body, want string }{
		{"create: loopback listen, mapped upstream", `{"name":"smf","listen":":1234","upstream":"broker:55555","enabled":true}`,
			`{"enabled":true,"listen":"127.0.0.1:1234","name":"smf","upstream":"127.0.0.1:40001"}`},
		{"all interfaces", `{"listen":"0.0.0.0:1234","upstream":"broker:55003"}`, `{"listen":"127.0.0.1:1234","upstream":"broker:55003"}`},
		{"explicit host kept", `{"listen":"127.0.0.2:1234"}`, `{"listen":"127.0.0.2:1234"}`},
		{"populate array", `[{"listen":":1","upstream":"b:55555"},{"listen":":2"}]`,
			`[{"listen":"127.0.0.1:1","upstream":"127.0.0.1:40001"},{"listen":"127.0.0.1:2"}]`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://x/proxies", strings.NewReader(tt.body))
			require.NoError(t, err)
			require.NoError(t, rewriteBody(r, ports))
			got, err := io.ReadAll(r.Body)
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(got))
			assert.Equal(t, int64(len(got)), r.ContentLength)
			assert.True(t, json.Valid(got))
		})
	}
}
