package amqpwire

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Config says how to open a connection.
type Config struct {
	HostName    string
	ContainerID string // random when empty
	// Username selects SASL PLAIN with Password; empty selects ANONYMOUS.
	// A SASL layer is always used: some brokers refuse a connection without.
	Username, Password string
	// IdleTimeout is ours: the peer must send something this often, or the
	// connection fails. 0 sends none.
	IdleTimeout time.Duration
	// WriteTimeout bounds a socket write; default 30s.
	WriteTimeout time.Duration
}

// maxFrameSize is the largest frame we accept (and advertise).
const maxFrameSize = 1 << 20

// maxPendingWrite bounds the write buffer: a sender blocks while it is full,
// so TCP backpressure reaches the callers.
const maxPendingWrite = 256 << 10

// SASLError is a refused SASL login; Code 1 is a wrong user or password.
type SASLError struct{ Code uint8 }

func (e *SASLError) Error() string {
	if e.Code == 1 {
		return "SASL authentication failed (code 1: auth)"
	}
	return fmt.Sprintf("SASL login refused with code %d (a broker-side error)", e.Code)
}

// ConnError says the connection ended: Remote is the peer's close error,
// if it sent one, Err the local cause.
type ConnError struct {
	Remote *Error
	Err    error
}

func (e *ConnError) Error() string {
	switch {
	case e.Remote != nil:
		return "connection closed by the peer: " + e.Remote.Error()
	case e.Err != nil:
		return "connection failed: " + e.Err.Error()
	}
	return "connection closed"
}

func (e *ConnError) Unwrap() []error {
	var out []error
	if e.Remote != nil {
		out = append(out, e.Remote)
	}
	if e.Err != nil {
		out = append(out, e.Err)
	}
	return out
}

// SessionError says the session ended, with the peer's error if any.
type SessionError struct{ Remote *Error }

func (e *SessionError) Error() string {
	if e.Remote != nil {
		return "session ended by the peer: " + e.Remote.Error()
	}
	return "session ended"
}

func (e *SessionError) Unwrap() error {
	if e.Remote == nil {
		return nil
	}
	return e.Remote
}

// LinkError says the link detached, with the peer's error if any.
type LinkError struct {
	Remote *Error
	Local  bool // we detached it
	// Cause is why we detached it, when we did for an error of the peer's
	// (a message over the size limit).
	Cause *Error
}

func (e *LinkError) Error() string {
	switch {
	case e.Remote != nil:
		return "link detached by the peer: " + e.Remote.Error()
	case e.Cause != nil:
		return "link detached: " + e.Cause.Error()
	case e.Local:
		return "link closed"
	}
	return "link detached by the peer"
}

func (e *LinkError) Unwrap() error {
	switch {
	case e.Remote != nil:
		return e.Remote
	case e.Cause != nil:
		return e.Cause
	}
	return nil
}

// ErrClosed is the cause of a connection that Close ended.
var ErrClosed = errors.New("connection closed by the client")

// Conn is an AMQP 1.0 connection for sender and receiver links. All its state, and the write
// buffer, is guarded by one mutex; callers encode frames into the buffer
// under it, and whichever caller finds no flush in progress writes the
// buffer to the socket (other callers' frames included) with the mutex
// released. One reader goroutine decodes the peer's frames, settling sent
// deliveries and queueing received ones on their links.
type Conn struct {
	nc net.Conn
	// read and write are the reader's and the flushes' path to nc
	// (socketIO).
	read, write func([]byte) (int, error)
	cfg         Config

	// From the peer's open.
	remoteMaxFrame uint32
	channelMax     uint16
	remoteIdle     time.Duration
	offeredCaps    []string
	properties     map[string]any
	remoteID       string

	mu       sync.Mutex
	wbuf     []byte
	spare    []byte
	flushing bool
	// kickPending says the flush in progress is a kicked goroutine that has
	// not started yet (see takeFlushLocked).
	kickPending bool
	err         *ConnError // set once the connection ended
	closing     bool       // we sent close
	sessions    map[uint16]*Session
	remote      map[uint16]*Session // by the peer's channel
	// changed is closed and replaced when state waiters care about changes
	// (credit, window, buffer space, a failure).
	changed chan struct{}
	waiters int

	// lastDisp is the disposition frame at the end of wbuf, which a
	// settlement of the next delivery-id with the same outcome extends
	// rather than adding a frame (end -1: none).
	lastDisp bufferedDisposition

	wdeadline time.Time // write deadline applied to the socket
	wrote     atomic.Bool
	lastRead  atomic.Int64
	done      chan struct{}
	readDone  chan struct{}
}

