package session

import (
	"time"

	"solace.dev/go/messaging/pkg/solace"
)

// Delay returns the wait before connect retry number n (0-based) under b.
func (b Backoff) Delay(n int) time.Duration {
	e := b.exponential()
	d := e.NextBackOff()
	for range n {
		d = e.NextBackOff()
	}
	return d
}

// Service returns the client's MessagingService, for tests that drive the
// client directly; the package itself uses the svc field.
func (s *Session) Service() solace.MessagingService { return s.svc }

// DefaultConfig returns the defaults of ConnectionFields for the given URLs.
func DefaultConfig(urls ...string) Config {
	return Config{
		URLs:              urls,
		VPN:               "default",
		AuthScheme:        AuthBasic,
		TLS:               TLSConfig{ValidateServerCert: true, ValidateDate: true, ValidateServerName: true},
		ReconnectAttempts: 3,
		ReconnectInterval: 3 * time.Second,
		ConnectRetries:    0,
		ConnectBackoff:    Backoff{Initial: time.Second, Multiplier: 2, Max: 10 * time.Second},
		ConnectTimeout:    30 * time.Second,
	}
}

// rcv and dlv are the receiver and its deliveries in tests, which need no
// slot of their own.
type (
	rcv = Receiver[struct{}]
	dlv = Delivery[struct{}]
)
