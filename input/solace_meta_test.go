package input

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/session"
)

func TestSolaceMetaKeysNameEveryAttribute(t *testing.T) {
	seen := map[string]session.Attr{siMetaTimestamp: session.Attr(session.NumAttrs)}
	for a, k := range siMetaKeys {
		require.True(t, strings.HasPrefix(k, "solace_"), "attribute %d has key %q", a, k)
		prev, dup := seen[k]
		require.False(t, dup, "attributes %d and %d share key %q", prev, a, k)
		seen[k] = session.Attr(a)
	}
}
