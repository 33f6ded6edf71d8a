package jms

import (
	"container/list"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/connect-solace/connect-solace/internal/redact"
)

// DialConfig says how to reach a broker.
type DialConfig struct {
	// URLs are tried in order from a starting index; several mean failover.
	URLs []string
	// Username selects SASL PLAIN with Password; empty selects ANONYMOUS.
	// Some brokers refuse a connection with no SASL layer at all, so a
	// mechanism is always sent.
	Username string
	Password string
	// TLS is used for amqps:// URLs, and for every URL when ForceTLS is set.
	TLS      *tls.Config
	ForceTLS bool

	ContainerID string
	IdleTimeout time.Duration
	// AnonymousRelay sends on one link without a target when the broker
	// offers ANONYMOUS-RELAY; otherwise a link per destination is used.
	AnonymousRelay bool
	// LinkCacheSize bounds the per-destination links kept open.
	LinkCacheSize int
}

// Conn is one AMQP connection with one session and its sender links. The
// session can be replaced while the connection lives: RabbitMQ 3.x refuses an
// address by ending the whole session, which must not cost a reconnect.
type Conn struct {
	amqp  *amqp.Conn
	url   string
	caps  []string
	relay bool

	cacheSize int

	mu          sync.Mutex
	sess        *amqp.Session
	sessionLost error // set once the session ended; the next Sender begins a new one
	relaySender *Link
	links       map[linkKey]*linkEntry
	lru         *list.List // of *linkEntry, most recent at the front
}

// linkKey identifies a cached link: its target and how it was attached.
type linkKey struct {
	address, caps string
	durable       bool
}

type linkEntry struct {
	key     linkKey
	sender  *Link
	users   int
	evicted bool
	elem    *list.Element
}

// ErrAuth marks a failure to authenticate, so callers can tell it from an
// unreachable broker.
var ErrAuth = errors.New("authentication failed: check username and password")

// DialAny tries the URLs starting at index start and returns the first
// connection made and its URL index. When all fail, the error lists why each
// one did.
func DialAny(ctx context.Context, cfg DialConfig, start int) (*Conn, int, error) {
	if len(cfg.URLs) == 0 {
		return nil, 0, errors.New("no broker URLs configured")
	}
	var errs []error
	for i := range cfg.URLs {
		idx := (start + i) % len(cfg.URLs)
		c, err := Dial(ctx, cfg, cfg.URLs[idx])
		if err == nil {
			return c, idx, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, start, errors.Join(errs...)
}

// Dial connects to one broker URL, authenticates and begins a session.
func Dial(ctx context.Context, cfg DialConfig, rawURL string) (*Conn, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Parse's error quotes the whole input, password included.
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return nil, fmt.Errorf("parsing broker URL %s: %w", redact.URL(rawURL), err)
	}
	safe := u.Redacted()
	useTLS := cfg.ForceTLS
	port := "5672"
	switch u.Scheme {
	case "amqp":
	case "amqps":
		useTLS, port = true, "5671"
	default:
		return nil, fmt.Errorf("broker URL %s: scheme must be amqp or amqps", safe)
	}
	host := u.Hostname()
	if u.Port() != "" {
		port = u.Port()
	}
	user, pass := cfg.Username, cfg.Password
	if user == "" && u.User != nil {
		user = u.User.Username()
		pass, _ = u.User.Password()
	}

	var d net.Dialer
	raw, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", safe, err)
	}
	nc := raw
	if useTLS {
		tc := &tls.Config{}
		if cfg.TLS != nil {
			tc = cfg.TLS.Clone()
		}
		if tc.ServerName == "" {
			tc.ServerName = host
		}
		tconn := tls.Client(raw, tc)
		if err := tconn.HandshakeContext(ctx); err != nil {
			_ = raw.Close()
			return nil, fmt.Errorf("TLS handshake with %s: %w", safe, err)
		}
		nc = tconn
	}

	sniff := newOpenSniffer(newCoalescingConn(nc))
	opts := &amqp.ConnOptions{
		HostName:    host,
		ContainerID: cfg.ContainerID,
		IdleTimeout: cfg.IdleTimeout,
		SASLType:    amqp.SASLTypeAnonymous(),
	}
	if user != "" {
		opts.SASLType = amqp.SASLTypePlain(user, pass)
	}
	ac, err := amqp.NewConn(ctx, sniff, opts)
	if err != nil {
		_ = sniff.Close()
		// go-amqp reports a refused login as plain text; the sasl-outcome
		// code read off the wire says what happened.
		if code, ok := sniff.SASLOutcome(); ok && code != saslCodeOK {
			if code == saslCodeAuth {
				return nil, fmt.Errorf("connecting to %s as %q: %w (%v)", safe, user, ErrAuth, err)
			}
			return nil, fmt.Errorf("connecting to %s: broker refused the SASL login with code %d (a broker-side error): %w", safe, code, err)
		}
		return nil, fmt.Errorf("opening AMQP connection to %s: %w", safe, err)
	}
	sess, err := ac.NewSession(ctx, nil)
	if err != nil {
		_ = ac.Close()
		return nil, fmt.Errorf("beginning AMQP session on %s: %w", safe, err)
	}
	caps, _ := sniff.OfferedCapabilities()
	size := cfg.LinkCacheSize
	if size < 1 {
		size = 1
	}
	return &Conn{
		amqp:      ac,
		sess:      sess,
		url:       safe,
		caps:      caps,
		relay:     cfg.AnonymousRelay && slices.Contains(caps, CapAnonymousRelay),
		cacheSize: size,
		links:     map[linkKey]*linkEntry{},
		lru:       list.New(),
	}, nil
}