// Open runs the SASL and AMQP handshakes on nc, which must be connected
// (and TLS-wrapped if wanted), and starts the connection's reader.
func Open(ctx context.Context, nc net.Conn, cfg Config) (*Conn, error) {
	if cfg.ContainerID == "" {
		cfg.ContainerID = randomName("amqpwire-")
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = 30 * time.Second
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = nc.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Unix(1, 0)) })
	c := &Conn{nc: nc, cfg: cfg, sessions: map[uint16]*Session{}, remote: map[uint16]*Session{},
		changed: make(chan struct{}), done: make(chan struct{}), readDone: make(chan struct{})}
	c.lastDisp.end = -1
	c.read, c.write = socketIO(nc)
	br := bufio.NewReaderSize(&readTimer{c: c}, 64<<10)
	err := c.handshake(br)
	if !stop() && err == nil {
		err = ctx.Err()
	}
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%w)", ctx.Err(), err)
		}
		return nil, err
	}
	_ = nc.SetDeadline(time.Time{})
	c.lastRead.Store(time.Now().UnixNano())
	go c.readLoop(br)
	if c.remoteIdle > 0 || cfg.IdleTimeout > 0 {
		go c.keepAlive()
	}
	return c, nil
}

// readTimer records when the socket last delivered bytes, for the idle
// timeout.
type readTimer struct{ c *Conn }

func (r *readTimer) Read(p []byte) (int, error) {
	n, err := r.c.read(p)
	if n > 0 {
		r.c.lastRead.Store(time.Now().UnixNano())
	}
	return n, err
}

