package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v4"
	"solace.dev/go/messaging"
	"solace.dev/go/messaging/pkg/solace"
)

// Events are optional callbacks for connection-state changes. They run on the
// Solace client's event goroutine, so they must not block.
type Events struct {
	// OnReconnecting fires when the client lost the connection and starts
	// reconnecting by itself; cause is what broke the connection.
	OnReconnecting func(cause error)
	// OnReconnected fires when the client restored the session.
	OnReconnected func()
	// OnInterrupted fires once when the session is gone for good (reconnect
	// attempts exhausted or the broker refused the session).
	OnInterrupted func(cause error)
}

// Session is one connected Solace MessagingService plus its state.
type Session struct {
	svc solace.MessagingService
	log Logger

	connected atomic.Bool
	upMu      sync.Mutex
	up        chan struct{} // closed while connected; replaced when the connection drops
	down      chan struct{}
	downOnce  sync.Once
	downErr   atomic.Value // error

	closeOnce sync.Once
	closeErr  error

	// keepers renew the session's OAuth tokens (token.go).
	keepers []*tokenKeeper
}

// ErrSessionDown reports a session that ended; plugins map it to
// Benthos's ErrNotConnected.
var ErrSessionDown = errors.New("solace session is down")

// Connect connects one MessagingService, retrying cfg.ConnectRetries times
// with cfg.ConnectBackoff while ctx allows, and wires the listeners so the
// Session reports connection state. Secrets never appear in its errors.
func Connect(ctx context.Context, cfg Config, log Logger, events Events) (*Session, error) {
	log = orNop(log)
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("solace connection config: %w", err)
	}
	if err := cfg.PrepareTokenSources(); err != nil {
		return nil, fmt.Errorf("solace connection config: %w", err)
	}
	cfg, err := cfg.withTokens(ctx)
	if err != nil {
		return nil, fmt.Errorf("solace connection %v: %w", cfg.URLs, err)
	}
	if cfg, err = cfg.ResolveSecretFiles(); err != nil {
		return nil, fmt.Errorf("solace connection config: %w", err)
	}
	// The client's own connection-retries is 0 (see serviceProperties):
	// retrying here keeps ctx in charge of every wait.
	policy := backoff.WithContext(backoff.WithMaxRetries(cfg.ConnectBackoff.exponential(), uint64(cfg.ConnectRetries)), ctx)
	attempt := 0
	var lastErr error
	s, err := backoff.RetryNotifyWithData(func() (*Session, error) {
		attempt++
		s, err := connectOnce(ctx, cfg, log, events)
		if err == nil {
			return s, nil
		}
		lastErr = err
		var cfgErr *solace.InvalidConfigurationError
		var argErr *solace.IllegalArgumentError
		if errors.As(err, &cfgErr) || errors.As(err, &argErr) || ctx.Err() != nil {
			return nil, backoff.Permanent(err)
		}
		return nil, err
	}, policy, func(err error, wait time.Duration) {
		log.Warnf("Connecting to Solace %v failed (attempt %d of %d), retrying in %v: %v",
			cfg.URLs, attempt, cfg.ConnectRetries+1, wait, err)
	})
	if err == nil {
		return s, nil
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("connecting to solace %v: %w (last error: %v)", cfg.URLs, ctx.Err(), lastErr)
	}
	return nil, fmt.Errorf("connecting to solace %v vpn %q as %q: %w", cfg.URLs, cfg.VPN, cfg.Username, cfg.explainLogin(lastErr))
}

func connectOnce(ctx context.Context, cfg Config, log Logger, events Events) (*Session, error) {
	svc, err := messaging.NewMessagingServiceBuilder().
		FromConfigurationProvider(cfg.serviceProperties()).
		Build()
	if err != nil {
		return nil, redact(err, cfg)
	}
	s := &Session{svc: svc, log: log, down: make(chan struct{}), up: make(chan struct{})}
	s.newKeepers(cfg)
	svc.AddReconnectionAttemptListener(func(ev solace.ServiceEvent) {
		s.setConnected(false)
		s.kickTokens()
		cause := eventCause(ev)
		log.Warnf("Solace connection to %s lost, reconnecting: %v", ev.GetBrokerURI(), cause)
		if events.OnReconnecting != nil {
			events.OnReconnecting(cause)
		}
	})
	svc.AddReconnectionListener(func(ev solace.ServiceEvent) {
		s.setConnected(true)
		log.Infof("Solace connection to %s restored", ev.GetBrokerURI())
		if events.OnReconnected != nil {
			events.OnReconnected()
		}
	})
	svc.AddServiceInterruptionListener(func(ev solace.ServiceEvent) {
		cause := cfg.explainLogin(eventCause(ev))
		s.markDown(cause)
		log.Errorf("Solace session to %s interrupted: %v", ev.GetBrokerURI(), cause)
		if events.OnInterrupted != nil {
			events.OnInterrupted(cause)
		}
	})

	// Connect has no context; run it asynchronously so ctx can abandon it.
	// An abandoned connect is disconnected once it completes.
	done := svc.ConnectAsync()
	select {
	case err := <-done:
		if err != nil {
			_ = svc.Disconnect()
			return nil, redact(err, cfg)
		}
	case <-ctx.Done():
		go func() {
			<-done
			_ = svc.Disconnect()
		}()
		return nil, ctx.Err()
	}
	s.setConnected(true)
	s.startKeepers()
	log.Infof("Connected to Solace %v vpn %q", cfg.URLs, cfg.VPN)
	return s, nil
}