// URL is the broker URL with any password redacted.
func (c *Conn) URL() string { return c.url }

// OfferedCapabilities are the capabilities of the broker's open frame.
func (c *Conn) OfferedCapabilities() []string { return c.caps }

// Properties are the broker's open-frame connection properties.
func (c *Conn) Properties() map[string]any { return c.amqp.Properties() }

// UsesRelay reports whether sends go over one anonymous-relay link.
func (c *Conn) UsesRelay() bool { return c.relay }

// Done is closed when the connection has ended.
func (c *Conn) Done() <-chan struct{} { return c.amqp.Done() }

// Close ends the connection and, with it, every link.
func (c *Conn) Close() error { return c.amqp.Close() }

// senderOptions leaves the settlement modes at their defaults (mixed, first):
// every transfer is sent unsettled, so the broker still settles each one, and
// go-amqp fails an attach whose requested mode the peer does not echo, which
// Proton-based peers do not.
func senderOptions(dest Destination) *amqp.SenderOptions {
	o := &amqp.SenderOptions{TargetCapabilities: dest.Capabilities}
	if dest.Durable {
		o.TargetDurability = amqp.DurabilityConfiguration
	}
	return o
}

// SASL outcome codes (AMQP 1.0 part 5.3.3.6).
const (
	saslCodeOK   = 0
	saslCodeAuth = 1
)

// Sender returns a link that delivers to dest; call Release with it once
// no delivery sent over it is waited on any more. A link evicted from the
// cache is closed only after its last user released it, so no in-flight
// delivery is cut off. When the session ended (a broker refusing an
// address, say) a new one is begun first; when the connection ended, the
// error is a *amqp.ConnError.
func (c *Conn) Sender(ctx context.Context, dest Destination) (*Link, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.ensureSessionLocked(ctx); err != nil {
		return nil, err
	}
	if c.relay {
		if c.relaySender == nil {
			s, err := c.sess.NewSender(ctx, "", senderOptions(Destination{}))
			if err != nil {
				return nil, c.attachError(err, "")
			}
			c.relaySender = newLink(s)
		}
		return c.relaySender, nil
	}

	// A struct key: no string built per send.
	key := linkKey{address: dest.Address, caps: strings.Join(dest.Capabilities, ","), durable: dest.Durable}
	e, ok := c.links[key]
	if !ok {
		s, err := c.sess.NewSender(ctx, dest.Address, senderOptions(dest))
		if err != nil {
			return nil, c.attachError(err, dest.Address)
		}
		e = &linkEntry{key: key, sender: newLink(s)}
		e.sender.entry = e
		e.elem = c.lru.PushFront(e)
		c.links[key] = e
		for c.lru.Len() > c.cacheSize {
			c.evictLocked(c.lru.Back().Value.(*linkEntry))
		}
	} else if c.lru.Front() != e.elem {
		c.lru.MoveToFront(e.elem)
	}
	e.users++
	return e.sender, nil
}

