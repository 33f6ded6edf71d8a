package faultproxy

import (
	"bufio"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// echoServer answers every line with the same line.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

func newProxy(t *testing.T) *Proxy {
	t.Helper()
	p, err := New(echoServer(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func dial(t *testing.T, p *Proxy) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c, bufio.NewReader(c)
}

func roundTrip(t *testing.T, c net.Conn, r *bufio.Reader, line string) {
	t.Helper()
	_, err := io.WriteString(c, line+"\n")
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
	got, err := r.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, line+"\n", got)
}

func TestForwards(t *testing.T) {
	p := newProxy(t)
	c, r := dial(t, p)
	roundTrip(t, c, r, "hello")
	require.Equal(t, 1, p.Accepted())
	require.Equal(t, 1, p.Open())
}

func TestBlackHoleHoldsThenResumes(t *testing.T) {
	p := newProxy(t)
	c, r := dial(t, p)
	roundTrip(t, c, r, "before")

	p.BlackHole()
	_, err := io.WriteString(c, "held\n")
	require.NoError(t, err)
	// Nothing comes back while the proxy is black-holed, and the socket
	// stays open: the read times out rather than failing.
	require.NoError(t, c.SetReadDeadline(time.Now().Add(200*time.Millisecond)))
	_, err = r.ReadString('\n')
	var ne net.Error
	require.ErrorAs(t, err, &ne)
	require.True(t, ne.Timeout(), "read during a black-hole times out: %v", err)

	// A connection made during the black-hole is silent too.
	c2, r2 := dial(t, p)
	_, err = io.WriteString(c2, "new\n")
	require.NoError(t, err)

	p.Resume()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
	got, err := r.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "held\n", got, "held bytes are forwarded after Resume")
	require.NoError(t, c2.SetReadDeadline(time.Now().Add(5*time.Second)))
	got, err = r2.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "new\n", got)
	roundTrip(t, c, r, "after")
}

func TestBlackHoleThenClose(t *testing.T) {
	p := newProxy(t)
	c, r := dial(t, p)
	roundTrip(t, c, r, "before")
	<-p.BlackHoleFor(100*time.Millisecond, true)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, err := r.ReadString('\n')
	require.Error(t, err)
	require.False(t, isTimeout(err), "the connection was reset, not left silent: %v", err)
	// New connections forward again.
	c2, r2 := dial(t, p)
	roundTrip(t, c2, r2, "again")
}

func TestReset(t *testing.T) {
	p := newProxy(t)
	c, r := dial(t, p)
	roundTrip(t, c, r, "before")
	p.Reset()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, err := r.ReadString('\n')
	require.True(t, errors.Is(err, syscall.ECONNRESET), "reset reaches the client as RST: %v", err)
	require.Eventually(t, func() bool { return p.Open() == 0 }, 5*time.Second, 5*time.Millisecond)
	c2, r2 := dial(t, p)
	roundTrip(t, c2, r2, "again")
}

func TestRefuseAndAccept(t *testing.T) {
	p := newProxy(t)
	c, r := dial(t, p)
	// Only a connection the proxy has accepted is open: one still in the
	// listen backlog is reset with the listener.
	roundTrip(t, c, r, "accepted and relayed")
	p.Refuse()
	_, err := net.Dial("tcp", p.Addr())
	require.True(t, errors.Is(err, syscall.ECONNREFUSED), "refused: %v", err)
	roundTrip(t, c, r, "open connections keep working")
	require.NoError(t, p.Accept())
	c2, r2 := dial(t, p)
	roundTrip(t, c2, r2, "accepted again")
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// A client's FIN reaches the server after what it sent, and the server's
// close reaches the client: a clean end stays clean through the proxy.
func TestCleanCloseIsForwarded(t *testing.T) {
	p := newProxy(t)
	c, r := dial(t, p)
	_, err := io.WriteString(c, "last\n")
	require.NoError(t, err)
	require.NoError(t, c.(*net.TCPConn).CloseWrite())
	require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
	rest, err := io.ReadAll(r)
	require.NoError(t, err, "EOF, not a reset")
	require.Equal(t, "last\n", string(rest))
	require.Eventually(t, func() bool { return p.Open() == 0 }, 5*time.Second, 5*time.Millisecond)
}
