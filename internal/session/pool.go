package session

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// Pool is a fixed set of sessions, each with one publisher. Spreading
// batches over several sessions multiplies the broker's per-session publish
// window (the client fixes it at 255 unacknowledged messages).
type Pool struct {
	sessions   []*Session
	publishers []*Publisher
	next       atomic.Uint64
}

// NewPool connects n sessions (concurrently) and starts a publisher on each.
// With a fixed cfg.ClientName, session i is named "<name>-<i>" because a
// broker allows one session per client name.
func NewPool(ctx context.Context, cfg Config, n int, opts PublisherOptions, log *service.Logger, events Events) (*Pool, error) {
	if n < 1 {
		n = 1
	}
	p := &Pool{sessions: make([]*Session, n), publishers: make([]*Publisher, n)}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c := cfg
			if c.ClientName != "" && n > 1 {
				c.ClientName = fmt.Sprintf("%s-%d", cfg.ClientName, i)
			}
			s, err := Connect(ctx, c, log, events)
			if err != nil {
				errs[i] = err
				return
			}
			p.sessions[i] = s
			pub, err := NewPublisher(s, opts)
			if err != nil {
				errs[i] = err
				return
			}
			p.publishers[i] = pub
		}(i)
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		_ = p.Close(context.Background())
		return nil, err
	}
	return p, nil
}

// Size is the number of sessions.
func (p *Pool) Size() int { return len(p.publishers) }

// Publisher picks the next publisher, round robin. A batch goes to one
// publisher so its messages keep their order.
func (p *Pool) Publisher() *Publisher {
	i := p.next.Add(1) - 1
	return p.publishers[i%uint64(len(p.publishers))]
}

// Alive reports whether every session and publisher is still usable.
func (p *Pool) Alive() bool {
	for _, pub := range p.publishers {
		if pub == nil || !pub.Alive() {
			return false
		}
	}
	return true
}

// Reconnects sums the client's reconnections over all sessions.
func (p *Pool) Reconnects() int64 {
	var n int64
	for _, s := range p.sessions {
		if s != nil {
			n += s.Reconnects()
		}
	}
	return n
}

// Close terminates the publishers (letting in-flight messages be confirmed
// until ctx ends) and disconnects the sessions.
func (p *Pool) Close(ctx context.Context) error {
	var errs []error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range p.sessions {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			var err error
			if pub := p.publishers[i]; pub != nil {
				err = pub.Close(ctx)
			}
			if s := p.sessions[i]; s != nil {
				err = errors.Join(err, s.Close(ctx))
			}
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}(i)
	}
	wg.Wait()
	return errors.Join(errs...)
}
