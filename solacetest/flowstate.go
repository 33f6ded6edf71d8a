package solacetest

import (
	"fmt"
	"strings"
)

// FlowState describes a queue's delivery state in one line, for the failure
// message of a test or benchmark whose consumer stopped receiving: what the
// queue holds and has ready, whether delivery is paused, and per bound flow
// its window (the client's last p3: 0 means the client stopped the flow),
// deliveries not yet transport-acked, delivered-unsettled messages and the
// last delivery id. A stalled consumer with window 0 stopped its own flow; a
// window open with nothing ready and messages unsettled means the client
// holds (or dropped) deliveries it never settled.
func (b *Broker) FlowState(vpn, name string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	q, err := b.queueLocked(vpn, name)
	if err != nil {
		return err.Error()
	}
	var s strings.Builder
	fmt.Fprintf(&s, "queue %s: spooled=%d ready=%d delivery_paused=%v", name, q.count, q.ready.Len(), b.faults.paused)
	for _, f := range q.flows {
		fmt.Fprintf(&s, "; flow %d: active=%v window=%d in_flight=%d unsettled=%d last_id=%d bound=%v",
			f.id, f.active, f.window, len(f.sent), len(f.unsettled), f.prevID, f.c != nil)
	}
	return s.String()
}
