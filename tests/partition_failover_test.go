package tests

import (
	"cmp"
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
  solace: { urls: [ %s ], username: default, password: default, queue: pq, partition_key: '${! meta("key") }',
    clients: 1, max_in_flight: 1, batching: { count: 100 } }
logger: { level: warn }
`, n, keys, b.SMFURL())))
	// One session and one batch in flight: the broker spools the messages
	// in id order, which is what "publish order" means below (with the
	// defaults, four sessions and 256 batches in flight publish
	// concurrently, and a key's ids reach its partition out of order).
	out, err := run(t, "run", producer)
	require.NoError(t, err, "producer:\n%s", out)

	// One pipeline thread and one write in flight, so that each file's
	// order is the order the consumer received its messages in; each line
	// carries the time it was processed, to order deliveries across
	// consumers.
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
    - mapping: 'root = content().string() + " " + (@solace_redelivered | "false").string() + " " + now().ts_unix_nano().string()'
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
			c += len(lines(f)) / 4
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

	// Per key, the first deliveries (not flagged redelivered) across all
	// consumers, in the order they were processed, come in publish order:
	// a partition moves only once its old owner settled what it held, so a
	// survivor continues where the killed consumer (or the previous owner)
	// stopped.
	type delivery struct {
		at      int64
		id      int
		file    string
		flagged bool
	}
	seen := map[int]int{}
	dups := 0
	perKey := map[string][]delivery{}
	for _, f := range files {
		l := lines(f)
		for i := 0; i+3 < len(l); i += 4 {
			id, err := strconv.Atoi(l[i+1])
			require.NoError(t, err)
			at, err := strconv.ParseInt(l[i+3], 10, 64)
			require.NoError(t, err)
			if seen[id]++; seen[id] > 1 {
				dups++
			}
			perKey[l[i]] = append(perKey[l[i]], delivery{at, id, filepath.Base(f), l[i+2] == "true"})
		}
	}
	for key, ds := range perKey {
		slices.SortStableFunc(ds, func(a, b delivery) int { return cmp.Compare(a.at, b.at) })
		last := 0
		for i, d := range ds {
			if d.flagged {
				continue
			}
			require.Greater(t, d.id, last, "key %s first-delivered out of order: %v", key, ds[max(0, i-8):i+1])
			last = d.id
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