func randomName(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

var (
	saslHeader = []byte("AMQP\x03\x01\x00\x00")
	amqpHeader = []byte("AMQP\x00\x01\x00\x00")
)

func (c *Conn) handshake(br *bufio.Reader) error {
	if _, err := c.nc.Write(saslHeader); err != nil {
		return fmt.Errorf("writing the SASL header: %w", err)
	}
	if err := readHeader(br, saslHeader); err != nil {
		return err
	}
	var fr frame
	buf, err := readFrame(br, nil, &fr)
	if err != nil {
		return fmt.Errorf("reading sasl-mechanisms: %w", err)
	}
	if fr.typ != frameSASL || fr.code != codeSASLMechanisms {
		return fmt.Errorf("expected sasl-mechanisms, got frame type %d performative %#x", fr.typ, fr.code)
	}
	r := fieldReader{fr.fields, &err}
	mechs := r.symbols(0)
	if err != nil {
		return err
	}
	mech, initial := "ANONYMOUS", []byte{}
	if c.cfg.Username != "" {
		mech = "PLAIN"
		initial = slices.Concat([]byte{0}, []byte(c.cfg.Username), []byte{0}, []byte(c.cfg.Password))
	}
	if !slices.Contains(mechs, mech) {
		return fmt.Errorf("the broker does not offer SASL %s (it offers %v)", mech, mechs)
	}
	out, err := appendSASLInit(nil, mech, initial, c.cfg.HostName)
	clear(initial)
	if err != nil {
		return err
	}
	if _, err := c.nc.Write(out); err != nil {
		return fmt.Errorf("writing sasl-init: %w", err)
	}
	clear(out)
	if buf, err = readFrame(br, buf, &fr); err != nil {
		return fmt.Errorf("reading sasl-outcome: %w", err)
	}
	if fr.typ != frameSASL || fr.code != codeSASLOutcome {
		return fmt.Errorf("expected sasl-outcome, got frame type %d performative %#x", fr.typ, fr.code)
	}
	r = fieldReader{fr.fields, &err}
	code := r.uint(0, math.MaxUint32)
	if err != nil || code > 255 {
		return errors.New("sasl-outcome without a valid code")
	}
	if code != 0 {
		return &SASLError{Code: uint8(code)}
	}

	open, err := appendOpen(append([]byte(nil), amqpHeader...), openParams{
		containerID: c.cfg.ContainerID, hostname: c.cfg.HostName, maxFrameSize: maxFrameSize,
		channelMax: math.MaxUint16, idleTimeout: uint32(c.cfg.IdleTimeout / time.Millisecond),
	})
	if err != nil {
		return err
	}
	if _, err := c.nc.Write(open); err != nil {
		return fmt.Errorf("writing open: %w", err)
	}
	if err := readHeader(br, amqpHeader); err != nil {
		return err
	}
	for {
		if buf, err = readFrame(br, buf, &fr); err != nil {
			return fmt.Errorf("reading open: %w", err)
		}
		if fr.code != 0 {
			break // not a heartbeat
		}
	}
	if fr.typ != frameAMQP || fr.code != codeOpen {
		if fr.code == codeClose {
			cl, _ := decodeEndOrClose(fr.fields)
			return &ConnError{Remote: cl.err}
		}
		return fmt.Errorf("expected open, got performative %#x", fr.code)
	}
	o, err := decodeOpen(fr.fields)
	if err != nil {
		return fmt.Errorf("decoding open: %w", err)
	}
	c.remoteMaxFrame = max(min(o.maxFrameSize, math.MaxInt32), 512)
	c.channelMax = o.channelMax
	c.remoteIdle = time.Duration(o.idleTimeout) * time.Millisecond
	c.offeredCaps, c.properties, c.remoteID = o.offeredCaps, o.properties, o.containerID
	return nil
}

func readHeader(br *bufio.Reader, want []byte) error {
	var h [8]byte
	if _, err := io.ReadFull(br, h[:]); err != nil {
		return fmt.Errorf("reading the protocol header: %w", err)
	}
	if string(h[:]) != string(want) {
		return fmt.Errorf("unexpected protocol header %q (want %q)", h[:], want)
	}
	return nil
}

// readFrame reads one frame into buf (grown as needed) and parses it.
func readFrame(br *bufio.Reader, buf []byte, fr *frame) ([]byte, error) {
	hdr, err := br.Peek(8)
	if err != nil {
		return buf, err
	}
	size := binary.BigEndian.Uint32(hdr)
	if size < 8 || size > maxFrameSize {
		return buf, &Error{Condition: CondFramingError, Description: fmt.Sprintf("frame size %d out of range", size)}
	}
	if cap(buf) < int(size) {
		buf = make([]byte, size)
	}
	buf = buf[:size]
	if _, err := io.ReadFull(br, buf); err != nil {
		return buf, err
	}
	if err := parseFrame(buf, fr); err != nil {
		return buf, &Error{Condition: CondDecodeError, Description: err.Error()}
	}
	return buf, nil
}

// OfferedCapabilities are the capabilities of the peer's open frame.
func (c *Conn) OfferedCapabilities() []string { return c.offeredCaps }

// Properties are the peer's open-frame connection properties.
func (c *Conn) Properties() map[string]any { return c.properties }

// MaxFrameSize is the peer's maximum frame size.
func (c *Conn) MaxFrameSize() uint32 { return c.remoteMaxFrame }

// Done is closed when the connection has ended.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err is why the connection ended, nil while it is up.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		return nil
	}
	return c.err
}

// Close sends close, waits briefly for the peer's, and closes the socket.
func (c *Conn) Close() error {
	c.mu.Lock()
	if c.err != nil || c.closing {
		c.mu.Unlock()
		<-c.done
		return nil
	}
	c.closing = true
	// A peer that stopped reading must not hold Close for the write
	// timeout: the close frame gets a second.
	_ = c.nc.SetWriteDeadline(time.Now().Add(time.Second))
	c.wbuf = appendClose(c.wbuf, nil)
	c.flushNowLocked()
	c.mu.Unlock()
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case <-c.readDone:
	case <-t.C:
	}
	c.fail(&ConnError{Err: ErrClosed})
	return nil
}

