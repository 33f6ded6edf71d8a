package jms

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/connect-solace/connect-solace/internal/amqpwire"
)

// defaultIdleTimeout is the idle timeout a connection advertises when none
// is configured (go-amqp's default): the broker heartbeats at least this
// often, so a dead broker is noticed.
const defaultIdleTimeout = time.Minute

// SendConn is one sending connection, on amqpwire, with one session and its
// sender links. The session can be replaced while the connection lives:
// RabbitMQ 3.x refuses an address by ending the whole session, which must
// not cost a reconnect.
type SendConn struct {
	wire  *amqpwire.Conn
	url   string
	relay bool

	cacheSize int

	mu          sync.Mutex
	sess        *amqpwire.Session
	sessionLost bool // the session ended; the next Sender begins a new one
	relaySender *SendLink
	links       map[linkKey]*linkEntry
	lru         *list.List // of *linkEntry, most recent at the front
}

// linkKey identifies a cached sender link: its target and how it was
// attached.
type linkKey struct {
	address, caps string
	durable       bool
}

type linkEntry struct {
	key     linkKey
	sender  *SendLink
	users   int
	evicted bool
	elem    *list.Element
}

// SendLink is a sender link of a SendConn.
type SendLink struct {
	l     *amqpwire.Sender
	entry *linkEntry // nil for the anonymous-relay link
}

// DialSend connects to one broker URL, authenticates and begins a session
// for sending.
func DialSend(ctx context.Context, cfg DialConfig, rawURL string) (*SendConn, error) {
	wc, sess, safe, err := openWire(ctx, cfg, rawURL)
	if err != nil {
		return nil, err
	}
	return &SendConn{
		wire:      wc,
		sess:      sess,
		url:       safe,
		relay:     cfg.AnonymousRelay && slices.Contains(wc.OfferedCapabilities(), CapAnonymousRelay),
		cacheSize: max(cfg.LinkCacheSize, 1),
		links:     map[linkKey]*linkEntry{},
		lru:       list.New(),
	}, nil
}

// DialAnySend is DialAny for a SendConn.
func DialAnySend(ctx context.Context, cfg DialConfig, start int) (*SendConn, int, error) {
	return dialAny(ctx, cfg, start, DialSend)
}

// URL is the broker URL with any password redacted.
func (c *SendConn) URL() string { return c.url }

// OfferedCapabilities are the capabilities of the broker's open frame.
func (c *SendConn) OfferedCapabilities() []string { return c.wire.OfferedCapabilities() }

// Properties are the broker's open-frame connection properties.
func (c *SendConn) Properties() map[string]any { return c.wire.Properties() }

// UsesRelay reports whether sends go over one anonymous-relay link.
func (c *SendConn) UsesRelay() bool { return c.relay }

// Done is closed when the connection has ended.
func (c *SendConn) Done() <-chan struct{} { return c.wire.Done() }

// Close ends the connection and, with it, every link.
func (c *SendConn) Close() error { return c.wire.Close() }

// Lost reports whether the connection ended, so the SendConn must be
// replaced.
func (c *SendConn) Lost() bool {
	select {
	case <-c.wire.Done():
		return true
	default:
		return false
	}
}

// OpenLinks returns how many per-destination links are cached.
func (c *SendConn) OpenLinks() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.links)
}

