package jms

import (
	"context"
)

// ConnConfig is a connection as configured: how to dial, where the password
// comes from and how names become addresses.
type ConnConfig struct {
	// Dial holds URLs, Username, Password, TLS and ForceTLS.
	Dial DialConfig
	// Password, when set, returns the password on every connect instead of
	// Dial.Password (reading a file afresh, so a rotated secret is used by
	// the next reconnect).
	Password func() (string, error)

	Style       string
	QueuePrefix string
	TopicPrefix string
}

// ResolvedDial returns the dial settings for one connect, with the password
// from Password when that is set.
func (c ConnConfig) ResolvedDial() (DialConfig, error) {
	d := c.Dial
	if c.Password != nil {
		var err error
		if d.Password, err = c.Password(); err != nil {
			return d, err
		}
	}
	return d, nil
}

// Addresser builds the address mapping for a connection whose open frame
// carried connProps.
func (c ConnConfig) Addresser(connProps map[string]any) (Addresser, error) {
	return NewAddresser(c.Style, c.QueuePrefix, c.TopicPrefix, connProps)
}

// LinkSettings are a sending component's own connection settings, on top of
// the shared ConnConfig.
type LinkSettings struct {
	AnonymousRelay bool
	LinkCacheSize  int
	ContainerID    string
}

// DialSender connects to the first reachable URL from index start (reading
// a password file afresh) and returns a Sender over it with the URL index.
func (c ConnConfig) DialSender(ctx context.Context, link LinkSettings, start int, cfg SenderConfig) (*Sender, int, error) {
	dial, err := c.ResolvedDial()
	if err != nil {
		return nil, start, err
	}
	dial.AnonymousRelay, dial.LinkCacheSize, dial.ContainerID = link.AnonymousRelay, link.LinkCacheSize, link.ContainerID
	conn, idx, err := DialAny(ctx, dial, start)
	if err != nil {
		return nil, start, err
	}
	addr, err := c.Addresser(conn.Properties())
	if err != nil {
		_ = conn.Close()
		return nil, start, err
	}
	return NewSender(conn, addr, cfg), idx, nil
}

// ReceiverSource is what a receiving component consumes: a queue or topic
// by name, and how (cfg.Source is filled in from the name).
type ReceiverSource struct {
	Kind DestKind
	Name string
	// ContainerID is the JMS client ID; empty means a random one.
	ContainerID string
	Config      ReceiverConfig
}

// DialReceiver connects to the first reachable URL from index start (reading
// a password file afresh), resolves the source's address and attaches a
// receiver link to it. It returns the receiver and its URL index, or on
// failure the index to start from next time: the next URL when the broker
// was reached but the receiver could not be attached.
func (c ConnConfig) DialReceiver(ctx context.Context, src ReceiverSource, start int) (*Receiver, int, error) {
	dial, err := c.ResolvedDial()
	if err != nil {
		return nil, start, err
	}
	dial.ContainerID = src.ContainerID
	conn, idx, err := DialAny(ctx, dial, start)
	if err != nil {
		return nil, start, err
	}
	next := (idx + 1) % len(dial.URLs)
	addr, err := c.Addresser(conn.Properties())
	if err != nil {
		_ = conn.Close()
		return nil, next, err
	}
	rc := src.Config
	if rc.Source, err = addr.Resolve(src.Kind, src.Name); err != nil {
		_ = conn.Close()
		return nil, next, err
	}
	rcv, err := conn.NewReceiver(ctx, rc)
	if err != nil {
		_ = conn.Close()
		return nil, next, err
	}
	rcv.addr, rcv.source = addr, rc.Source
	return rcv, idx, nil
}
