package amqpwire

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"math"
	"net"
	"testing"
	"time"
)

// FuzzReadFrame feeds arbitrary bytes to the frame reader and to the
// decoders of every performative the reader acts on: a hostile peer must
// get an error, never a panic.
func FuzzReadFrame(f *testing.F) {
	seeds := [][]byte{
		appendFlow(nil, 0, 1, 100, 0, 100, &linkFlow{handle: 1, deliveryCount: 2, credit: 3, drain: true}),
		appendDetach(nil, 1, 2, true),
		appendClose(nil, &Error{Condition: "amqp:internal-error", Description: "x"}),
		appendTransfer(nil, 0, 1, 2, true, true, []byte("abc")),
		appendBegin(nil, 0, 0, 10, 10, 10),
		heartbeat,
	}
	if b, err := appendOpen(nil, openParams{containerID: "c", maxFrameSize: 512, idleTimeout: 10}); err == nil {
		seeds = append(seeds, b)
	}
	if b, err := appendAttach(nil, 0, attachParams{name: "n", target: "t", capabilities: []string{"queue"}, properties: map[string]any{"k": "v"}}); err == nil {
		seeds = append(seeds, b)
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		br := bufio.NewReader(bytes.NewReader(data))
		var fr frame
		var buf []byte
		for range 8 {
			var err error
			if buf, err = readFrame(br, buf, &fr); err != nil {
				return
			}
			_, _ = decodeOpen(fr.fields)
			_, _ = decodeBegin(fr.fields)
			_, _ = decodeAttach(fr.fields)
			_, _ = decodeFlow(fr.fields)
			_, _ = decodeDisposition(fr.fields)
			_, _ = decodeDetach(fr.fields)
			_, _ = decodeEndOrClose(fr.fields)
			for i := range fr.fields {
				_, _ = Value(fr.fields[i])
				_, _ = fields(fr.fields).symbols(i)
			}
			_, _ = Value(fr.payload)
		}
	})
}

// peerFrame builds a frame of the peer's side for the fuzz peer.
func peerFrame(typ byte, ch uint16, code byte, fill func(c *composite)) []byte {
	b, fs := beginFrameBuf(nil, typ, ch)
	c := beginComposite(b, code)
	fill(&c)
	return endFrameBuf(c.end(), fs)
}

// fuzzPeerScript is what a peer sends a sender up to a granted link: SASL
// mechanisms, outcome, open, begin, attach and flow.
func fuzzPeerScript() (sasl, outcome, open, begin, attach []byte) {
	sasl = append(append([]byte(nil), saslHeader...), peerFrame(frameSASL, 0, codeSASLMechanisms, func(c *composite) { c.symbols([]string{"ANONYMOUS"}) })...)
	outcome = peerFrame(frameSASL, 0, codeSASLOutcome, func(c *composite) { c.ubyte(0) })
	open = append(append([]byte(nil), amqpHeader...), peerFrame(frameAMQP, 0, codeOpen, func(c *composite) {
		_ = c.str("peer")
		c.omit()
		c.uint(512) // small frames: transfers are split
	})...)
	begin = peerFrame(frameAMQP, 3, codeBegin, func(c *composite) {
		c.ushort(0)
		c.uint(0)
		c.uint(100)
		c.uint(100)
	})
	attach = append(peerFrame(frameAMQP, 3, codeAttach, func(c *composite) {
		_ = c.str("l")
		c.uint(7)
		c.bool(true)
		c.omit()
		c.omit()
		c.raw(func(b []byte) []byte { s := beginComposite(b, codeSource); return s.end() })
		c.raw(func(b []byte) []byte { s := beginComposite(b, codeTarget); _ = s.str("q"); return s.end() })
	}), peerFrame(frameAMQP, 3, codeFlow, func(c *composite) {
		c.uint(0)
		c.uint(100)
		c.uint(0)
		c.uint(100)
		c.uint(7)
		c.uint(0)
		c.uint(100)
	})...)
	return
}

// FuzzConnHostilePeer runs a real Conn against a peer that completes the
// handshake, grants credit, and then sends arbitrary bytes while the client
// transfers: whatever arrives, the client must not panic or hang, and every
// delivery must end with an outcome or an error.
func FuzzConnHostilePeer(f *testing.F) {
	ch3 := func(code byte, fill func(c *composite)) []byte { return peerFrame(frameAMQP, 3, code, fill) }
	f.Add(ch3(codeDisposition, func(c *composite) {
		c.bool(true)
		c.uint(0)
		c.uint(math.MaxUint32)
		c.bool(true)
		c.raw(func(b []byte) []byte { s := beginComposite(b, codeAccepted); return s.end() })
	}))
	f.Add(ch3(codeDetach, func(c *composite) { c.uint(7); c.bool(true) }))
	f.Add(ch3(codeEnd, func(c *composite) {}))
	f.Add(append(ch3(codeFlow, func(c *composite) {
		c.uint(0)
		c.uint(0)
		c.uint(0)
		c.uint(0)
		c.uint(7)
		c.uint(0)
		c.uint(0)
		c.omit()
		c.bool(true)
		c.bool(true)
	}), heartbeat...))
	f.Add(peerFrame(frameAMQP, 0, codeClose, func(c *composite) {}))
	f.Add([]byte{0, 0, 0, 9, 2, 0, 0, 3, 0})
	f.Add([]byte{})
	sasl, outcome, open, begin, attach := fuzzPeerScript()
	f.Fuzz(func(t *testing.T, data []byte) {
		client, server := net.Pipe()
		defer client.Close()
		go func() {
			br := bufio.NewReader(server)
			var fr frame
			var buf []byte
			step := func(n int, reply []byte) bool {
				if n == 8 {
					var h [8]byte
					if _, err := io.ReadFull(br, h[:]); err != nil {
						return false
					}
				}
				for range max(0, n-8) {
					var err error
					if buf, err = readFrame(br, buf, &fr); err != nil {
						return false
					}
				}
				_, err := server.Write(reply)
				return err == nil
			}
			// header; sasl-init; header+open; begin; attach.
			if !step(8, sasl) || !step(9, outcome) || !step(8, nil) || !step(9, open) || !step(9, begin) || !step(9, attach) {
				_ = server.Close()
				return
			}
			go func() { _, _ = io.Copy(io.Discard, server) }()
			_, _ = server.Write(data)
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c, err := Open(ctx, client, Config{})
		if err != nil {
			t.Fatalf("handshake: %v", err)
		}
		defer c.Close()
		s, err := c.NewSession(ctx)
		if err != nil {
			return
		}
		l, err := s.NewSender(ctx, SenderOptions{Name: "l", Target: "q"})
		if err != nil {
			if len(data) == 0 {
				t.Fatalf("the scripted peer must reach an attached link: %v", err)
			}
			return
		}
		ds := make([]Delivery, 3)
		b := NewBatch()
		// A peer that grants no credit or window holds the transfer: bound it.
		tctx, tcancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer tcancel()
		n, _ := l.Transfer(tctx, [][]byte{[]byte("a"), bytes.Repeat([]byte("b"), 2000), nil}, ds, b)
		_ = server.Close() // end the peer's stream: every delivery must now finish
		if err := b.Wait(ctx); err != nil {
			t.Fatalf("deliveries still pending after the connection ended: %v", err)
		}
		c.Abandon(ds)
		for i, d := range ds[:n] {
			if !d.Finished() {
				t.Fatalf("delivery %d has neither outcome nor error", i)
			}
		}
	})
}