// Release ends one use of a link returned by Sender.
func (c *Conn) Release(l *Link) {
	e := l.entry
	if e == nil {
		return // the anonymous-relay link is never evicted
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e.users--
	if e.evicted && e.users == 0 {
		closeSenderAsync(e.sender)
	}
}

// ensureSessionLocked begins a new session when the last one ended. Links of
// the old session died with it and are forgotten.
func (c *Conn) ensureSessionLocked(ctx context.Context) error {
	if c.sessionLost == nil && c.sess != nil {
		return nil // a dead connection fails the attach or send with its error
	}
	select {
	case <-c.amqp.Done():
		err := c.amqp.Err()
		if err == nil {
			err = &amqp.ConnError{}
		}
		return err
	default:
	}
	sess, err := c.amqp.NewSession(ctx, nil)
	if err != nil {
		return fmt.Errorf("beginning a new AMQP session on %s: %w", c.url, err)
	}
	for _, e := range c.links {
		c.lru.Remove(e.elem)
		e.evicted = true
	}
	c.links = map[linkKey]*linkEntry{}
	c.relaySender = nil
	c.sess, c.sessionLost = sess, nil
	return nil
}

func (c *Conn) evictLocked(e *linkEntry) {
	if e.evicted {
		return
	}
	c.lru.Remove(e.elem)
	delete(c.links, e.key)
	e.evicted = true
	if e.users == 0 {
		closeSenderAsync(e.sender)
	}
}

// linkFailed records that a send on l failed with err: a detached link is
// dropped from the cache so the next Sender attaches afresh, and an ended
// session is marked so the next Sender begins a new one.
func (c *Conn) linkFailed(l *Link, err error) {
	var (
		se *amqp.SessionError
		le *amqp.LinkError
	)
	isSession := errors.As(err, &se)
	if !isSession && !errors.As(err, &le) {
		return // a cancelled context or a lost connection: the link is fine or moot
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if isSession && c.sessionLost == nil {
		c.sessionLost = err
	}
	if l == c.relaySender {
		c.relaySender = nil
		return
	}
	if e := l.entry; e != nil && c.links[e.key] == e {
		c.evictLocked(e)
	}
}

// RefusedError is a broker's refusal of an address: retrying or reconnecting
// will not help, so only the messages for that address fail.
type RefusedError struct {
	Address string
	Err     *amqp.Error
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("broker refused address %q: %s: %s", e.Address, e.Err.Condition, e.Err.Description)
}

func (e *RefusedError) Unwrap() error { return e.Err }

// refusalConditions are the conditions with which brokers refuse an address
// (RabbitMQ: not-found for a missing exchange, invalid-field for a malformed
// address; others: unauthorized-access, not-allowed).
var refusalConditions = map[amqp.ErrCond]bool{
	amqp.ErrCondNotFound:           true,
	amqp.ErrCondInvalidField:       true,
	amqp.ErrCondUnauthorizedAccess: true,
	amqp.ErrCondNotAllowed:         true,
	amqp.ErrCondNotImplemented:     true,
}

// attachError classifies a failed attach of a link to address ("" for the
// anonymous relay). Brokers refuse an address either by detaching the link
// (ActiveMQ, Artemis) or by ending the whole session (RabbitMQ 3.x); in the
// latter case the session is marked lost so the next Sender begins a new one
// rather than blaming later addresses for the refusal.
func (c *Conn) attachError(err error, address string) error {
	var (
		le *amqp.LinkError
		se *amqp.SessionError
		ce *amqp.ConnError
		ae *amqp.Error
	)
	isConn := errors.As(err, &ce)
	if !errors.As(err, &le) && !isConn && (errors.As(err, &se) || errors.As(err, &ae)) {
		c.sessionLost = err
	}
	if !isConn && errors.As(err, &ae) && refusalConditions[ae.Condition] {
		return &RefusedError{Address: address, Err: ae}
	}
	what := "anonymous-relay link"
	if address != "" {
		what = fmt.Sprintf("sender link to %q", address)
	}
	return fmt.Errorf("attaching %s on %s: %w", what, c.url, err)
}

// Lost reports whether the connection ended, so the Conn must be replaced.
func (c *Conn) Lost() bool {
	select {
	case <-c.amqp.Done():
		return true
	default:
		return false
	}
}

// OpenLinks returns how many per-destination links are cached.
func (c *Conn) OpenLinks() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.links)
}

func closeSenderAsync(l *Link) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = l.s.Close(ctx)
	}()
}

// Link is a sender link. Concurrent batches do not take turns on it: a
// batch queues its run of transfers, and whichever sender finds the link
// idle performs every queued run back to back (flat combining), so go-amqp's
// per-sender lock is never contended, the other senders sleep once until
// their run is on the wire, and each run stays contiguous and in order.
type Link struct {
	s     *amqp.Sender
	entry *linkEntry // nil for the anonymous-relay link

	mu    sync.Mutex     // held by the sender performing transfers
	spare []*transferReq // guarded by mu
	qmu   sync.Mutex
	queue []*transferReq
}

