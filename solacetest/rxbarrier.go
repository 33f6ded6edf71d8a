package solacetest

// This file is the receive barrier behind SEMP's view of a client: before
// the broker reports a client's counters, it processes what that client has
// already sent and is waiting in the socket. Without it a test that
// publishes and then asks SEMP at once races the broker's read loop; a real
// broker's slower management plane hides the race, and Solace's own suite
// relies on that.

import (
	"io"
	"net"
	"sync/atomic"
	"time"
)

// rxBarrierWait bounds how long a SEMP read waits for a client's pending
// bytes to be processed.
const rxBarrierWait = 200 * time.Millisecond

// rxCounter counts the bytes a connection's read loop takes from the socket
// (raw) and the bytes of the frames it has handled (done).
type rxCounter struct {
	raw, done atomic.Int64
}

// countingReader counts what it reads into n.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// settleRx waits until the read loop has handled every byte that has
// reached the broker: what the loop has read but not handled yet, and what
// is still in the kernel's receive buffer. Because a client API may still be
// writing what its caller just "sent" (the Solace C library writes from its
// own thread), it then watches the socket for rxQuiet more and starts over
// if bytes came. It gives up after rxBarrierWait, and does nothing for
// transports whose socket bytes are not SMF bytes (TLS, compression,
// WebSocket).
func (c *conn) settleRx() {
	tcp, ok := c.nc.(*net.TCPConn)
	if !ok {
		return
	}
	deadline := time.Now().Add(rxBarrierWait)
	quietSince := time.Time{}
	for time.Now().Before(deadline) {
		pending, ok := socketPending(tcp)
		if !ok {
			return
		}
		busy := pending > 0 || c.rx.done.Load() < c.rx.raw.Load()
		switch {
		case busy:
			quietSince = time.Time{}
		case quietSince.IsZero():
			quietSince = time.Now()
		case time.Since(quietSince) >= rxQuiet:
			return
		}
		select {
		case <-c.closed:
			return
		case <-time.After(200 * time.Microsecond):
		}
	}
}

// rxQuiet is how long a client's socket must stay idle before SEMP reports
// its counters.
const rxQuiet = 3 * time.Millisecond
