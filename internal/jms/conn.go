package jms

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/connect-solace/connect-solace/internal/amqpwire"
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

// Conn is one connection, on amqpwire, with one session for its receiver
// links and its sender links. The session can be replaced while the
// connection lives: RabbitMQ 3.x refuses an address by ending the whole
// session, which must not cost a sender a reconnect.
type Conn struct {
	wire  *amqpwire.Conn
	url   string
	relay bool

	mu          sync.Mutex
	sess        *amqpwire.Session
	sessionLost bool // the session ended; the next Sender begins a new one
	senders     senderLinks
}

// ErrAuth marks a failure to authenticate, so callers can tell it from an
// unreachable broker.
var ErrAuth = errors.New("authentication failed: check username and password")

// DialAny tries the URLs starting at index start and returns the first
// connection made and its URL index. When all fail, the error lists why each
// one did.
func DialAny(ctx context.Context, cfg DialConfig, start int) (*Conn, int, error) {
	return dialAny(ctx, cfg, start, Dial)
}

func dialAny(ctx context.Context, cfg DialConfig, start int, dial func(context.Context, DialConfig, string) (*Conn, error)) (*Conn, int, error) {
	if len(cfg.URLs) == 0 {
		return nil, 0, errors.New("no broker URLs configured")
	}
	var errs []error
	for i := range cfg.URLs {
		idx := (start + i) % len(cfg.URLs)
		c, err := dial(ctx, cfg, cfg.URLs[idx])
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

// dialed is a connected (and TLS-wrapped) socket and what Dial learnt
// from the URL.
type dialed struct {
	nc         net.Conn
	host, safe string
	user, pass string
}

// dialNet parses rawURL and connects to it, with TLS for amqps:// or
// ForceTLS.
func dialNet(ctx context.Context, cfg DialConfig, rawURL string) (dialed, error) {
	var d dialed
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Parse's error quotes the whole input, password included.
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return d, fmt.Errorf("parsing broker URL %s: %w", redact.URL(rawURL), err)
	}
	d.safe = u.Redacted()
	useTLS := cfg.ForceTLS
	port := "5672"
	switch u.Scheme {
	case "amqp":
	case "amqps":
		useTLS, port = true, "5671"
	default:
		return d, fmt.Errorf("broker URL %s: scheme must be amqp or amqps", d.safe)
	}
	d.host = u.Hostname()
	if u.Port() != "" {
		port = u.Port()
	}
	d.user, d.pass = cfg.Username, cfg.Password
	if d.user == "" && u.User != nil {
		d.user = u.User.Username()
		d.pass, _ = u.User.Password()
	}

	var nd net.Dialer
	raw, err := nd.DialContext(ctx, "tcp", net.JoinHostPort(d.host, port))
	if err != nil {
		return d, fmt.Errorf("connecting to %s: %w", d.safe, err)
	}
	d.nc = raw
	if useTLS {
		tc := &tls.Config{}
		if cfg.TLS != nil {
			tc = cfg.TLS.Clone()
		}
		if tc.ServerName == "" {
			tc.ServerName = d.host
		}
		tconn := tls.Client(raw, tc)
		if err := tconn.HandshakeContext(ctx); err != nil {
			_ = raw.Close()
			return d, fmt.Errorf("TLS handshake with %s: %w", d.safe, err)
		}
		d.nc = tconn
	}
	return d, nil
}

// Dial connects to one broker URL (TCP, TLS, SASL, AMQP open) and begins a
// session.
func Dial(ctx context.Context, cfg DialConfig, rawURL string) (*Conn, error) {
	d, err := dialNet(ctx, cfg, rawURL)
	if err != nil {
		return nil, err
	}
	idle := cfg.IdleTimeout
	if idle == 0 {
		idle = defaultIdleTimeout
	}
	wc, err := amqpwire.Open(ctx, d.nc, amqpwire.Config{
		HostName: d.host, ContainerID: cfg.ContainerID, Username: d.user, Password: d.pass, IdleTimeout: idle,
	})
	if err != nil {
		_ = d.nc.Close()
		var se *amqpwire.SASLError
		if errors.As(err, &se) {
			return nil, saslRefusal(d.safe, d.user, int(se.Code), err)
		}
		return nil, fmt.Errorf("opening AMQP connection to %s: %w", d.safe, err)
	}
	sess, err := wc.NewSession(ctx)
	if err != nil {
		_ = wc.Close()
		return nil, fmt.Errorf("beginning AMQP session on %s: %w", d.safe, err)
	}
	return &Conn{
		wire:    wc,
		sess:    sess,
		url:     d.safe,
		relay:   cfg.AnonymousRelay && slices.Contains(wc.OfferedCapabilities(), CapAnonymousRelay),
		senders: newSenderLinks(cfg.LinkCacheSize),
	}, nil
}

// defaultIdleTimeout is the idle timeout a connection advertises when none
// is configured (go-amqp's default): the broker heartbeats at least this
// often, so a dead broker is noticed.
const defaultIdleTimeout = time.Minute

// saslRefusal is the error for a SASL login refused with code.
func saslRefusal(safe, user string, code int, err error) error {
	if code == saslCodeAuth {
		return fmt.Errorf("connecting to %s as %q: %w (%v)", safe, user, ErrAuth, err)
	}
	return fmt.Errorf("connecting to %s: broker refused the SASL login with code %d (a broker-side error): %w", safe, code, err)
}

// URL is the broker URL with any password redacted.
func (c *Conn) URL() string { return c.url }

// UsesRelay reports whether sends go over one anonymous-relay link.
func (c *Conn) UsesRelay() bool { return c.relay }

// OfferedCapabilities are the capabilities of the broker's open frame.
func (c *Conn) OfferedCapabilities() []string { return c.wire.OfferedCapabilities() }

// Properties are the broker's open-frame connection properties.
func (c *Conn) Properties() map[string]any { return c.wire.Properties() }

// Done is closed when the connection has ended.
func (c *Conn) Done() <-chan struct{} { return c.wire.Done() }

// Close ends the connection and, with it, every link.
func (c *Conn) Close() error { return c.wire.Close() }

// saslCodeAuth is the SASL outcome code of a wrong user or password (AMQP
// 1.0 part 5.3.3.6).
const saslCodeAuth = 1

// RefusedError is a broker's refusal of an address: retrying or reconnecting
// will not help, so only the messages for that address fail.
type RefusedError struct {
	Address string
	Err     *amqpwire.Error
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("broker refused address %q: %s: %s", e.Address, e.Err.Condition, e.Err.Description)
}

func (e *RefusedError) Unwrap() error { return e.Err }

// refusal returns err as a *RefusedError of address when it is a broker's
// refusal of the address, not the end of the connection. Brokers refuse
// with not-found (RabbitMQ, for a missing exchange), invalid-field
// (RabbitMQ, for a malformed address), unauthorized-access, not-allowed or
// not-implemented.
func refusal(err error, address string) (*RefusedError, bool) {
	var (
		we *amqpwire.Error
		ce *amqpwire.ConnError
	)
	if !errors.As(err, &we) || errors.As(err, &ce) {
		return nil, false
	}
	switch we.Condition {
	case amqpwire.CondNotFound, amqpwire.CondInvalidField, amqpwire.CondUnauthorizedAccess,
		amqpwire.CondNotAllowed, amqpwire.CondNotImplemented:
		return &RefusedError{Address: address, Err: &amqpwire.Error{Condition: we.Condition, Description: we.Description}}, true
	}
	return nil, false
}

// Lost reports whether the connection ended, so the Conn must be replaced.
func (c *Conn) Lost() bool {
	select {
	case <-c.wire.Done():
		return true
	default:
		return false
	}
}
