package tests

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging"
	"solace.dev/go/messaging/pkg/solace/config"
	"solace.dev/go/messaging/pkg/solace/resource"
)

// The tests here kill the broker, not the pipeline: `connect-solace
// devbroker --data-dir` is SIGKILLed mid-stream and either restarted on the
// same address ("restart") or replaced by its standby (`--standby`) on a
// second address that the pipeline lists in `urls` ("takeover"). For the
// solace output, the solace input and an input → output bridge they count
// unique ids: nothing acknowledged may be lost; duplicates are reported, and
// every repeated delivery must carry solace_redelivered.

const failoverMsgs = 20000

// brokerPair is the broker side of a test: the active devbroker and, for a
// takeover, its standby.
type brokerPair struct {
	takeover   bool
	dir        string
	queues     []string
	active     *brokerProc
	standby    *proc
	standbyAt  [2]string // the standby's SMF and SEMP addresses
	urls       []string  // what pipelines list
	activeAddr [2]string // the first broker's SMF and SEMP addresses
}

type brokerProc struct {
	p         *proc
	smf, semp string
}

var devbrokerReady = regexp.MustCompile(`devbroker ready: smf=(tcp://\S+) .*semp=(http://\S+)`)

func startDevbroker(t *testing.T, dir, smfAddr, sempAddr string, standby bool, queues []string) *proc {
	t.Helper()
	args := []string{"devbroker", "--data-dir", dir, "--smf-addr", smfAddr, "--semp-addr", sempAddr}
	if standby {
		args = append(args, "--standby")
	}
	for _, q := range queues {
		args = append(args, "--queue", q)
	}
	return startBinary(t, args...)
}

// waitReady waits for p's ready line and returns its SMF and SEMP URLs.
func waitReady(t *testing.T, p *proc, timeout time.Duration) *brokerProc {
	t.Helper()
	var m []string
	require.Eventually(t, func() bool {
		m = devbrokerReady.FindStringSubmatch(p.out.String())
		return m != nil
	}, timeout, 5*time.Millisecond, "devbroker not ready:\n%s", p.out.String())
	return &brokerProc{p: p, smf: m[1], semp: m[2]}
}

func newBrokerPair(t *testing.T, takeover bool, queues ...string) *brokerPair {
	t.Helper()
	h := &brokerPair{takeover: takeover, dir: t.TempDir(), queues: queues,
		activeAddr: [2]string{freeAddr(t), freeAddr(t)}}
	h.active = waitReady(t, startDevbroker(t, h.dir, h.activeAddr[0], h.activeAddr[1], false, queues), 30*time.Second)
	h.urls = []string{h.active.smf}
	if takeover {
		h.standbyAt = [2]string{freeAddr(t), freeAddr(t)}
		h.standby = startDevbroker(t, h.dir, h.standbyAt[0], h.standbyAt[1], true, queues)
		require.Eventually(t, func() bool { return strings.Contains(h.standby.out.String(), "standby: waiting") },
			30*time.Second, 5*time.Millisecond, "standby did not start waiting:\n%s", h.standby.out.String())
		h.urls = append(h.urls, "tcp://"+h.standbyAt[0])
	}
	return h
}

// fail kills the active broker with SIGKILL and brings up its successor:
// the same directory and address again, or the standby.
func (h *brokerPair) fail(t *testing.T) {
	t.Helper()
	require.NoError(t, h.active.p.cmd.Process.Signal(syscall.SIGKILL))
	_ = h.active.p.wait(t, 10*time.Second)
	if h.takeover {
		h.active = waitReady(t, h.standby, 30*time.Second)
		return
	}
	h.active = waitReady(t, startDevbroker(t, h.dir, h.activeAddr[0], h.activeAddr[1], false, h.queues), 30*time.Second)
}

