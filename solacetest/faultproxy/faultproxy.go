// Package faultproxy is an in-process TCP proxy that breaks the network
// between a client and a server on purpose, for tests of what a client does
// when the network misbehaves rather than when the server closes cleanly.
//
// Point the client at Proxy.Addr instead of the server. The proxy forwards
// bytes both ways until a test asks for a fault:
//
//   - Reset resets every open connection (TCP RST), as a crashed peer or a
//     middlebox dropping its state would.
//   - BlackHole stops forwarding in both directions while keeping every
//     socket open, as a network partition does: nothing arrives, nothing
//     fails. Bytes already read stay held in the proxy, like segments a TCP
//     stack would retransmit, and are forwarded after Resume. Connections
//     accepted during a black-hole are black-holed too. Reset during a
//     black-hole discards the held bytes, as a partition that outlives the
//     connections does.
//   - Refuse closes the listener so new connections are refused
//     (ECONNREFUSED) while open ones keep working; Accept reopens it on the
//     same port.
//
// The proxy works for any TCP protocol. It is shipped with solacetest
// because Solace clients are its main user, but it knows nothing of SMF, and
// it does not import the testing package, so a program can use it too.
package faultproxy

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Proxy is a running fault proxy. Its methods are safe for concurrent use.
type Proxy struct {
	target string
	addr   string

	mu       sync.Mutex
	ln       net.Listener // nil while refusing
	conns    map[*pair]struct{}
	gate     chan struct{} // closed while forwarding; open (nil-able) during a black-hole
	holed    bool
	closed   bool
	accepted atomic.Int64
	wg       sync.WaitGroup
}

// pair is one proxied connection: the client side and the server side.
type pair struct {
	client, server net.Conn
	once           sync.Once
	dead           chan struct{} // closed by reset
}

func (c *pair) reset() {
	c.once.Do(func() {
		close(c.dead)
		for _, nc := range []net.Conn{c.client, c.server} {
			if tc, ok := nc.(*net.TCPConn); ok {
				_ = tc.SetLinger(0) // close with RST, not FIN
			}
			_ = nc.Close()
		}
	})
}

// close closes both sockets normally once both directions ended.
func (c *pair) close() {
	c.once.Do(func() {
		close(c.dead)
		_ = c.client.Close()
		_ = c.server.Close()
	})
}

// New starts a proxy on 127.0.0.1 (an ephemeral port) that forwards to
// target ("host:port").
func New(target string) (*Proxy, error) {
	return Listen("127.0.0.1:0", target)
}

// Listen starts a proxy on addr that forwards to target.
func Listen(addr, target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("faultproxy: listening on %s: %w", addr, err)
	}
	gate := make(chan struct{})
	close(gate)
	p := &Proxy{target: target, addr: ln.Addr().String(), ln: ln, conns: map[*pair]struct{}{}, gate: gate}
	p.wg.Add(1)
	go p.acceptLoop(ln)
	return p, nil
}

// Addr is the proxy's "host:port"; clients connect here.
func (p *Proxy) Addr() string { return p.addr }

// Accepted counts the client connections accepted so far, so a test can
// tell that a client has reconnected.
func (p *Proxy) Accepted() int { return int(p.accepted.Load()) }

// Open counts the connections open right now.
func (p *Proxy) Open() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

func (p *Proxy) acceptLoop(ln net.Listener) {
	defer p.wg.Done()
	for {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		p.accepted.Add(1)
		p.wg.Add(1)
		go p.serve(nc)
	}
}

func (p *Proxy) serve(client net.Conn) {
	defer p.wg.Done()
	server, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		_ = client.Close()
		return
	}
	c := &pair{client: client, server: server, dead: make(chan struct{})}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		c.reset()
		return
	}
	p.conns[c] = struct{}{}
	p.mu.Unlock()
	var done sync.WaitGroup
	done.Add(2)
	go func() { defer done.Done(); p.pipe(c, server, client) }()
	go func() { defer done.Done(); p.pipe(c, client, server) }()
	done.Wait()
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.close()
}

// pipe copies src to dst, waiting at the gate before every write so that a
// black-hole holds what was read. A clean end of src half-closes dst, so a
// client's FIN reaches the server (after any held bytes).
func (p *Proxy) pipe(c *pair, dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.waitGate(c) {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				c.reset()
				return
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) && p.waitGate(c) {
				if tc, ok := dst.(*net.TCPConn); ok {
					_ = tc.CloseWrite()
					return
				}
			}
			c.reset()
			return
		}
	}
}

// waitGate blocks while the proxy is black-holed; it reports false when the
// connection was reset meanwhile.
func (p *Proxy) waitGate(c *pair) bool {
	p.mu.Lock()
	gate := p.gate
	p.mu.Unlock()
	select {
	case <-gate:
		select {
		case <-c.dead:
			return false
		default:
			return true
		}
	case <-c.dead:
		return false
	}
}

// Reset resets every open connection. Bytes held by a black-hole are
// discarded. New connections are accepted as before.
func (p *Proxy) Reset() {
	p.mu.Lock()
	cs := slices.Collect(maps.Keys(p.conns))
	clear(p.conns)
	p.mu.Unlock()
	for _, c := range cs {
		c.reset()
	}
}

// BlackHole stops forwarding on every connection, open or new, until Resume.
// Sockets stay open; peers see silence, not an error.
func (p *Proxy) BlackHole() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.holed {
		p.holed = true
		p.gate = make(chan struct{})
	}
}

// Resume ends a black-hole: held bytes are forwarded and forwarding goes on.
func (p *Proxy) Resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.holed {
		p.holed = false
		close(p.gate)
	}
}

// BlackHoleFor black-holes for d, then either resumes forwarding
// (thenClose false) or resets every connection and resumes for new ones
// (thenClose true). It returns at once; the returned channel is closed when
// the black-hole is over.
func (p *Proxy) BlackHoleFor(d time.Duration, thenClose bool) <-chan struct{} {
	p.BlackHole()
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(d)
		if thenClose {
			p.Reset()
		}
		p.Resume()
	}()
	return done
}

// Refuse closes the listener: new connections are refused until Accept.
// Open connections are not touched. A connection the kernel completed but
// the proxy had not yet accepted is reset with the listener, as it would be
// by a broker closing its port.
func (p *Proxy) Refuse() {
	p.mu.Lock()
	ln := p.ln
	p.ln = nil
	p.mu.Unlock()
	if ln != nil {
		_ = ln.Close()
	}
}

// Accept reopens the listener on the same address after Refuse.
func (p *Proxy) Accept() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil || p.closed {
		return nil
	}
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		return fmt.Errorf("faultproxy: listening again on %s: %w", p.addr, err)
	}
	p.ln = ln
	p.wg.Add(1)
	go p.acceptLoop(ln)
	return nil
}

// Close stops the proxy and resets every connection.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	ln := p.ln
	p.ln = nil
	p.mu.Unlock()
	if ln != nil {
		_ = ln.Close()
	}
	p.Reset()
	p.Resume()
	p.wg.Wait()
	return nil
}
