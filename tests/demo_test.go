package tests

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// freeAddr returns a 127.0.0.1 address with a port that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// TestDemoScript runs the README's `make demo` script (with the shared binary
// and free ports) and checks that all ten orders made the full round trip
// generate -> solace output -> topic -> queue -> solace input -> stdout.
func TestDemoScript(t *testing.T) {
	cmd := exec.CommandContext(t.Context(), "bash", "../scripts/demo.sh")
	cmd.Env = append(os.Environ(),
		"BIN="+binPath(t),
		"DEMO_SMF_ADDR="+freeAddr(t),
		"DEMO_SEMP_ADDR="+freeAddr(t),
	)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	text := string(out)
	last := -1
	for i := 1; i <= 10; i++ {
		require.Contains(t, text, fmt.Sprintf(`"destination":"demo/orders/%d"`, i), text)
		// One session publishes and one flow consumes, so the queue order,
		// and so the printed order, is the publish order.
		at := strings.Index(text, fmt.Sprintf(`"application_message_id":"order-%d"`, i))
		require.Greater(t, at, last, "order-%d missing or out of order:\n%s", i, text)
		last = at
	}
	require.Equal(t, 10, strings.Count(text, `"region":"eu-west"`), text)
}
