package input

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/semp"
	"github.com/connect-solace/connect-solace/solacetest"
)

// TestSolaceInputRecoversAStrandedFlow strands messages inside the Solace
// Go client as its stopFlow/startFlow race does, through the devbroker's
// IgnoreConsumerWindows fault: while the pipeline holds back, the broker
// delivers past the client's window and the client drops what overflows its
// buffer, unsettled. With the default check (every second) the input must
// find the stall once the pipeline has drained what the client kept, rebind
// the flow within a bounded time and count it in
// solace_input_stall_recoveries; every message must reach the pipeline, each
// redelivered copy flagged solace_redelivered, and the queue must end empty,
// with no broker restart.
func TestSolaceInputRecoversAStrandedFlow(t *testing.T) {
	const n = 1500
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	createQueueSEMP(t, b, semp.Queue{QueueName: "q", AccessType: semp.AccessTypeNonExclusive}, "t")
	newSiPublisher(t, b).send(t, "t", siPayloads("m", n), nil)
	// Delivery starts once the client has set its flow up (see solacetest's
	// TestIgnoredWindowStallsTheGoClient).
	b.Faults().PauseDelivery()
	res, metrics := siResourcesWithMetrics(t)
	r := newSiReaderWith(t, b, res, "queue: q\nreceive_buffer: 50\nbatch_size: 50\n")
	require.Eventually(t, func() bool { return strings.Contains(b.FlowState("default", "q"), "window=") }, 5*time.Second, time.Millisecond)
	b.Faults().IgnoreConsumerWindows(true)
	b.Faults().ResumeDelivery()
	require.Eventually(t, func() bool { return stats(t, b, "q").Unacked == n }, 10*time.Second, time.Millisecond,
		"state: %s", b.FlowState("default", "q"))
	// A real broker honours windows: the dropped messages stay delivered
	// and unsettled on the bound flow.
	b.Faults().IgnoreConsumerWindows(false)

	seen := map[string]int{}
	var redelivered int
	var recoveredAfter time.Duration
	start := time.Now()
	for len(seen) < n {
		before := metrics.get("solace_input_stall_recoveries")
		batch, ack := readBatch(t, r)
		for _, m := range batch {
			body, err := m.AsBytes()
			require.NoError(t, err)
			flag, _ := m.MetaGetMut("solace_redelivered")
			k := string(body)
			seen[k]++
			if flag == true {
				if redelivered == 0 {
					recoveredAfter = time.Since(start)
				}
				redelivered++
				continue
			}
			require.Equal(t, 1, seen[k], "a repeated delivery of %s is not flagged", k)
			require.Zero(t, before, "%s came unflagged after the flow was rebound", k)
		}
		require.NoError(t, ack(t.Context(), nil))
	}
	require.Positive(t, redelivered, "the client dropped nothing")
	require.GreaterOrEqual(t, metrics.get("solace_input_stall_recoveries"), int64(1))
	// The check runs every second and needs two readings.
	require.Less(t, recoveredAfter, 10*time.Second)
	t.Logf("%d messages, %d redelivered after %d recoveries; first redelivery %v after the pipeline started reading",
		n, redelivered, metrics.get("solace_input_stall_recoveries"), recoveredAfter)
	waitDepth(t, b, "q", 0)
}
