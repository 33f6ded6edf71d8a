package output

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/solacetest"
	"github.com/connect-solace/connect-solace/solacetest/faultproxy"
)

// goroutinesWith counts the goroutines whose stack (with its header, which
// names the state, e.g. "[select") holds every one of parts.
func goroutinesWith(parts ...string) int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
next:
	for _, g := range strings.Split(string(buf), "\n\n") {
		for _, p := range parts {
			if !strings.Contains(g, p) {
				continue next
			}
		}
		count++
	}
	return count
}

// closingDroppedPools counts the goroutines in which dropPool is still
// closing a pool.
func closingDroppedPools() int { return goroutinesWith("(*solaceWriter).dropPool", "(*Pool).Close") }

// soStalledDrop builds a writer reaching b through a proxy, black-holes the
// network while a persistent message waits for its confirmation, and drops
// the pool: its publisher then waits for that confirmation, so the drop's
// close hangs until the returned resume is called.
func soStalledDrop(t *testing.T) (w *solaceWriter, resume func()) {
	t.Helper()
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	p, err := faultproxy.New(strings.TrimPrefix(b.SMFURL(), "tcp://"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	w = newSoWriterURL(t, "tcp://"+p.Addr(), "topic: t\nclients: 1\n")
	w.poolMu.RLock()
	pool := w.pool
	w.poolMu.RUnlock()
	require.NotNil(t, pool)

	p.BlackHole()
	written := make(chan struct{})
	go func() {
		defer close(written)
		_ = w.WriteBatch(context.Background(), soBatch([]string{"m"}, nil))
	}()
	// The batch is published and waits for its confirmation.
	require.Eventually(t, func() bool {
		return goroutinesWith("[select", "(*Publisher).PublishBatch", "(*solaceWriter).WriteBatch") == 1
	}, 10*time.Second, 5*time.Millisecond)
	w.dropPool(pool)
	require.Eventually(t, func() bool {
		return closingDroppedPools() == 1 && goroutinesWith("(*poolSlot).close", "Terminate") == 1
	},
		10*time.Second, 5*time.Millisecond, "the dropped pool's publisher waits for the confirmation")
	var resumed bool
	resume = func() {
		if !resumed {
			resumed = true
			p.Resume()
			<-written
		}
	}
	t.Cleanup(resume)
	return w, resume
}

// TestSolaceOutputCloseWaitsForDroppedPools checks that Close returns only
// once the close of a dropped pool ended: no goroutine of the output
// outlives Close.
func TestSolaceOutputCloseWaitsForDroppedPools(t *testing.T) {
	w, resume := soStalledDrop(t)
	type result struct {
		err     error
		closing int
	}
	closed := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err := w.Close(ctx)
		closed <- result{err, closingDroppedPools()}
	}()
	// Close must not return while the network is down: give a Close that
	// does not wait the time to return (it takes microseconds), then let
	// the confirmation through.
	select {
	case r := <-closed:
		t.Fatalf("Close returned (%v) while the dropped pool was still closing (%d)", r.err, r.closing)
	case <-time.After(300 * time.Millisecond):
	}
	resume()
	r := <-closed
	require.NoError(t, r.err)
	require.Zero(t, r.closing, "a dropped pool's close outlived Close")
}

// TestSolaceOutputCloseIsBounded checks that Close gives up waiting for a
// dropped pool when its context ends.
func TestSolaceOutputCloseIsBounded(t *testing.T) {
	w, _ := soStalledDrop(t)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, w.Close(ctx), context.DeadlineExceeded)
}
