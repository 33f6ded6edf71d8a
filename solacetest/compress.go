package solacetest

// This file is the compressed SMF transport. On PubSub+'s compressed port
// (55003 by default) the whole TCP byte stream, in each direction, is one raw
// DEFLATE stream (no zlib header) that the sender sync-flushes after each
// write, so the receiver can decode every frame as soon as it arrives. The
// SMF inside is unchanged.

import (
	"compress/flate"
	"crypto/tls"
	"io"
	"net"
	"sync"
)

// compressedListener wraps accepted connections in compressedConn.
type compressedListener struct{ net.Listener }

func (l compressedListener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return newCompressedConn(nc), nil
}

// compressedConn inflates what it reads and deflates what it writes.
type compressedConn struct {
	net.Conn
	r io.Reader

	wmu sync.Mutex
	w   io.Writer
}

func newCompressedConn(nc net.Conn) *compressedConn {
	return &compressedConn{Conn: nc, r: newInflateReader(nc), w: newDeflateWriter(nc)}
}

func (c *compressedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

func (c *compressedConn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.w.Write(p)
}

// Compressed TLS: on a TLS connection a client that wants compression says
// so in its login (ClientCtrl parameter 21, value 2) and needs the broker to
// advertise router capability 21. Everything after the login response is
// then DEFLATE-compressed inside TLS, both ways, as on the compressed port.
const (
	ccConnectionType  = 21
	connCompressedTLS = 2
	capCompressedTLS  = 21
)

// overTLS reports whether the client connected over TLS.
func (c *conn) overTLS() bool {
	_, ok := c.nc.(*tls.Conn)
	return ok
}

// startCompression makes both directions compressed after the frames queued
// so far (the login response). The read loop switches after this frame.
func (c *conn) startCompression() {
	c.inflateNext = true
	c.enqueue(nil)
}

// newInflateReader decompresses a raw DEFLATE stream.
func newInflateReader(r io.Reader) io.Reader { return flate.NewReader(r) }

// deflateWriter compresses into a raw DEFLATE stream, sync-flushing after
// every write so the peer can decode it at once.
type deflateWriter struct{ w *flate.Writer }

func newDeflateWriter(w io.Writer) io.Writer {
	fw, _ := flate.NewWriter(w, flate.DefaultCompression) // a valid level: no error
	return deflateWriter{fw}
}

func (d deflateWriter) Write(p []byte) (int, error) {
	n, err := d.w.Write(p)
	if err != nil {
		return n, err
	}
	return n, d.w.Flush()
}