// spooled is the number of messages queue holds, over SEMP.
func (h *brokerPair) spooled(t *testing.T, queue string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, h.active.semp+"/SEMP/v2/monitor/msgVpns/default/queues/"+queue, nil)
	require.NoError(t, err)
	req.SetBasicAuth("admin", "admin")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return -1 // between a kill and the successor
	}
	defer resp.Body.Close()
	var body struct {
		Data struct {
			SpooledMsgCount int `json:"spooledMsgCount"`
		} `json:"data"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&body) != nil {
		return -1
	}
	return body.Data.SpooledMsgCount
}

// drain consumes queue through the Go client until the broker holds
// nothing, and returns each payload's count.
func (h *brokerPair) drain(t *testing.T, queue string) map[string]int {
	t.Helper()
	svc, err := messaging.NewMessagingServiceBuilder().FromConfigurationProvider(config.ServicePropertyMap{
		config.TransportLayerPropertyHost:                h.active.smf,
		config.ServicePropertyVPNName:                    "default",
		config.AuthenticationPropertySchemeBasicUserName: "default",
		config.AuthenticationPropertySchemeBasicPassword: "default",
	}).Build()
	require.NoError(t, err)
	require.NoError(t, svc.Connect())
	defer func() { _ = svc.Disconnect() }()
	rcv, err := svc.CreatePersistentMessageReceiverBuilder().Build(resource.QueueDurableExclusive(queue))
	require.NoError(t, err)
	require.NoError(t, rcv.Start())
	defer func() { _ = rcv.Terminate(time.Second) }()
	seen := map[string]int{}
	for h.spooled(t, queue) != 0 {
		msg, err := rcv.ReceiveMessage(200 * time.Millisecond)
		if err != nil {
			continue // not settled yet: ask the broker again
		}
		b, _ := msg.GetPayloadAsBytes()
		seen[string(b)]++
		require.NoError(t, rcv.Ack(msg))
	}
	return seen
}

// waitFor polls cond, failing with the processes' output.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool, procs ...*proc) {
	t.Helper()
	if !assertEventually(cond, timeout) {
		var out strings.Builder
		for _, p := range procs {
			out.WriteString(p.out.String())
		}
		t.Fatalf("%s: not within %v\n%s", what, timeout, out.String())
	}
}

func assertEventually(cond func() bool, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return cond()
}

// solaceConn is a pipeline's solace connection to the pair, reconnecting
// quickly and for as long as it takes.
func (h *brokerPair) solaceConn() string {
	return fmt.Sprintf(`urls: [ %s ]
    username: default
    password: default
    reconnect_attempts: -1
    reconnect_interval: 100ms`, strings.Join(h.urls, ", "))
}

// produce runs a pipeline that publishes ids 1..n persistently to queue.
func (h *brokerPair) produce(t *testing.T, dir, queue string, n int) *proc {
	t.Helper()
	path := filepath.Join(dir, "produce-"+queue+".yaml")
	require.NoError(t, writeFile(path, fmt.Sprintf(`
input:
  generate: { count: %d, interval: "", mapping: 'root = counter().string()' }
output:
  solace:
    %s
    queue: %s
logger: { level: warn }
`, n, h.solaceConn(), queue)))
	return startBinary(t, "run", path)
}

// checkIDs requires ids 1..n each at least once, and only those.
func checkIDs(t *testing.T, seen map[string]int, n int, what string) (dups int) {
	t.Helper()
	var missing []int
	for i := 1; i <= n; i++ {
		c := seen[strconv.Itoa(i)]
		if c == 0 {
			missing = append(missing, i)
		}
		dups += max(c-1, 0)
	}
	require.Empty(t, missing, "%s: acknowledged messages lost", what)
	require.Len(t, seen, n, "%s: only the ids sent", what)
	return dups
}

func failoverModes() []struct {
	name     string
	takeover bool
} {
	return []struct {
		name     string
		takeover bool
	}{{"restart", false}, {"takeover", true}}
}

// TestBrokerFailoverOutput publishes 20 000 persistent messages through the
// solace output while the broker is killed: once the pipeline has finished
// (every message confirmed), the queue holds every id.
func TestBrokerFailoverOutput(t *testing.T) {
	for _, mode := range failoverModes() {
		t.Run(mode.name, func(t *testing.T) {
			h := newBrokerPair(t, mode.takeover, "out")
			p := h.produce(t, t.TempDir(), "out", failoverMsgs)
			waitFor(t, "a quarter spooled", 60*time.Second, func() bool { return h.spooled(t, "out") >= failoverMsgs/4 }, p)
			atKill := h.spooled(t, "out")
			h.fail(t)
			require.NoError(t, p.wait(t, 60*time.Second), "the producer finishes once every message is confirmed:\n%s", p.out.String())
			seen := h.drain(t, "out")
			dups := checkIDs(t, seen, failoverMsgs, "output")
			t.Logf("%s: killed at %d of %d spooled; %d duplicates", mode.name, atKill, failoverMsgs, dups)
			require.Less(t, atKill, failoverMsgs, "the kill lands mid-stream")
		})
	}
}

// consumedLine is one line the consuming pipelines write: the id and
// whether the message came flagged redelivered.
const consumedMapping = `root = content().string() + " " + (@solace_redelivered | "false").string()`

// checkRedelivered parses "id flag" lines and requires every copy of an id
// after its first to be flagged redelivered; it returns each id's count.
func checkRedelivered(t *testing.T, lines []string) map[string]int {
	t.Helper()
	seen := map[string]int{}
	for _, l := range lines {
		id, flag, ok := strings.Cut(l, " ")
		require.True(t, ok, "line %q", l)
		if seen[id] > 0 {
			require.Equal(t, "true", flag, "repeated delivery of %s without solace_redelivered", id)
		}
		seen[id]++
	}
	return seen
}

// TestBrokerFailoverInput consumes 20 000 messages from a queue through the
// solace input while the broker is killed: every id reaches the output, and
// every repeat is flagged redelivered.
func TestBrokerFailoverInput(t *testing.T) {
	for _, mode := range failoverModes() {
		t.Run(mode.name, func(t *testing.T) {
			dir := t.TempDir()
			h := newBrokerPair(t, mode.takeover, "in")
			prod := h.produce(t, dir, "in", failoverMsgs)
			require.NoError(t, prod.wait(t, 60*time.Second), "%s", prod.out.String())

			outFile := filepath.Join(dir, "consumed.txt")
			path := filepath.Join(dir, "consume.yaml")
			require.NoError(t, writeFile(path, fmt.Sprintf(`
input:
  solace:
    %s
    queue: in
pipeline:
  processors:
    - mapping: '%s'
output:
  file: { path: %s, codec: lines }
logger: { level: warn }
`, h.solaceConn(), consumedMapping, outFile)))
			p := startBinary(t, "run", path)
			lines := func() []string {
				data, _ := os.ReadFile(outFile)
				return strings.Split(strings.TrimSpace(string(data)), "\n")
			}
			waitFor(t, "a quarter consumed", 60*time.Second, func() bool { return len(lines()) >= failoverMsgs/4 }, p)
			atKill := len(lines())
			h.fail(t)
			waitFor(t, "queue drained", 60*time.Second, func() bool { return h.spooled(t, "in") == 0 }, p, h.active.p)
			require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
			require.NoError(t, p.wait(t, 30*time.Second), "%s", p.out.String())
			dups := checkIDs(t, checkRedelivered(t, lines()), failoverMsgs, "input")
			t.Logf("%s: killed after %d of %d consumed; %d duplicates, each flagged redelivered", mode.name, atKill, failoverMsgs, dups)
			require.Less(t, atKill, failoverMsgs, "the kill lands mid-stream")
		})
	}
}

// TestBrokerFailoverBridge moves 20 000 messages from one queue to another
// through a solace input → solace output pipeline while the broker is
// killed: the second queue ends with every id, and every repeat the input
// saw is flagged redelivered.
func TestBrokerFailoverBridge(t *testing.T) {
	for _, mode := range failoverModes() {
		t.Run(mode.name, func(t *testing.T) {
			dir := t.TempDir()
			h := newBrokerPair(t, mode.takeover, "src", "dst")
			prod := h.produce(t, dir, "src", failoverMsgs)
			require.NoError(t, prod.wait(t, 60*time.Second), "%s", prod.out.String())

			path := filepath.Join(dir, "bridge.yaml")
			require.NoError(t, writeFile(path, fmt.Sprintf(`
input:
  solace:
    %[1]s
    queue: src
pipeline:
  processors:
    - mapping: '%[2]s'
output:
  solace:
    %[1]s
    queue: dst
logger: { level: warn }
`, h.solaceConn(), consumedMapping)))
			p := startBinary(t, "run", path)
			waitFor(t, "a quarter bridged", 60*time.Second, func() bool { return h.spooled(t, "dst") >= failoverMsgs/4 }, p)
			atKill := h.spooled(t, "dst")
			h.fail(t)
			waitFor(t, "source drained", 60*time.Second, func() bool { return h.spooled(t, "src") == 0 }, p, h.active.p)
			require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
			require.NoError(t, p.wait(t, 30*time.Second), "%s", p.out.String())
			var lines []string
			for l, c := range h.drain(t, "dst") {
				for range c {
					lines = append(lines, l)
				}
			}
			// Order is lost in the map: check the flags per id instead of
			// per position: all copies but one must be flagged.
			perID := map[string][2]int{} // copies, flagged
			for _, l := range lines {
				id, flag, _ := strings.Cut(l, " ")
				c := perID[id]
				c[0]++
				if flag == "true" {
					c[1]++
				}
				perID[id] = c
			}
			seen := map[string]int{}
			for id, c := range perID {
				require.GreaterOrEqual(t, c[1], c[0]-1, "repeated delivery of %s without solace_redelivered", id)
				seen[id] = c[0]
			}
			dups := checkIDs(t, seen, failoverMsgs, "bridge")
			t.Logf("%s: killed at %d of %d bridged; %d duplicates, each flagged redelivered", mode.name, atKill, failoverMsgs, dups)
			require.Less(t, atKill, failoverMsgs, "the kill lands mid-stream")
		})
	}
}
