package session

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/solacetest"
)

// endSession ends session i of p for good, as a broker that drops it does.
func endSession(t *testing.T, p *Pool, i int) *Session {
	t.Helper()
	s := p.slots[i].Load().sess
	require.NoError(t, s.Close(t.Context()))
	return s
}

func TestPoolReplacesOnlyTheDeadSession(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	require.NoError(t, b.CreateQueue("default", solacetest.QueueConfig{Name: "rep"}))
	c := testConfig(b)
	c.ClientName = "rep"
	p, err := NewPool(t.Context(), c, 2, PublisherOptions{Persistent: true, BackPressure: BackPressure{BufferSize: 10}}, nil, Events{})
	require.NoError(t, err)
	defer func() { _ = p.Close(context.Background()) }()
	kept := p.slots[1].Load()

	dead := endSession(t, p, 0)
	require.True(t, p.Alive(), "one live session keeps the pool usable")
	for range 4 {
		res := p.Publisher().PublishBatch(t.Context(), []*Outbound{{Payload: []byte("x"), Destination: Destination{Name: "rep", Queue: true}}})
		require.NoError(t, res[0].Err, "publishing skips the dead session")
	}
	require.Eventually(t, func() bool {
		s := p.slots[0].Load()
		return s.sess != dead && s.alive()
	}, 10*time.Second, 10*time.Millisecond, "the dead session is replaced (under its client name rep-0)")
	assert.Same(t, kept, p.slots[1].Load(), "the live session is left alone")
	assert.Equal(t, 2, b.ClientCount())
	seen := map[*Publisher]bool{}
	for range 2 {
		seen[p.Publisher()] = true
	}
	assert.Len(t, seen, 2, "round robin over both sessions again")
}

func TestPoolOfOneIsNotRepaired(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	p, err := NewPool(t.Context(), testConfig(b), 1, PublisherOptions{}, nil, Events{})
	require.NoError(t, err)
	endSession(t, p, 0)
	assert.False(t, p.Alive(), "a pool of one reports the loss; its owner reconnects")
	require.NoError(t, p.Close(t.Context()))
}

// TestPoolCloseStopsReplacement checks that Close ends a replacement that
// keeps failing (it waits for it, so it must not hang) and leaves no session.
func TestPoolCloseStopsReplacement(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	p, err := NewPool(t.Context(), testConfig(b), 2, PublisherOptions{}, nil, Events{})
	require.NoError(t, err)
	b.Faults().RefuseLogins(time.Minute) // the replacement keeps failing
	defer b.Faults().RefuseLogins(0)
	dead := endSession(t, p, 0)
	closed := make(chan error, 1)
	go func() { closed <- p.Close(t.Context()) }()
	select {
	case err := <-closed:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Close hangs on a failing replacement")
	}
	assert.Same(t, dead, p.slots[0].Load().sess, "no replacement after Close")
	assert.False(t, p.Alive())
	require.Eventually(t, func() bool { return b.ClientCount() == 0 }, 5*time.Second, 10*time.Millisecond)
}

// TestPoolFillsSessionsInOrder: PublisherFor takes the first live session
// whose window has room for the batch, else the least busy one.
func TestPoolFillsSessionsInOrder(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	p, err := NewPool(t.Context(), testConfig(b), 3, PublisherOptions{Persistent: true, BackPressure: BackPressure{BufferSize: 10}}, nil, Events{})
	require.NoError(t, err)
	defer func() { _ = p.Close(context.Background()) }()
	pub := func(i int) *Publisher { return p.slots[i].Load().pub }

	assert.Same(t, pub(0), p.PublisherFor(PublishWindow), "an idle first session takes a full window")
	pub(0).busy.Store(PublishWindow - 10)
	assert.Same(t, pub(0), p.PublisherFor(10), "room for 10 more")
	assert.Same(t, pub(1), p.PublisherFor(11), "the next session takes what does not fit")
	pub(1).busy.Store(PublishWindow)
	pub(2).busy.Store(PublishWindow + 5)
	assert.Same(t, pub(0), p.PublisherFor(20), "no room anywhere: the least busy")
	pub(0).busy.Store(0)
	dead := pub(0)
	endSession(t, p, 0)
	assert.NotSame(t, dead, p.PublisherFor(1), "a dead session is skipped")
}
