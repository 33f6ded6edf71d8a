package session

import (
	"context"
	"sync"

	"solace.dev/go/messaging/pkg/solace/message"
	"solace.dev/go/messaging/pkg/solace/resource"

	"github.com/connect-solace/connect-solace/internal/freelist"
)

// directSender lets one goroutine at a time build and send direct messages
// for all the publishers that share it (a Pool's, when the client buffers
// the messages, or else a single Publisher's).
//
// Benthos calls WriteBatch from max_in_flight goroutines (64 by default);
// with the streaming writer each brings one message. When several of them
// build and send at once, even on different sessions of a pool, every step
// of the client (allocating, filling, duplicating and freeing the C
// message, and the Go finalizers it sets) contends with the others in the C
// library and the Go runtime, and costs more CPU per message than a single
// loop over the client, whereas one writer at a time costs no more than that
// loop. Here the writer that finds no one sending becomes the leader: it
// sends its own batch, then one round of the batches queued meanwhile,
// wakes their owners, and passes the lead to the next writer that queued,
// so that every writer returns in bounded time.
//
// A message the client does not take at once (no connection, full buffer in
// reject mode, an error) is handed back to its owner, who waits and retries
// without the lead and then queues the rest of its batch again: the waits
// of one session never hold up the others. Blocking in the client's own
// wait-mode buffer happens with the lead held, as it did with the lock per
// publisher: round robin puts the pool's writers on a slow session anyway.
type directSender struct {
	mu    sync.Mutex
	busy  bool          // a leader is sending
	queue []*directSend // waiting for the leader, in arrival order
	spare []*directSend // the leader's other queue buffer, reused
}

// directSend is one writer's turn: messages msgs[next:] of its batch still
// to send on p.
type directSend struct {
	p       *Publisher
	msgs    []*Outbound
	results []Result
	next    int

	// held says the client did not take msgs[next], with the error of
	// that first attempt (errNotConnectedYet when it was not attempted);
	// the owner retries it without the lead. heldMsg is the message built
	// for it, nil when the client built its own (PublishBytes).
	held      bool
	heldMsg   message.OutboundMessage
	heldTopic *resource.Topic
	heldErr   error

	lead bool          // set by the leader that wakes this writer to lead next
	wake chan struct{} // capacity 1: done, or lead
}

// publishDirect sends msgs on p through its sender, in order, writing each
// message's outcome into results: nil once the client has the message.
func (p *Publisher) publishDirect(ctx context.Context, msgs []*Outbound, results []Result) {
	s := p.sender
	d := directSends.Get()
	if d.wake == nil {
		d.wake = make(chan struct{}, 1)
	}
	d.p, d.msgs, d.results, d.next = p, msgs, results, 0
	s.mu.Lock()
	for {
		s.sendLocked(d)
		if !d.held {
			break
		}
		if p.onHeld != nil {
			p.onHeld()
		}
		results[d.next].Err = p.retryDirect(ctx, d)
		d.held, d.heldMsg, d.heldTopic, d.heldErr = false, nil, nil, nil
		if d.next++; d.next == len(msgs) {
			break
		}
		s.mu.Lock()
	}
	d.p, d.msgs, d.results = nil, nil, nil
	directSends.Put(d)
}

// directSends are the writers' turns, reused.
var directSends freelist.List[directSend]

// sendLocked, called with s.mu held, returns (without it) once d's messages
// are sent or one of them is held for d's owner to retry.
func (s *directSender) sendLocked(d *directSend) {
	if s.busy {
		s.queue = append(s.queue, d)
		s.mu.Unlock()
		<-d.wake
		if !d.lead {
			return // the leader sent them
		}
		d.lead = false
	} else {
		s.busy = true
		s.mu.Unlock()
	}

	// Leading: own batch first, then one round of the queue.
	d.p.sendReady(d)
	s.mu.Lock()
	round := s.queue
	s.queue = s.spare[:0]
	s.mu.Unlock()
	for _, w := range round {
		w.p.sendReady(w)
	}
	// Wake the owners after the round, not one by one during it: the
	// leader keeps building and sending in one stretch, and the wakes
	// come together.
	for i, w := range round {
		round[i] = nil
		w.wake <- struct{}{}
	}
	s.mu.Lock()
	s.spare = round[:0]
	if len(s.queue) == 0 {
		s.busy = false
		s.mu.Unlock()
		return
	}
	next := s.queue[0]
	n := copy(s.queue, s.queue[1:])
	s.queue[n] = nil
	s.queue = s.queue[:n]
	s.mu.Unlock()
	next.lead = true
	next.wake <- struct{}{}
}

// sendReady sends d's messages as long as the client takes each at once; it
// stops at the first it does not take, holding it in d.
func (p *Publisher) sendReady(d *directSend) {
	for ; d.next < len(d.msgs); d.next++ {
		o := d.msgs[d.next]
		if p.publishBytes && o.Destination.Name != "" && o.plain() {
			// The client builds a message without attributes itself and
			// sends that one; Publish would copy the message we built,
			// and we would free ours.
			topic := p.topics.get(o.Destination.Topic())
			err := errNotConnectedYet
			if p.sess.connected.Load() {
				err = p.direct.PublishBytes(o.Payload, topic)
			}
			if err != nil {
				d.held, d.heldTopic, d.heldErr = true, topic, err
				return
			}
			continue
		}
		m, topic, err := build(p.builder, &p.topics, o)
		if err != nil {
			d.results[d.next].Err = err
			continue
		}
		err = errNotConnectedYet
		if p.sess.connected.Load() {
			err = p.direct.Publish(m, topic)
		}
		if err != nil {
			d.held, d.heldMsg, d.heldTopic, d.heldErr = true, m, topic, err
			return
		}
		m.Dispose()
	}
}

// retryDirect retries the message d holds, without the lead; a message the
// client built itself is built here again.
func (p *Publisher) retryDirect(ctx context.Context, d *directSend) error {
	m, topic := d.heldMsg, d.heldTopic
	if m == nil {
		var err error
		if m, topic, err = build(p.builder, &p.topics, d.msgs[d.next]); err != nil {
			return err
		}
	}
	defer m.Dispose()
	return p.retryPublish(ctx, d.heldErr, func() error { return p.direct.Publish(m, topic) })
}
