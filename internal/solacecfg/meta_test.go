package solacecfg

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/session"
)

func TestMetaKeysNameEveryAttribute(t *testing.T) {
	seen := map[string]session.Attr{MetaTimestamp: session.Attr(session.NumAttrs)}
	for a, k := range MetaKeys {
		require.True(t, strings.HasPrefix(k, "solace_"), "attribute %d has key %q", a, k)
		prev, dup := seen[k]
		require.False(t, dup, "attributes %d and %d share key %q", prev, a, k)
		seen[k] = session.Attr(a)
	}
}
