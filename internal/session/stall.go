package session

// Stall detection: the Solace Go client v1.10.1 can strand a bound flow. Its
// startFlow clears the stopped flag and then starts the CCSMP flow; a
// stopFlow between the two leaves the flow running while the flag says
// stopped, so the client never stops it again, its buffer overflows, and the
// client drops what does not fit ("Unable to push message to buffer")
// without settling it. The broker keeps those messages delivered and
// unacknowledged for as long as the flow stays bound: a silent stall. The
// receiver compares, once per StallCheck, CCSMP's receive count of each flow
// with what the client handed over, and rebinds a flow that lost messages,
// so that the broker redelivers them, flagged. It needs the native path (the
// flow's CCSMP handle and the client's buffer are reached through package
// ccsmp); on the Go-API fallback there is no detection.

import (
	"context"
	"fmt"
	"time"

	"github.com/connect-solace/connect-solace/internal/session/ccsmp"
)

// DefaultStallCheck is how often a receiver looks for stranded messages when
// ReceiverConfig.StallCheck is zero.
const DefaultStallCheck = time.Second

// stallReading is one look at a flow, taken in this order: CCSMP's receive
// count first, then the client's buffer, then what reached onMessage. A
// message moves from the first to the second to the third, so reading in
// that order can count a message twice but never miss one that is merely
// moving.
type stallReading struct {
	received uint64 // data messages CCSMP received on the flow
	buffered int    // messages waiting in the Go client's buffer
	seen     uint64 // messages the client handed to onMessage
}

// missing is how many messages CCSMP received that are neither in the
// client's buffer nor handed over.
func (rd stallReading) missing() uint64 {
	if got := rd.seen + uint64(rd.buffered); rd.received > got {
		return rd.received - got
	}
	return 0
}

// stallDetector decides, from successive readings of one flow, when the
// flow stranded messages: the client's buffer is empty and CCSMP received
// more than the client handed over, in two readings in a row. One reading is
// not enough: a message counted by CCSMP is pushed into the buffer, and
// popped from it, a moment later. With the buffer empty nothing the client
// still holds can explain the gap, so a gap that persists across a check
// interval is messages the client dropped.
type stallDetector struct {
	suspect bool
}

// observe takes the next reading and reports whether the flow is stalled.
// After a stall it starts over: the flow is rebound.
func (d *stallDetector) observe(rd stallReading) bool {
	s := rd.buffered == 0 && rd.missing() > 0
	stalled := s && d.suspect
	d.suspect = s && !stalled
	return stalled
}

// read takes a stallReading of f, or false when its CCSMP handle or the
// client's buffer cannot be reached.
func (f *flow) read() (stallReading, bool) {
	h := f.handle.Load()
	if h == 0 {
		return stallReading{}, false
	}
	rx, ok := ccsmp.FlowReceived(h)
	if !ok {
		return stallReading{}, false
	}
	buf, ok := ccsmp.BufferedOf(f.pr)
	if !ok {
		return stallReading{}, false
	}
	return stallReading{received: rx, buffered: buf, seen: f.seen.Load()}, true
}

// watchStalls checks every flow once per interval until the receiver is
// closed or goes down, and rebinds a stalled one.
func (r *Receiver[T]) watchStalls(ctx context.Context, every time.Duration) {
	defer close(r.watchDone)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.down:
			return
		case <-t.C:
		}
		r.flowsMu.Lock()
		flows := append([]*flow(nil), r.flows...)
		r.flowsMu.Unlock()
		for _, f := range flows {
			if rd, ok := f.read(); ok && f.stall.observe(rd) {
				r.rebind(ctx, f, rd, every)
			}
		}
	}
}

// rebind terminates f, which stranded messages, and binds a new flow in its
// place: the broker redelivers what f left unsettled, flagged redelivered.
// Messages of f still waiting are dropped (the broker redelivers them too),
// and settling one the caller holds fails with ErrStaleFlow. A flow that
// cannot be bound again takes the receiver down.
func (r *Receiver[T]) rebind(ctx context.Context, f *flow, rd stallReading, every time.Duration) {
	r.conv.log.Warnf("Solace input: flow %d on queue %q stalled: CCSMP received %d messages, the Go client handed over %d "+
		"and its buffer stayed empty over two checks %v apart, so it dropped %d without settling them; rebinding the flow "+
		"so that the broker redelivers them", f.id, r.queue, rd.received, rd.seen, every, rd.missing())
	f.retired.Store(true)
	_ = f.pr.Pause()
	if err := f.pr.Terminate(0); err != nil && !isIncompleteDelivery(err) && !isIllegalState(err) {
		r.conv.log.Warnf("Solace input: terminating stalled flow %d on queue %q: %v", f.id, r.queue, err)
	}
	r.mu.Lock()
	kept := r.waiting[:r.head]
	var dropped []*Delivery[T]
	for _, in := range r.waiting[r.head:] {
		if in.flow == f {
			dropped = append(dropped, in)
		} else {
			kept = append(kept, in)
		}
	}
	clear(r.waiting[len(kept):])
	r.waiting = kept
	r.mu.Unlock()
	for _, in := range dropped {
		r.Release(in)
	}
	nf, err := r.startFlow(ctx, f.id, r.cfg)
	if err != nil {
		if ctx.Err() == nil {
			r.markDown(fmt.Errorf("%w: rebinding stalled flow %d on queue %q: %w", ErrReceiverDown, f.id, r.queue, err))
		}
		return
	}
	r.flowsMu.Lock()
	if r.isClosed() {
		r.flowsMu.Unlock()
		_ = nf.pr.Terminate(0)
		return
	}
	r.flows[f.id] = nf
	r.flowsMu.Unlock()
	if r.onStallRecovered != nil {
		r.onStallRecovered()
	}
}
