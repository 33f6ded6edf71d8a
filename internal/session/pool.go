package session

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// Pool is a fixed set of sessions, each with one publisher. Spreading
// batches over several sessions multiplies the broker's per-session publish
// window (the client fixes it at 255 unacknowledged messages); PublisherFor
// spreads them only as far as the messages in flight need.
//
// With more than one session, a session that ends for good is replaced on
// its own, in the background, while the others carry on publishing: losing
// one of N sessions must not cost the other N-1 their in-flight messages. A
// pool of one session is not repaired: it reports !Alive and its owner
// (Benthos's connect loop, through the output) builds a new one, so there is
// one retry layer per case.
type Pool struct {
	cfg    Config
	opts   PublisherOptions
	log    Logger
	events Events

	slots []atomic.Pointer[poolSlot]
	next  atomic.Uint64

	// ctx ends on Close; it bounds the replacement of dead sessions, which
	// run in goroutines counted by wg.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// poolSlot is one session and its publisher.
type poolSlot struct {
	sess *Session
	pub  *Publisher
}

func (s *poolSlot) alive() bool { return s != nil && s.pub != nil && s.pub.Alive() }

// close terminates the publisher (letting in-flight messages be confirmed
// until ctx ends) and disconnects the session.
func (s *poolSlot) close(ctx context.Context) error {
	var err error
	if s.pub != nil {
		err = s.pub.Close(ctx)
	}
	if s.sess != nil {
		err = errors.Join(err, s.sess.Close(ctx))
	}
	return err
}

// NewPool connects n sessions (concurrently) and starts a publisher on each.
// With a fixed cfg.ClientName, session i is named "<name>-<i>" because a
// broker allows one session per client name.
func NewPool(ctx context.Context, cfg Config, n int, opts PublisherOptions, log Logger, events Events) (*Pool, error) {
	log = orNop(log)
	if n < 1 {
		n = 1
	}
	if !opts.Persistent && (!opts.BackPressure.Reject || opts.BackPressure.BufferSize > 0) {
		// One sender for all the sessions, when a publish call only
		// hands the message to the client's buffer. Without a buffer
		// (lower_latency) the call writes to the socket itself, and each
		// session keeps its own sender, so that sessions write in
		// parallel.
		opts.sender = &directSender{}
	}
	p := &Pool{cfg: cfg, opts: opts, log: log, events: events, slots: make([]atomic.Pointer[poolSlot], n)}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var s *poolSlot
			s, errs[i] = p.open(ctx, i, cfg)
			p.slots[i].Store(s)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		_ = p.Close(context.Background())
		return nil, err
	}
	if n > 1 {
		for i := range p.slots {
			p.wg.Add(1)
			go p.keep(i)
		}
	}
	return p, nil
}

// open connects session i of the pool with cfg and starts its publisher. A
// half-built slot is returned with the error, for Close to tear down.
func (p *Pool) open(ctx context.Context, i int, cfg Config) (*poolSlot, error) {
	if cfg.ClientName != "" && len(p.slots) > 1 {
		cfg.ClientName = fmt.Sprintf("%s-%d", cfg.ClientName, i)
	}
	sess, err := Connect(ctx, cfg, p.log, p.events)
	if err != nil {
		return nil, err
	}
	pub, err := NewPublisher(sess, p.opts)
	if err != nil {
		return &poolSlot{sess: sess}, err
	}
	return &poolSlot{sess: sess, pub: pub}, nil
}

// keep replaces session i whenever it ends for good, until Close.
func (p *Pool) keep(i int) {
	defer p.wg.Done()
	for {
		s := p.slots[i].Load()
		select {
		case <-p.ctx.Done():
			return
		case <-s.pub.term:
		case <-s.sess.down:
		}
		p.log.Warnf("Solace session %d of %d ended (%v); replacing it", i+1, len(p.slots), s.sess.Err())
		cctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
		_ = s.close(cctx)
		cancel()
		// This loop is the only retry layer for a replacement: Connect
		// itself makes one attempt.
		cfg := p.cfg
		cfg.ConnectRetries = 0
		err := backoff.RetryNotify(func() error {
			ns, err := p.open(p.ctx, i, cfg)
			if err != nil {
				if ns != nil {
					_ = ns.close(p.ctx)
				}
				return err
			}
			p.slots[i].Store(ns)
			return nil
		}, backoff.WithContext(p.replaceBackoff(), p.ctx), func(err error, wait time.Duration) {
			p.log.Warnf("Replacing Solace session %d of %d failed, retrying in %v: %v", i+1, len(p.slots), wait, err)
		})
		if err != nil {
			return // Close was called
		}
		p.log.Infof("Replaced Solace session %d of %d", i+1, len(p.slots))
	}
}

// replaceBackoff is the connect backoff, with a floor so that a zero
// initial wait does not hammer the broker.
func (p *Pool) replaceBackoff() backoff.BackOff {
	b := p.cfg.ConnectBackoff
	b.Initial = max(b.Initial, 100*time.Millisecond)
	b.Multiplier = max(b.Multiplier, 1)
	return b.exponential()
}

// Size is the number of sessions.
func (p *Pool) Size() int { return len(p.slots) }

// Publisher picks the next live publisher, round robin. A batch goes to one
// publisher so its messages keep their order. When no session is alive it
// returns a dead publisher, whose PublishBatch reports the loss.
func (p *Pool) Publisher() *Publisher {
	n := uint64(len(p.slots))
	i := p.next.Add(1) - 1
	for k := range n {
		if s := p.slots[(i+k)%n].Load(); s.alive() {
			return s.pub
		}
	}
	return p.slots[i%n].Load().pub
}

// PublishWindow is the broker's publish window of a session: the most
// persistent messages the client sends before it waits for confirmations
// (the Go client fixes it).
const PublishWindow = 255

// PublisherFor picks a live publisher for a batch of n messages, filling the
// sessions in order: the first whose window has room for the batch beside
// the messages it is publishing, else the least busy one. Traffic then uses
// as few sessions as its messages in flight need: every session in use costs
// the client and the broker wake-ups and writes of their own for the same
// messages, which one busy session shares. Like Publisher, it returns a dead
// publisher when no session is alive.
func (p *Pool) PublisherFor(n int) *Publisher {
	var least *Publisher
	for i := range p.slots {
		s := p.slots[i].Load()
		if !s.alive() {
			continue
		}
		busy := s.pub.busy.Load()
		if busy+int64(n) <= PublishWindow {
			return s.pub
		}
		if least == nil || busy < least.busy.Load() {
			least = s.pub
		}
	}
	if least == nil {
		return p.Publisher()
	}
	return least
}

// Alive reports whether the pool can publish: at least one session and its
// publisher are usable (dead ones of a larger pool are being replaced).
func (p *Pool) Alive() bool {
	for i := range p.slots {
		if p.slots[i].Load().alive() {
			return true
		}
	}
	return false
}

// Close stops replacing sessions and waits for replacements under way, then
// terminates the publishers (letting in-flight messages be confirmed until
// ctx ends) and disconnects the sessions.
func (p *Pool) Close(ctx context.Context) error {
	p.cancel()
	p.wg.Wait()
	errs := make([]error, len(p.slots))
	var wg sync.WaitGroup
	for i := range p.slots {
		if s := p.slots[i].Load(); s != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = s.close(ctx)
			}()
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}
