package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/solacetest"
)

// TestPartitionedQueueConsumerKilled runs three connect-solace consumers on
// a queue of six partitions holding keyed messages and SIGKILLs one of them
// mid-stream. Its partitions wait for the queue's rebalance delay and then
// move to the survivors, which finish the queue: nothing is lost, each key's
// messages are first delivered in publish order, and every partition ends
// with a live consumer.
func TestPartitionedQueueConsumerKilled(t *testing.T) {
	const n, keys, partitions = 3000, 12, 6
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	require.NoError(t, b.CreateQueue("default", solacetest.QueueConfig{Name: "pq", AccessType: solacetest.AccessNonExclusive,
		PartitionCount: partitions, PartitionRebalanceDelay: 1}))
	dir := t.TempDir()

	producer := filepath.Join(dir, "producer.yaml")
	require.NoError(t, writeFile(producer, fmt.Sprintf(`
input:
  generate:
    count: %d
    interval: ""
    mapping: |
      let id = counter()
      let key = "k" + ($id %% %d).string()
      meta key = $key
      root = $key + " " + $id.string()
output:
  solace: { urls: [ %s ], username: default, password: default, queue: pq, partition_key: '${! meta("key") }' }
logger: { level: warn }
`, n, keys, b.SMFURL())))
	out, err := run(t, "run", producer)
	require.NoError(t, err, "producer:\n%s", out)

	// One pipeline thread and one write in flight, so that each file's
	// order is the order the consumer received its messages in.
	consumer := func(i int) (*proc, string) {
		outFile := filepath.Join(dir, fmt.Sprintf("consumer-%d.txt", i))
		path := filepath.Join(dir, fmt.Sprintf("consumer-%d.yaml", i))
		require.NoError(t, writeFile(path, fmt.Sprintf(`
input:
  solace: { urls: [ %s ], username: default, password: default, queue: pq, client_name: consumer-%d }
pipeline:
  threads: 1
  processors:
    - sleep: { duration: 1ms }
    - mapping: 'root = content().string() + " " + (@solace_redelivered | "false").string()'
output:
  file: { path: %s, codec: lines }
logger: { level: warn }
`, b.SMFURL(), i, outFile)))
		return startBinary(t, "run", path), outFile
	}
	lines := func(path string) []string {
		data, _ := os.ReadFile(path)
		return strings.Fields(strings.ReplaceAll(string(data), " ", "\t"))
	}
	var procs []*proc
	var files []string
	for i := range 3 {
		p, f := consumer(i)
		procs, files = append(procs, p), append(files, f)
	}
	total := func() int {
		c := 0
		for _, f := range files {
			c += len(lines(f)) / 3
		}
		return c
	}
	// Kill a consumer that has partitions, once the rebalance gave every
	// consumer some.
	require.Eventually(t, func() bool {
		owners, err := b.PartitionOwners("default", "pq")
		return err == nil && slices.Contains(owners, "consumer-2") && slices.Contains(owners, "consumer-1") && slices.Contains(owners, "consumer-0")
	}, 30*time.Second, 5*time.Millisecond, "partitions never spread over the three consumers")
	require.Eventually(t, func() bool { return total() >= n/3 && len(lines(files[2])) > 0 }, 60*time.Second, 5*time.Millisecond)
	atKill := total()
	require.NoError(t, procs[2].cmd.Process.Signal(syscall.SIGKILL))
	_ = procs[2].wait(t, 10*time.Second)
	require.Less(t, atKill, n, "the kill lands mid-stream")

	require.Eventually(t, func() bool {
		_, st, err := b.Queue("default", "pq")
		return err == nil && st.SpooledMsgCount == 0
	}, 60*time.Second, 10*time.Millisecond, "survivors did not drain the queue: %s", b.FlowState("default", "pq"))
	owners, err := b.PartitionOwners("default", "pq")
	require.NoError(t, err)
	for p, o := range owners {
		require.Contains(t, []string{"consumer-0", "consumer-1"}, o, "partition %d ends with a live consumer: %v", p, owners)
	}
	for _, p := range procs[:2] {
		require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
		require.NoError(t, p.wait(t, 30*time.Second), "%s", p.out.String())
	}

	// Per key, the first deliveries (not flagged redelivered) come in
	// publish order in each consumer's file, and a key's first deliveries
	// that reached a survivor after the kill continue where the killed
	// consumer's stopped.
	seen := map[int]int{}
	dups := 0
	for _, f := range files {
		last := map[string]int{}
		history := map[string][]string{} // for the failure message
		l := lines(f)
		for i := 0; i+2 < len(l); i += 3 {
			key, idS, redelivered := l[i], l[i+1], l[i+2]
			id, err := strconv.Atoi(idS)
			require.NoError(t, err)
			if seen[id]++; seen[id] > 1 {
				dups++
			}
			history[key] = append(history[key], idS+"/"+redelivered)
			if redelivered == "true" {
				continue
			}
			require.Greater(t, id, last[key], "%s: key %s first-delivered out of order: %v", filepath.Base(f), key, history[key][max(0, len(history[key])-8):])
			last[key] = id
		}
	}
	var missing []int
	for id := 1; id <= n; id++ {
		if seen[id] == 0 {
			missing = append(missing, id)
		}
	}
	require.Empty(t, missing, "lost")
	t.Logf("killed a consumer after %d of %d; %d duplicates", atKill, n, dups)
}
