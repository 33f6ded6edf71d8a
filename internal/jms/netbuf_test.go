package jms

import (
	"bytes"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCoalescingConn checks writes arrive complete and in order, that a
// writer blocks while the buffer is full (backpressure) until the reader
// drains it, and that Close delivers what is still buffered.
func TestCoalescingConn(t *testing.T) {
	client, server := net.Pipe()
	cc := newCoalescingConn(client)
	var want bytes.Buffer
	chunk := bytes.Repeat([]byte("0123456789abcdef"), 1024) // 16 KiB
	const writes = 4 * maxPendingWrite / (16 << 10)         // 4x the buffer
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		for i := range writes {
			chunk[0] = byte(i)
			want.Write(chunk)
			_, err := cc.Write(chunk)
			assert.NoError(t, err)
		}
	}()
	select {
	case <-wrote:
		t.Fatal("writes did not block while nobody read: no backpressure")
	case <-time.After(100 * time.Millisecond):
	}
	var got bytes.Buffer
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _ = io.Copy(&got, server)
	}()
	<-wrote
	require.NoError(t, cc.SetWriteDeadline(time.Now().Add(time.Second)))
	_, err := cc.Write([]byte("tail"))
	require.NoError(t, err)
	want.WriteString("tail")
	require.NoError(t, cc.Close())
	wg.Wait()
	assert.Equal(t, want.Len(), got.Len())
	assert.True(t, bytes.Equal(want.Bytes(), got.Bytes()), "bytes arrive in order")
	_, err = cc.Write([]byte("late"))
	assert.Error(t, err, "write after close")
}

// TestCoalescingConnWriteError checks a failed flush surfaces on a later
// write and closes the connection.
func TestCoalescingConnWriteError(t *testing.T) {
	client, server := net.Pipe()
	cc := newCoalescingConn(client)
	require.NoError(t, server.Close())
	_, _ = cc.Write([]byte("x"))
	require.Eventually(t, func() bool {
		_, err := cc.Write([]byte("y"))
		return err != nil
	}, 5*time.Second, 5*time.Millisecond)
	_ = cc.Close()
}
