package solacetest

// This file lets a broker serve one of its SMF transports on further
// addresses, as a real broker is reachable on several (a test network's
// fixed ports, say, beside the ephemeral ones the tests were given).

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
)

// Transports ListenAlso can serve.
const (
	TransportSMF        = "smf"        // plain SMF (tcp://)
	TransportCompressed = "compressed" // compressed SMF
	TransportSMFTLS     = "smf-tls"    // SMF over TLS (tcps://); needs Config.TLS
)

// ListenAlso serves transport on addr as well, until the broker closes, and
// returns the address it listens on.
func (b *Broker) ListenAlso(transport, addr string) (net.Addr, error) {
	if transport != TransportSMF && transport != TransportCompressed && transport != TransportSMFTLS {
		return nil, fmt.Errorf("listening on %s: unknown transport %q (want %q, %q or %q)", addr, transport,
			TransportSMF, TransportCompressed, TransportSMFTLS)
	}
	if transport == TransportSMFTLS && b.cfg.TLS == nil {
		return nil, errors.New("listening for SMF over TLS on " + addr + ": the broker has no TLS certificate (Config.TLS)")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening for %s on %s: %w", transport, addr, err)
	}
	switch transport {
	case TransportCompressed:
		ln = compressedListener{ln}
	case TransportSMFTLS:
		ln = tls.NewListener(ln, b.cfg.TLS)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-b.done:
		_ = ln.Close()
		return nil, errors.New("listening on " + addr + ": the broker is closed")
	default:
	}
	b.wg.Add(2)
	go b.acceptLoop(ln)
	go func() {
		defer b.wg.Done()
		<-b.done
		_ = ln.Close()
	}()
	return ln.Addr(), nil
}