// fail ends the connection with err (the first cause wins).
func (c *Conn) fail(err *ConnError) {
	c.mu.Lock()
	c.failLocked(err)
	c.mu.Unlock()
}

func (c *Conn) failLocked(err *ConnError) {
	if c.err != nil {
		return
	}
	c.err = err
	// Done first: a sender woken by its failed delivery sees the
	// connection lost.
	close(c.done)
	for _, s := range c.sessions {
		s.endLocked(err)
	}
	c.notifyLocked()
	_ = c.nc.Close()
}

// notifyLocked wakes every waiter on state changes.
func (c *Conn) notifyLocked() {
	if c.waiters > 0 {
		close(c.changed)
		c.changed = make(chan struct{})
	}
}

// waitLocked releases the mutex until the state changes or ctx ends.
func (c *Conn) waitLocked(ctx context.Context) error {
	ch := c.changed
	c.waiters++
	c.mu.Unlock()
	var err error
	select {
	case <-ch:
	case <-ctx.Done():
		err = ctx.Err()
	}
	c.mu.Lock()
	c.waiters--
	return err
}

// flushNowLocked writes the buffer unless a flush is in progress, which
// then writes it.
func (c *Conn) flushNowLocked() {
	if c.takeFlushLocked() {
		c.flushLocked()
	}
}

// takeFlushLocked makes the caller the flusher, and reports whether it is:
// when no flush is in progress, or when one was kicked off but its
// goroutine has not run yet. A frame that the peer waits for (credit, a
// sender's transfer) is then written at once rather than after however
// long the scheduler takes to start that goroutine, which under load is
// the better part of a round trip.
func (c *Conn) takeFlushLocked() bool {
	switch {
	case !c.flushing:
		c.flushing = true
		return true
	case c.kickPending:
		c.kickPending = false
		return true
	}
	return false
}

// kickLocked has the buffer written without blocking the caller (the
// reader must never block on the socket's write side).
func (c *Conn) kickLocked() {
	if !c.flushing && len(c.wbuf) > 0 {
		c.flushing, c.kickPending = true, true
		go func() {
			c.mu.Lock()
			if c.kickPending { // else another caller took the flush over
				c.kickPending = false
				c.flushLocked()
			}
			c.mu.Unlock()
		}()
	}
}

// flushLocked writes the buffer until it is empty, with the mutex released
// during each write. The caller set c.flushing.
func (c *Conn) flushLocked() {
	for len(c.wbuf) > 0 && c.err == nil {
		out := c.wbuf
		c.wbuf, c.spare = c.spare[:0], nil
		c.lastDisp.end = -1
		dl := time.Now().Add(c.cfg.WriteTimeout)
		setDL := !c.closing && dl.Sub(c.wdeadline) > time.Second
		if setDL {
			c.wdeadline = dl
		}
		c.mu.Unlock()
		var err error
		if setDL {
			err = c.nc.SetWriteDeadline(dl)
		}
		if err == nil {
			_, err = c.write(out)
		}
		c.wrote.Store(true)
		c.mu.Lock()
		if len(out) <= 4*maxPendingWrite {
			c.spare = out[:0]
		}
		if err != nil {
			c.failLocked(&ConnError{Err: err})
			break
		}
		c.notifyLocked()
	}
	c.flushing = false
	if c.err != nil {
		c.wbuf = c.wbuf[:0]
	}
}

// keepAlive sends heartbeats so the peer's idle timeout never fires, and
// fails the connection when the peer was silent for our idle timeout.
func (c *Conn) keepAlive() {
	tick := time.Hour
	if c.remoteIdle > 0 {
		tick = c.remoteIdle / 4
	}
	if c.cfg.IdleTimeout > 0 {
		tick = min(tick, c.cfg.IdleTimeout/4)
	}
	t := time.NewTicker(max(tick, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case now := <-t.C:
			if c.cfg.IdleTimeout > 0 && now.Sub(time.Unix(0, c.lastRead.Load())) > c.cfg.IdleTimeout {
				c.fail(&ConnError{Err: fmt.Errorf("nothing received from the peer for the idle timeout of %v", c.cfg.IdleTimeout)})
				return
			}
			if c.remoteIdle > 0 && !c.wrote.Swap(false) {
				c.mu.Lock()
				if c.err == nil && len(c.wbuf) == 0 {
					c.wbuf = append(c.wbuf, heartbeat...)
					c.kickLocked()
				}
				c.mu.Unlock()
			}
		}
	}
}