// Sender returns a link that delivers to dest; call Release with it once
// no delivery sent over it is waited on any more. A link evicted from the
// cache is closed only after its last user released it, so no in-flight
// delivery is cut off. When the session ended (a broker refusing an
// address, say) a new one is begun first; when the connection ended, the
// error is an *amqpwire.ConnError.
func (c *SendConn) Sender(ctx context.Context, dest Destination) (*SendLink, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.ensureSessionLocked(ctx); err != nil {
		return nil, err
	}
	if c.relay {
		if c.relaySender == nil {
			l, err := c.sess.NewSender(ctx, amqpwire.SenderOptions{})
			if err != nil {
				return nil, c.attachError(err, "")
			}
			c.relaySender = &SendLink{l: l}
		}
		return c.relaySender, nil
	}

	// A struct key: no string built per send.
	key := linkKey{address: dest.Address, caps: strings.Join(dest.Capabilities, ","), durable: dest.Durable}
	e, ok := c.links[key]
	if !ok {
		l, err := c.sess.NewSender(ctx, amqpwire.SenderOptions{Target: dest.Address, Durable: dest.Durable, Capabilities: dest.Capabilities})
		if err != nil {
			return nil, c.attachError(err, dest.Address)
		}
		e = &linkEntry{key: key, sender: &SendLink{l: l}}
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
func (c *SendConn) Release(l *SendLink) {
	e := l.entry
	if e == nil {
		return // the anonymous-relay link is never evicted
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e.users--
	if e.evicted && e.users == 0 {
		e.sender.l.Close()
	}
}

// ensureSessionLocked begins a new session when the last one ended. Links of
// the old session died with it and are forgotten.
func (c *SendConn) ensureSessionLocked(ctx context.Context) error {
	if !c.sessionLost && !c.sess.Ended() {
		return nil
	}
	if err := c.wire.Err(); err != nil {
		return err
	}
	sess, err := c.wire.NewSession(ctx)
	if err != nil {
		return fmt.Errorf("beginning a new AMQP session on %s: %w", c.url, err)
	}
	for _, e := range c.links {
		c.lru.Remove(e.elem)
		e.evicted = true
	}
	c.links = map[linkKey]*linkEntry{}
	c.relaySender = nil
	c.sess, c.sessionLost = sess, false
	return nil
}

func (c *SendConn) evictLocked(e *linkEntry) {
	if e.evicted {
		return
	}
	c.lru.Remove(e.elem)
	delete(c.links, e.key)
	e.evicted = true
	if e.users == 0 {
		e.sender.l.Close()
	}
}

// linkFailed records that a send on l failed with err: a detached link is
// dropped from the cache so the next Sender attaches afresh, and an ended
// session is marked so the next Sender begins a new one.
func (c *SendConn) linkFailed(l *SendLink, err error) {
	var (
		se *amqpwire.SessionError
		le *amqpwire.LinkError
	)
	isSession := errors.As(err, &se)
	if !isSession && !errors.As(err, &le) {
		return // a cancelled context or a lost connection: the link is fine or moot
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if isSession {
		c.sessionLost = true
	}
	if l == c.relaySender {
		c.relaySender = nil
		return
	}
	if e := l.entry; e != nil && c.links[e.key] == e {
		c.evictLocked(e)
	}
}

// attachError classifies a failed attach of a link to address ("" for the
// anonymous relay). Brokers refuse an address either by detaching the link
// (ActiveMQ, Artemis) or by ending the whole session (RabbitMQ 3.x); in the
// latter case the session is marked lost so the next Sender begins a new one
// rather than blaming later addresses for the refusal.
func (c *SendConn) attachError(err error, address string) error {
	var (
		se *amqpwire.SessionError
		ce *amqpwire.ConnError
		we *amqpwire.Error
	)
	isConn := errors.As(err, &ce)
	if errors.As(err, &se) {
		c.sessionLost = true
	}
	if !isConn && errors.As(err, &we) && refusalConditions[amqp.ErrCond(we.Condition)] {
		return &RefusedError{Address: address, Err: &amqp.Error{Condition: amqp.ErrCond(we.Condition), Description: we.Description}}
	}
	what := "anonymous-relay link"
	if address != "" {
		what = fmt.Sprintf("sender link to %q", address)
	}
	return fmt.Errorf("attaching %s on %s: %w", what, c.url, err)
}

// CapAnonymousRelay is the connection capability for sender links without a
// target address whose messages carry their own `to`.
const CapAnonymousRelay = "ANONYMOUS-RELAY"
