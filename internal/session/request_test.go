package session

import (
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/resource"
)

// silentPublisher takes every request and never reports on it, as the
// client does while a send stalls on a full socket.
type silentPublisher struct {
	solace.RequestReplyMessagePublisher
}

func (silentPublisher) PublishBytes([]byte, solace.ReplyMessageHandler, *resource.Topic, time.Duration, any) error {
	return nil
}

func TestRequesterWatchdogEndsASilentRequest(t *testing.T) {
	s := &Session{}
	s.connected.Store(true)
	r := &Requester{sess: s, pub: silentPublisher{}, pending: map[*pendingRequest]struct{}{}}
	done := make(chan error, 1)
	start := time.Now()
	const timeout = 100 * time.Millisecond
	r.Request(t.Context(), &Outbound{Payload: []byte("x"), Destination: Destination{Name: "svc"}}, timeout,
		ReplyFunc(func(_ *Reply, err error) { done <- err }))
	select {
	case err := <-done:
		require.ErrorIs(t, err, ErrReplyTimeout)
		require.Equal(t, "timeout", ErrorLabel(err))
	case <-time.After(5 * time.Second):
		t.Fatal("the request never ended")
	}
	require.Less(t, time.Since(start), timeout+watchdogGrace+time.Second)
	require.Zero(t, r.Outstanding())
}

// One watchdog serves every request: each silent request ends on its own
// deadline, the earlier first, and none before it.
func TestRequesterWatchdogEndsEachRequestOnItsDeadline(t *testing.T) {
	s := &Session{}
	s.connected.Store(true)
	r := &Requester{sess: s, pub: silentPublisher{}, pending: map[*pendingRequest]struct{}{}}
	type end struct {
		i   int
		at  time.Duration
		err error
	}
	ends := make(chan end, 2)
	start := time.Now()
	timeouts := []time.Duration{400 * time.Millisecond, 50 * time.Millisecond}
	for i, timeout := range timeouts {
		r.Request(t.Context(), &Outbound{Payload: []byte("x"), Destination: Destination{Name: "svc"}}, timeout,
			ReplyFunc(func(_ *Reply, err error) { ends <- end{i, time.Since(start), err} }))
	}
	for _, want := range []int{1, 0} {
		select {
		case e := <-ends:
			require.Equal(t, want, e.i, "the request with the earlier deadline ends first")
			require.ErrorIs(t, e.err, ErrReplyTimeout)
			require.GreaterOrEqual(t, e.at, timeouts[e.i]+watchdogGrace, "a request ended before its deadline")
		case <-time.After(5 * time.Second):
			t.Fatal("a request never ended")
		}
	}
	require.Zero(t, r.Outstanding())
}

// A request and its reply's storage are one allocation of at most 512
// bytes, the largest the allocator serves without a header.
func TestPendingRequestSize(t *testing.T) {
	require.LessOrEqual(t, unsafe.Sizeof(pendingRequest{}), uintptr(512))
}
