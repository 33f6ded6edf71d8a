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

// Conn is one AMQP connection with one session and its sender links.
type Conn struct {
	amqp  *amqp.Conn
	sess  *amqp.Session
	url   string
	caps  []string
	relay bool

	cacheSize int

	mu          sync.Mutex
	sessionLost error // set once the session ended; the Conn is then useless
	relaySender *Link
	links       map[string]*linkEntry
	lru         *list.List // of *linkEntry, most recent at the front
}

type linkEntry struct {
	key     string
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

	sniff := newOpenSniffer(nc)
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
		_ = nc.Close()
		if strings.Contains(err.Error(), "auth failed") {
			return nil, fmt.Errorf("connecting to %s as %q: %w (%v)", safe, user, ErrAuth, err)
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
		links:     map[string]*linkEntry{},
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

// Sender returns a link that delivers to dest and a release func to call
// once the caller no longer waits on deliveries sent over it. A link evicted
// from the cache is closed only after its last user released it, so no
// in-flight delivery is cut off.
func (c *Conn) Sender(ctx context.Context, dest Destination) (*Link, func(), error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sessionLost != nil {
		return nil, nil, fmt.Errorf("session on %s ended: %w", c.url, c.sessionLost)
	}
	if c.relay {
		if c.relaySender == nil {
			s, err := c.sess.NewSender(ctx, "", senderOptions(Destination{}))
			if err != nil {
				return nil, nil, c.attachError(err, "anonymous-relay link")
			}
			c.relaySender = newLink(s, c.amqp.Done())
		}
		return c.relaySender, func() {}, nil
	}

	key := dest.Address + "\x00" + strings.Join(dest.Capabilities, ",")
	if dest.Durable {
		key += "\x00durable"
	}
	e, ok := c.links[key]
	if !ok {
		s, err := c.sess.NewSender(ctx, dest.Address, senderOptions(dest))
		if err != nil {
			return nil, nil, c.attachError(err, fmt.Sprintf("sender link to %q", dest.Address))
		}
		e = &linkEntry{key: key, sender: newLink(s, c.amqp.Done())}
		e.elem = c.lru.PushFront(e)
		c.links[key] = e
		for c.lru.Len() > c.cacheSize {
			old := c.lru.Back().Value.(*linkEntry)
			c.lru.Remove(old.elem)
			delete(c.links, old.key)
			old.evicted = true
			if old.users == 0 {
				closeSenderAsync(old.sender)
			}
		}
	} else {
		c.lru.MoveToFront(e.elem)
	}
	e.users++
	var once sync.Once
	return e.sender, func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			e.users--
			if e.evicted && e.users == 0 {
				closeSenderAsync(e.sender)
			}
		})
	}, nil
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

// attachError classifies a failed attach. Brokers refuse an address either by
// detaching the link (ActiveMQ, Artemis) or by ending the whole session
// (RabbitMQ 3.x); in the latter case the Conn is marked lost so later senders
// are told to reconnect rather than blamed for the refusal.
func (c *Conn) attachError(err error, what string) error {
	var le *amqp.LinkError
	isLink := errors.As(err, &le)
	var se *amqp.SessionError
	var ce *amqp.ConnError
	if !isLink && (errors.As(err, &se) || errors.As(err, &ce) || isRemote(err)) {
		c.sessionLost = err
	}
	var ae *amqp.Error
	if errors.As(err, &ae) && refusalConditions[ae.Condition] && (ce == nil) {
		addr := strings.TrimPrefix(strings.TrimSuffix(what, "\""), "sender link to \"")
		return &RefusedError{Address: addr, Err: ae}
	}
	return fmt.Errorf("attaching %s on %s: %w", what, c.url, err)
}

func isRemote(err error) bool {
	var ae *amqp.Error
	return errors.As(err, &ae)
}

// Lost reports whether the session ended, so the Conn must be replaced.
func (c *Conn) Lost() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessionLost != nil
}

// OpenLinks returns how many per-destination links are cached.
func (c *Conn) OpenLinks() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.links)
}

func closeSenderAsync(l *Link) {
	l.stop()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = l.s.Close(ctx)
	}()
}

// Link is a sender link with one goroutine that performs every transfer on
// it. Concurrent writers hand it whole runs of messages instead of contending
// for go-amqp's per-sender lock message by message, so transfers stream
// back to back exactly as a single pipelined sender would issue them.
type Link struct {
	s     *amqp.Sender
	reqs  chan *sendReq
	quit  chan struct{}
	once  sync.Once
	connD <-chan struct{}
}

type sendReq struct {
	ctx     context.Context
	msgs    []*amqp.Message
	results []SendResult
	done    chan struct{}
}

// SendResult is the fate of one transfer: a receipt to wait on, or why the
// message was not sent.
type SendResult struct {
	Receipt amqp.SendReceipt
	Err     error
}

// IsMessageError reports whether a send error concerns only that message
// (it is too large), so the link is still usable.
func IsMessageError(err error) bool {
	var ae *amqp.Error
	return errors.As(err, &ae) && ae.Condition == amqp.ErrCondMessageSizeExceeded
}

func newLink(s *amqp.Sender, connDone <-chan struct{}) *Link {
	// Unbuffered: a request handed over is owned by the pump, which always
	// completes it, so SendAll can wait for it unconditionally.
	l := &Link{s: s, reqs: make(chan *sendReq), quit: make(chan struct{}), connD: connDone}
	go l.pump()
	return l
}

func (l *Link) pump() {
	for {
		select {
		case r := <-l.reqs:
			for _, m := range r.msgs {
				rc, err := l.s.SendWithReceipt(r.ctx, m, nil)
				r.results = append(r.results, SendResult{Receipt: rc, Err: err})
				if err != nil && !IsMessageError(err) {
					break
				}
			}
			close(r.done)
		case <-l.quit:
			return
		case <-l.connD:
			return
		}
	}
}

func (l *Link) stop() { l.once.Do(func() { close(l.quit) }) }

// errLinkStopped is returned for sends on a link being torn down.
var errLinkStopped = errors.New("sender link closed")

// SendAll transfers msgs in order without waiting for their settlement and
// returns one result per message attempted. A message error (too large) does
// not stop the run; any other error does, and the messages after it were not
// attempted.
func (l *Link) SendAll(ctx context.Context, msgs []*amqp.Message) []SendResult {
	r := &sendReq{ctx: ctx, msgs: msgs, results: make([]SendResult, 0, len(msgs)), done: make(chan struct{})}
	var err error
	select {
	case l.reqs <- r:
		<-r.done
		return r.results
	case <-l.quit:
		err = errLinkStopped
	case <-l.connD:
		err = errLinkStopped
	case <-ctx.Done():
		err = ctx.Err()
	}
	return []SendResult{{Err: err}}
}