// readLoop decodes the peer's frames until the connection ends.
func (c *Conn) readLoop(br *bufio.Reader) {
	defer close(c.readDone)
	var (
		fr  frame
		buf []byte
		err error
	)
	fr.fields = make(fields, 0, maxFields)
	for {
		if buf, err = readFrame(br, buf, &fr); err != nil {
			break
		}
		if fr.code == 0 {
			continue // heartbeat
		}
		if fr.typ != frameAMQP {
			err = &Error{Condition: CondFramingError, Description: "unexpected SASL frame"}
			break
		}
		c.mu.Lock()
		stop, herr := c.handleLocked(&fr)
		c.mu.Unlock()
		if herr != nil {
			err = herr
			break
		}
		if stop {
			return
		}
	}
	c.mu.Lock()
	var pe *Error
	if errors.As(err, &pe) && c.err == nil && !c.closing {
		// Tell the peer why, best-effort.
		c.wbuf = appendClose(c.wbuf, pe)
		c.kickLocked()
	}
	closed := c.closing
	c.mu.Unlock()
	if closed {
		c.fail(&ConnError{Err: ErrClosed})
		return
	}
	if errors.Is(err, io.EOF) {
		err = fmt.Errorf("the peer closed the socket: %w", err)
	}
	c.fail(&ConnError{Err: err})
}

// handleLocked acts on one frame from the peer; stop says the connection
// ended normally.
func (c *Conn) handleLocked(fr *frame) (stop bool, err error) {
	switch fr.code {
	case codeOpen:
		return false, &Error{Condition: CondFramingError, Description: "second open"}
	case codeClose:
		cl, derr := decodeEndOrClose(fr.fields)
		if derr != nil {
			cl.err = &Error{Condition: CondDecodeError, Description: derr.Error()}
		}
		if c.closing {
			c.failLocked(&ConnError{Err: ErrClosed})
			return true, nil
		}
		c.wbuf = appendClose(c.wbuf, nil)
		c.closing = true
		out := c.wbuf
		c.wbuf = nil
		// Best-effort reply; the socket closes next.
		_ = c.nc.SetWriteDeadline(time.Now().Add(time.Second))
		_, _ = c.nc.Write(out)
		c.failLocked(&ConnError{Remote: orDefault(cl.err, CondConnectionForced, "the peer closed the connection")})
		return true, nil
	case codeBegin:
		b, derr := decodeBegin(fr.fields)
		if derr != nil {
			return false, &Error{Condition: CondDecodeError, Description: "begin: " + derr.Error()}
		}
		if b.remoteChannel == nil {
			return false, &Error{Condition: CondNotAllowed, Description: "the peer began a session; this client only sends"}
		}
		s := c.sessions[*b.remoteChannel]
		if s == nil || s.begun {
			return false, &Error{Condition: CondFramingError, Description: "begin for an unknown channel"}
		}
		s.begun = true
		s.remoteCh = fr.channel
		s.remoteIncoming = b.incomingWindow
		s.nextIncomingID = b.nextOutgoingID
		s.handleMax = b.handleMax
		c.remote[fr.channel] = s
		c.notifyLocked()
		return false, nil
	}
	s := c.remote[fr.channel]
	if s == nil {
		if fr.code == codeEnd || fr.code == codeDetach || fr.code == codeDisposition || fr.code == codeFlow {
			return false, nil // late frames of a session we already ended
		}
		return false, &Error{Condition: CondFramingError, Description: fmt.Sprintf("performative %#x on channel %d without a session", fr.code, fr.channel)}
	}
	return false, s.handleLocked(fr)
}

func orDefault(e *Error, cond, desc string) *Error {
	if e != nil {
		return e
	}
	return &Error{Condition: cond, Description: desc}
}
