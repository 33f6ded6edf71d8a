package amqpwire

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// tcpPair returns the two ends of a loopback TCP connection.
func tcpPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	server = <-accepted
	require.NotNil(t, server)
	t.Cleanup(func() { _ = client.Close(); _ = server.Close() })
	return client, server
}

// TestSocketIO checks the connection's socket calls behave as net.Conn's:
// a write larger than the socket buffers waits for the peer to read (and
// arrives whole), a read waits for data, deadlines fail them with a timeout,
// and a closed peer reads as io.EOF.
func TestSocketIO(t *testing.T) {
	t.Run("a large write arrives whole", func(t *testing.T) {
		client, server := tcpPair(t)
		_, write := socketIO(client)
		read, _ := socketIO(server)
		data := make([]byte, 16<<20) // far more than the socket buffers hold
		_, _ = rand.Read(data)
		got := make(chan []byte, 1)
		go func() {
			var buf bytes.Buffer
			p := make([]byte, 4096)
			for buf.Len() < len(data) {
				n, err := read(p)
				if err != nil {
					break
				}
				buf.Write(p[:n])
			}
			got <- buf.Bytes()
		}()
		n, err := write(data)
		require.NoError(t, err)
		require.Equal(t, len(data), n)
		require.True(t, bytes.Equal(data, <-got))
	})
	t.Run("deadlines time out", func(t *testing.T) {
		client, server := tcpPair(t)
		read, write := socketIO(client)
		require.NoError(t, client.SetReadDeadline(time.Now().Add(20*time.Millisecond)))
		_, err := read(make([]byte, 10))
		require.ErrorIs(t, err, os.ErrDeadlineExceeded)
		var ne net.Error
		require.True(t, errors.As(err, &ne) && ne.Timeout(), "%v", err)

		// The peer reads nothing: the buffers fill, then the deadline ends
		// the write.
		require.NoError(t, client.SetWriteDeadline(time.Now().Add(50*time.Millisecond)))
		n, err := write(make([]byte, 64<<20))
		require.ErrorIs(t, err, os.ErrDeadlineExceeded)
		require.Less(t, n, 64<<20)
		_ = server
	})
	t.Run("closed peer reads as EOF", func(t *testing.T) {
		client, server := tcpPair(t)
		read, _ := socketIO(client)
		_, write := socketIO(server)
		_, err := write([]byte("bye"))
		require.NoError(t, err)
		require.NoError(t, server.Close())
		all, err := io.ReadAll(readerFunc(read))
		require.NoError(t, err)
		require.Equal(t, "bye", string(all))
	})
	t.Run("closing our end ends a waiting read", func(t *testing.T) {
		client, _ := tcpPair(t)
		read, _ := socketIO(client)
		done := make(chan error, 1)
		go func() {
			_, err := read(make([]byte, 10))
			done <- err
		}()
		require.NoError(t, client.Close())
		require.ErrorIs(t, <-done, net.ErrClosed)
	})
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }
