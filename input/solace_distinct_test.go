package input

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// distinctBodies is a stream consumer that keeps the distinct payloads it
// is given and says when n of them have arrived, however often each is
// redelivered.
type distinctBodies struct {
	n    int
	mu   sync.Mutex
	seen map[string]bool
	all  chan struct{}
}

func newDistinctBodies(n int) *distinctBodies {
	return &distinctBodies{n: n, seen: map[string]bool{}, all: make(chan struct{})}
}

// consume is the stream's consumer func.
func (d *distinctBodies) consume(_ context.Context, m *service.Message) error {
	body, _ := m.AsBytes()
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.seen[string(body)] {
		d.seen[string(body)] = true
		if len(d.seen) == d.n {
			close(d.all)
		}
	}
	return nil
}

func (d *distinctBodies) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.seen)
}

// wait fails the test unless all n arrived within timeout.
func (d *distinctBodies) wait(t testing.TB, timeout time.Duration) {
	t.Helper()
	select {
	case <-d.all:
	case <-time.After(timeout):
		t.Fatalf("%d of %d messages arrived", d.count(), d.n)
	}
}
