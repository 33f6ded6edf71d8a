package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/solacetest"
)

// TestSolaceInputKilledMidStream stops a consuming connect-solace with SIGTERM
// or SIGKILL while it is half way through a queue, starts it again, and
// requires every message to reach the output files: what the first process
// had not acknowledged is redelivered to the second, and the queue ends
// empty.
func TestSolaceInputKilledMidStream(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			const n = 2000
			b := solacetest.NewTestBroker(t, solacetest.Config{})
			require.NoError(t, b.CreateQueue("default", solacetest.QueueConfig{Name: "kq", AccessType: solacetest.AccessNonExclusive}))
			dir := t.TempDir()

			producer := filepath.Join(dir, "producer.yaml")
			require.NoError(t, writeFile(producer, fmt.Sprintf(`
input:
  generate: { count: %d, interval: "", mapping: 'root = counter().string()' }
output:
  solace: { urls: [ %s ], username: default, password: default, queue: kq }
logger: { level: warn }
`, n, b.SMFURL())))
			out, err := exec.CommandContext(t.Context(), binPath(t), "run", producer).CombinedOutput()
			require.NoError(t, err, "producer:\n%s", out)

			// A slow consumer (a few ms per message) so that the signal
			// lands mid-stream.
			consumer := func(outFile string) string {
				path := filepath.Join(dir, filepath.Base(outFile)+".yaml")
				require.NoError(t, writeFile(path, fmt.Sprintf(`
input:
  solace:
    urls: [ %s ]
    username: default
    password: default
    queue: kq
    flows: 2
pipeline:
  processors:
    - sleep: { duration: 2ms }
output:
  file: { path: %s, codec: lines }
logger: { level: warn }
`, b.SMFURL(), outFile)))
				return path
			}
			lines := func(path string) []string {
				data, _ := os.ReadFile(path)
				return strings.Fields(string(data))
			}

			first := filepath.Join(dir, "first.txt")
			p1 := startBinary(t, "run", consumer(first))
			require.Eventually(t, func() bool { return len(lines(first)) >= n/4 }, 30*time.Second, 5*time.Millisecond,
				"first consumer too slow:\n%s", p1.out)
			require.NoError(t, p1.cmd.Process.Signal(sig))
			err = p1.wait(t, 30*time.Second)
			if sig == syscall.SIGKILL {
				require.Error(t, err)
			} else {
				require.NoError(t, err, "a SIGTERM shuts down cleanly:\n%s", p1.out)
			}
			_, st, err := b.Queue("default", "kq")
			require.NoError(t, err)
			require.Positive(t, st.SpooledMsgCount, "the first consumer must stop mid-stream")
			firstCount := len(lines(first))

			second := filepath.Join(dir, "second.txt")
			p2 := startBinary(t, "run", consumer(second))
			require.Eventually(t, func() bool {
				_, st, err := b.Queue("default", "kq")
				return err == nil && st.SpooledMsgCount == 0
			}, 60*time.Second, 20*time.Millisecond, "second consumer did not drain the queue:\n%s", p2.out)
			require.NoError(t, p2.cmd.Process.Signal(syscall.SIGTERM))
			require.NoError(t, p2.wait(t, 30*time.Second), "%s", p2.out)

			seen := map[string]int{}
			for _, l := range append(lines(first), lines(second)...) {
				seen[l]++
			}
			var missing []int
			dups := 0
			for i := 1; i <= n; i++ {
				c := seen[strconv.Itoa(i)]
				if c == 0 {
					missing = append(missing, i)
				}
				dups += max(c-1, 0)
			}
			t.Logf("%v after %d of %d lines; %d duplicates after the restart", sig, firstCount, n, dups)
			require.Empty(t, missing, "lost across the %v and restart", sig)
			require.Len(t, seen, n, "only generated ids")
		})
	}
}
