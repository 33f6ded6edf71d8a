package amqpwire

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scriptedPeer answers the handshake like fuzzPeerScript, with an open
// that asks for idleMS, then hands each frame it reads to onFrame until the
// client closes.
func scriptedPeer(t *testing.T, idleMS uint32, onFrame func(fr *frame)) net.Conn {
	t.Helper()
	client, server := net.Pipe()
	sasl, outcome, _, _, _ := fuzzPeerScript()
	open := append(append([]byte(nil), amqpHeader...), peerFrame(frameAMQP, 0, codeOpen, func(c *composite) {
		_ = c.str("peer")
		c.omit()
		c.omit()
		c.omit()
		c.uint(idleMS)
	})...)
	go func() {
		defer server.Close()
		br := bufio.NewReader(server)
		var fr frame
		var buf []byte
		var h [8]byte
		read := func() bool {
			var err error
			buf, err = readFrame(br, buf, &fr)
			return err == nil
		}
		if _, err := io.ReadFull(br, h[:]); err != nil {
			return
		}
		_, _ = server.Write(sasl)
		if !read() {
			return
		}
		_, _ = server.Write(outcome)
		if _, err := io.ReadFull(br, h[:]); err != nil || !read() {
			return
		}
		_, _ = server.Write(open)
		for read() {
			onFrame(&fr)
			if fr.code == codeClose {
				_, _ = server.Write(peerFrame(frameAMQP, 0, codeClose, func(*composite) {}))
			}
		}
	}()
	t.Cleanup(func() { _ = client.Close() })
	return client
}

// TestHeartbeatsSent has the peer ask for an idle timeout of 40ms: the idle
// client sends empty frames well within it.
func TestHeartbeatsSent(t *testing.T) {
	beats := make(chan struct{}, 16)
	nc := scriptedPeer(t, 40, func(fr *frame) {
		if fr.code == 0 {
			select {
			case beats <- struct{}{}:
			default:
			}
		}
	})
	c, err := Open(t.Context(), nc, Config{})
	require.NoError(t, err)
	defer c.Close()
	for range 3 {
		select {
		case <-beats:
		case <-time.After(5 * time.Second):
			t.Fatal("no heartbeat from the idle client")
		}
	}
	assert.NoError(t, c.Err())
}

// TestIdleTimeoutFails has a peer that never sends anything after open:
// with our idle timeout of 60ms the connection fails, saying why.
func TestIdleTimeoutFails(t *testing.T) {
	nc := scriptedPeer(t, 0, func(*frame) {})
	c, err := Open(t.Context(), nc, Config{IdleTimeout: 60 * time.Millisecond})
	require.NoError(t, err)
	defer c.Close()
	select {
	case <-c.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the silent peer was not noticed")
	}
	var ce *ConnError
	require.ErrorAs(t, c.Err(), &ce)
	assert.Contains(t, ce.Error(), "idle timeout of 60ms")
	_, err = c.NewSession(context.Background())
	assert.True(t, errors.As(err, &ce), "a dead connection refuses new sessions")
}

// TestCloseWithPeerNotReading has a peer that stops reading: Close still
// returns promptly instead of waiting out the write timeout.
func TestCloseWithPeerNotReading(t *testing.T) {
	stuck := make(chan struct{})
	t.Cleanup(func() { close(stuck) })
	nc := scriptedPeer(t, 0, func(*frame) { <-stuck })
	c, err := Open(t.Context(), nc, Config{WriteTimeout: time.Minute})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err = c.NewSession(ctx) // the peer reads the begin, then stops
	require.ErrorIs(t, err, context.DeadlineExceeded)
	done := make(chan struct{})
	go func() {
		_ = c.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close waited for a peer that does not read")
	}
}