func eventCause(ev solace.ServiceEvent) error {
	if err := ev.GetCause(); err != nil {
		return err
	}
	if m := ev.GetMessage(); m != "" {
		return errors.New(m)
	}
	return ErrSessionDown
}

// redactedError hides secrets that a client error might echo.
type redactedError struct {
	msg     string
	wrapped error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.wrapped }

// redact returns err unchanged unless its text contains a secret of cfg, in
// which case the text is masked while errors.As still reaches the original.
func redact(err error, cfg Config) error {
	msg := err.Error()
	masked := msg
	secrets := []string{cfg.Password, cfg.TLS.ClientKeyPassword, cfg.OAuth2.AccessToken, cfg.OAuth2.IDToken}
	if cfg.OAuth2.Grant != nil {
		secrets = append(secrets, cfg.OAuth2.Grant.ClientSecret)
	}
	for _, s := range secrets {
		if s != "" {
			masked = strings.ReplaceAll(masked, s, "***")
		}
	}
	if masked == msg {
		return err
	}
	return &redactedError{msg: masked, wrapped: err}
}

// setConnected records the connection state and opens or closes the gate
// WaitConnected waits on.
func (s *Session) setConnected(up bool) {
	s.upMu.Lock()
	defer s.upMu.Unlock()
	was := s.connected.Swap(up)
	switch {
	case up && !was:
		close(s.up)
	case !up && was:
		s.up = make(chan struct{})
	}
}

// WaitConnected returns nil as soon as the session is connected, or an error
// once it ended for good or ctx ended. Publishers wait here while the client
// reconnects: the client drops direct messages meanwhile, and publishing
// into a persistent publisher that is being torn down races inside the
// client (v1.10.1 closes its buffer channel while Publish may send on it).
func (s *Session) WaitConnected(ctx context.Context) error {
	if s.connected.Load() {
		return nil
	}
	s.upMu.Lock()
	up := s.up
	s.upMu.Unlock()
	select {
	case <-up:
		return nil
	default:
	}
	select {
	case <-up:
		return nil
	case <-s.down:
		return fmt.Errorf("%w: %v", ErrSessionDown, s.Err())
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Session) markDown(cause error) {
	s.setConnected(false)
	s.downOnce.Do(func() {
		if cause == nil {
			cause = ErrSessionDown
		}
		s.downErr.Store(cause)
		close(s.down)
	})
}

// Connected reports whether the session is up right now (false while the
// client reconnects and after the session ended).
func (s *Session) Connected() bool { return s.connected.Load() && s.svc.IsConnected() }

// Down is closed when the session ended for good.
func (s *Session) Down() <-chan struct{} { return s.down }

// downWith calls markDown with ErrReceiverDown and the session's cause when
// the session goes down before closed is: a receiver on it goes down with it.
func (s *Session) downWith(closed <-chan struct{}, markDown func(error)) {
	select {
	case <-s.Down():
		cause := s.Err()
		if cause == nil {
			cause = ErrSessionDown
		}
		markDown(fmt.Errorf("%w: %w", ErrReceiverDown, cause))
	case <-closed:
	}
}

// Err returns why the session ended, or nil while it lives.
func (s *Session) Err() error {
	if v := s.downErr.Load(); v != nil {
		return v.(error)
	}
	return nil
}

// Close disconnects the session, waiting for the client until ctx ends.
// Calling it more than once is safe.
func (s *Session) Close(ctx context.Context) error {
	s.closeOnce.Do(func() {
		s.markDown(ErrSessionDown)
		done := make(chan error, 1)
		go func() { done <- s.svc.Disconnect() }()
		select {
		case err := <-done:
			var ise *solace.IllegalStateError
			if err != nil && !errors.As(err, &ise) {
				s.closeErr = fmt.Errorf("disconnecting solace session: %w", err)
			}
		case <-ctx.Done():
			s.closeErr = ctx.Err()
		}
	})
	return s.closeErr
}
