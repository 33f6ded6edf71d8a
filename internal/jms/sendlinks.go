package jms

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/golang-lru/v2/simplelru"

	"github.com/connect-solace/connect-solace/internal/amqpwire"
)

// senderLinks are a Conn's sender links: the anonymous-relay link, or a
// bounded cache of per-destination links, least recently used evicted.
// Guarded by Conn.mu.
type senderLinks struct {
	relay *SendLink
	cache *simplelru.LRU[linkKey, *linkEntry]
}

func newSenderLinks(size int) senderLinks {
	// The callback runs for every entry leaving the cache: evicted, removed
	// or purged.
	cache, err := simplelru.NewLRU(max(size, 1), func(_ linkKey, e *linkEntry) { e.evict() })
	if err != nil {
		panic(err) // only for a size below 1
	}
	return senderLinks{cache: cache}
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
}

// evict marks e as out of the cache and closes its link unless a delivery
// sent over it is still waited on (Release closes it then).
func (e *linkEntry) evict() {
	if e.evicted {
		return
	}
	e.evicted = true
	if e.users == 0 {
		e.sender.l.Close()
	}
}

// SendLink is a sender link of a Conn.
type SendLink struct {
	l     *amqpwire.Sender
	entry *linkEntry // nil for the anonymous-relay link
}

// OpenLinks returns how many per-destination links are cached.
func (c *Conn) OpenLinks() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.senders.cache.Len()
}

// Sender returns a link that delivers to dest; call Release with it once
// no delivery sent over it is waited on any more. A link evicted from the
// cache is closed only after its last user released it, so no in-flight
// delivery is cut off. When the session ended (a broker refusing an
// address, say) a new one is begun first; when the connection ended, the
// error is an *amqpwire.ConnError.
func (c *Conn) Sender(ctx context.Context, dest Destination) (*SendLink, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.ensureSessionLocked(ctx); err != nil {
		return nil, err
	}
	if c.relay {
		if c.senders.relay == nil {
			l, err := c.sess.NewSender(ctx, amqpwire.SenderOptions{})
			if err != nil {
				return nil, c.attachError(err, "")
			}
			c.senders.relay = &SendLink{l: l}
		}
		return c.senders.relay, nil
	}

	// A struct key: no string built per send.
	key := linkKey{address: dest.Address, caps: strings.Join(dest.Capabilities, ","), durable: dest.Durable}
	e, ok := c.senders.cache.Get(key)
	if !ok {
		l, err := c.sess.NewSender(ctx, amqpwire.SenderOptions{Target: dest.Address, Durable: dest.Durable, Capabilities: dest.Capabilities})
		if err != nil {
			return nil, c.attachError(err, dest.Address)
		}
		e = &linkEntry{key: key, sender: &SendLink{l: l}}
		e.sender.entry = e
		c.senders.cache.Add(key, e)
	}
	e.users++
	return e.sender, nil
}

// Release ends one use of a link returned by Sender.
func (c *Conn) Release(l *SendLink) {
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
func (c *Conn) ensureSessionLocked(ctx context.Context) error {
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
	for _, e := range c.senders.cache.Values() {
		e.evicted = true // dead with the session: nothing to close
	}
	c.senders.cache.Purge()
	c.senders.relay = nil
	c.sess, c.sessionLost = sess, false
	return nil
}

// linkFailed records that a send on l failed with err: a detached link is
// dropped from the cache so the next Sender attaches afresh, and an ended
// session is marked so the next Sender begins a new one.
func (c *Conn) linkFailed(l *SendLink, err error) {
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
	if l == c.senders.relay {
		c.senders.relay = nil
		return
	}
	if e := l.entry; e != nil {
		if cur, ok := c.senders.cache.Peek(e.key); ok && cur == e {
			c.senders.cache.Remove(e.key)
		}
	}
}

// attachError classifies a failed attach of a sender link to address (""
// for the anonymous relay). Brokers refuse an address either by detaching
// the link (ActiveMQ, Artemis) or by ending the whole session (RabbitMQ
// 3.x); in the latter case the session is marked lost so the next Sender
// begins a new one rather than blaming later addresses for the refusal.
func (c *Conn) attachError(err error, address string) error {
	var se *amqpwire.SessionError
	if errors.As(err, &se) {
		c.sessionLost = true
	}
	if re, ok := refusal(err, address); ok {
		return re
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
