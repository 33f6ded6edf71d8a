package jms

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"time"

	"github.com/Azure/go-amqp"

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

// Conn is one receiving connection, on amqpwire, with one session for its
// receiver links. Senders use SendConn; both are opened by openWire.
type Conn struct {
	wire *amqpwire.Conn
	url  string
	sess *amqpwire.Session
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

func dialAny[C any](ctx context.Context, cfg DialConfig, start int, dial func(context.Context, DialConfig, string) (C, error)) (C, int, error) {
	var zero C
	if len(cfg.URLs) == 0 {
		return zero, 0, errors.New("no broker URLs configured")
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
	return zero, start, errors.Join(errs...)
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

// Dial connects to one broker URL, authenticates and begins a session, for
// receivers.
func Dial(ctx context.Context, cfg DialConfig, rawURL string) (*Conn, error) {
	wc, sess, safe, err := openWire(ctx, cfg, rawURL)
	if err != nil {
		return nil, err
	}
	return &Conn{wire: wc, sess: sess, url: safe}, nil
}

// openWire connects to one broker URL (TCP, TLS, SASL, AMQP open) and
// begins a session: what sending and receiving connections share.
func openWire(ctx context.Context, cfg DialConfig, rawURL string) (*amqpwire.Conn, *amqpwire.Session, string, error) {
	d, err := dialNet(ctx, cfg, rawURL)
	if err != nil {
		return nil, nil, "", err
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
			return nil, nil, "", saslRefusal(d.safe, d.user, int(se.Code), err)
		}
		return nil, nil, "", fmt.Errorf("opening AMQP connection to %s: %w", d.safe, err)
	}
	sess, err := wc.NewSession(ctx)
	if err != nil {
		_ = wc.Close()
		return nil, nil, "", fmt.Errorf("beginning AMQP session on %s: %w", d.safe, err)
	}
	return wc, sess, d.safe, nil
}

// saslRefusal is the error for a SASL login refused with code.
func saslRefusal(safe, user string, code int, err error) error {
	if code == saslCodeAuth {
		return fmt.Errorf("connecting to %s as %q: %w (%v)", safe, user, ErrAuth, err)
	}
	return fmt.Errorf("connecting to %s: broker refused the SASL login with code %d (a broker-side error): %w", safe, code, err)
}

// URL is the broker URL with any password redacted.
func (c *Conn) URL() string { return c.url }

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

// Lost reports whether the connection ended, so the Conn must be replaced.
func (c *Conn) Lost() bool {
	select {
	case <-c.wire.Done():
		return true
	default:
		return false
	}
}