func newLink(s *amqp.Sender) *Link { return &Link{s: s} }

// transferReq is one run of transfers and, once finished, its results.
// Requests are pooled with their channels, so a run costs no allocation.
type transferReq struct {
	ctx  context.Context
	msgs []*amqp.Message
	// Results per message attempted, written by whichever goroutine
	// performs the run: a receipt, or the message's own error.
	receipts []amqp.SendReceipt
	errs     []error
	n        int   // messages attempted before err
	err      error // the error that stopped the run

	finished atomic.Bool
	done     chan struct{} // receives one token when finished
	lead     chan struct{} // the current performer hands over
}

var transferReqs = sync.Pool{New: func() any {
	return &transferReq{done: make(chan struct{}, 1), lead: make(chan struct{}, 1)}
}}

// maxRounds bounds how many times a performer drains the queue after its
// own run is done before it hands the queue to a waiting sender.
const maxRounds = 4

// transfer sends msgs in order without waiting for their settlement and
// returns a request holding, per message attempted, its receipt or its own
// error (too large, not encodable: those do not stop the run). Any other
// error stops the run: it is in err, with n the index of the first message
// not sent. Give the request back with putTransferReq.
func (l *Link) transfer(ctx context.Context, msgs []*amqp.Message) *transferReq {
	r := transferReqs.Get().(*transferReq)
	r.ctx, r.msgs, r.n, r.err = ctx, msgs, 0, nil
	r.receipts = slices.Grow(r.receipts[:0], len(msgs))[:len(msgs)]
	r.errs = slices.Grow(r.errs[:0], len(msgs))[:len(msgs)]
	clear(r.errs)
	r.finished.Store(false)
	l.qmu.Lock()
	l.queue = append(l.queue, r)
	l.qmu.Unlock()
	for {
		l.perform(r)
		select {
		case <-r.done:
			return r
		case <-r.lead:
		}
	}
}

func putTransferReq(r *transferReq) {
	select {
	case <-r.lead: // a late hand-over is harmless, but not for the next user
	default:
	}
	r.ctx, r.msgs = nil, nil
	clear(r.receipts)
	transferReqs.Put(r)
}

// perform drains the queue while it holds the link. After each unlock it
// looks again, because a sender that failed to take the link meanwhile is
// waiting for it; after maxRounds with its own run done, it hands over to
// the oldest waiter instead, so it can return. (A hand-over that reaches a
// request already finished only makes its owner look at the queue once.)
func (l *Link) perform(own *transferReq) {
	for round := 0; l.mu.TryLock(); round++ {
		l.qmu.Lock()
		batch := l.queue
		l.queue = l.spare[:0]
		l.qmu.Unlock()
		for _, r := range batch {
			l.run(r)
		}
		clear(batch)
		l.spare = batch
		l.mu.Unlock()

		l.qmu.Lock()
		var next *transferReq
		if len(l.queue) > 0 {
			next = l.queue[0]
		}
		l.qmu.Unlock()
		if next == nil {
			return
		}
		if own.finished.Load() && round+1 >= maxRounds {
			select {
			case next.lead <- struct{}{}:
			default:
			}
			return
		}
	}
}

func (l *Link) run(r *transferReq) {
	defer func() {
		r.finished.Store(true)
		r.done <- struct{}{}
	}()
	for k, m := range r.msgs {
		rc, err := l.s.SendWithReceipt(r.ctx, m, nil)
		switch {
		case err == nil:
			r.receipts[k] = rc
		case IsMessageError(err):
			r.errs[k] = err
		default:
			r.n, r.err = k, err
			return
		}
	}
	r.n = len(r.msgs)
}

// IsMessageError reports whether a send error concerns only that message
// (it is too large, or cannot be encoded), so the link is still usable.
func IsMessageError(err error) bool {
	var (
		ae *amqp.Error
		le *amqp.LinkError
		se *amqp.SessionError
		ce *amqp.ConnError
	)
	switch {
	case errors.As(err, &le), errors.As(err, &se), errors.As(err, &ce):
		return false
	case errors.As(err, &ae):
		return ae.Condition == amqp.ErrCondMessageSizeExceeded
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return false
	}
	// Anything else comes from marshalling the message before a frame was
	// queued (an invalid UTF-8 string, an unsupported value type).
	return true
}
