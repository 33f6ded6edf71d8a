package solacetest

// This file is the fault-injection layer: test hooks that make the broker
// misbehave on purpose, reached through Broker.Faults, and FlowState, the
// queue's delivery state a test prints when its consumer stops receiving.

import (
	"fmt"
	"strings"
	"time"
)

// faultState is guarded by Broker.mu.
type faultState struct {
	refuseLoginsUntil time.Time
	nackLeft          int
	nackReason        string
	nackCode          uint32 // 0 means 503
	paused            bool
	// dropAfterSpool closes the publisher's connection right after the next
	// guaranteed message is spooled, before it is acked (tests only).
	dropAfterSpool bool
	// ignoreWindows delivers past the consumers' windows (IgnoreConsumerWindows).
	ignoreWindows bool
}

// refusingLogins reports whether logins are refused now (RefuseLogins).
func (f *faultState) refusingLogins() bool {
	return time.Now().Before(f.refuseLoginsUntil)
}

// takePublishNack consumes one injected publish rejection
// (NackNextPublishes), reporting false when none is left.
func (f *faultState) takePublishNack() (rejection, bool) {
	if f.nackLeft <= 0 {
		return rejection{}, false
	}
	f.nackLeft--
	code := f.nackCode
	if code == 0 {
		code = 503
	}
	return rejection{code, f.nackReason}, true
}

// takeDropAfterSpool consumes the dropAfterSpool fault, reporting whether
// it was set.
func (f *faultState) takeDropAfterSpool() bool {
	drop := f.dropAfterSpool
	f.dropAfterSpool = false
	return drop
}

// Faults injects faults into a broker: its methods make the broker misbehave
// on purpose, for tests of failure handling. Broker.Faults returns one.
type Faults struct{ b *Broker }

// Faults returns the broker's fault-injection handle, so that
// b.Faults().PauseDelivery() reads as what it is and the broker's own
// methods stay admin and inspection.
func (b *Broker) Faults() Faults { return Faults{b} }

// DropConnections closes every client socket now, as a broker restart or a
// network failure would. Clients with reconnection enabled come back; the
// unsettled messages of their consumer flows are redelivered.
func (f Faults) DropConnections() {
	b := f.b
	b.mu.Lock()
	defer b.mu.Unlock()
	b.log.Info("fault: dropping all client connections", "count", len(b.conns))
	for c := range b.conns {
		c.close()
	}
}

// RefuseLogins makes logins fail with 503 "Service Unavailable" for d.
func (f Faults) RefuseLogins(d time.Duration) {
	b := f.b
	b.mu.Lock()
	defer b.mu.Unlock()
	b.log.Info("fault: refusing logins", "for", d)
	b.faults.refuseLoginsUntil = time.Now().Add(d)
}

// NackNextPublishes makes the broker reject the next n guaranteed publishes
// with status 503 and reason as the text, without spooling them. The client
// derives its error subcode from the text: "Spool Over Quota" gives
// SPOOL_OVER_QUOTA, "Queue Shutdown" QUEUE_SHUTDOWN, other texts DATA_OTHER.
func (f Faults) NackNextPublishes(n int, reason string) {
	b := f.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if reason == "" {
		reason = "Spool Over Quota"
	}
	b.faults.nackLeft, b.faults.nackReason = n, reason
}

// PauseDelivery stops guaranteed delivery to every consumer flow; publishing
// and spooling go on. Direct messages are not affected.
func (f Faults) PauseDelivery() {
	b := f.b
	b.mu.Lock()
	defer b.mu.Unlock()
	b.faults.paused = true
}

// IgnoreConsumerWindows makes guaranteed delivery ignore the consumers'
// windows (on) or honour them again (off), as a broker that does not heed a
// client's flow stop. The Go client v1.10.1 then drops what overflows its
// receive buffer ("Unable to push message to buffer") without settling it:
// the broker keeps those messages delivered and unsettled for as long as the
// flow stays bound, which is how a client whose own flow control went wrong
// (its stopFlow/startFlow race) leaves a consumer, made deterministic for
// tests of detection and recovery. Max-unacked still applies.
func (f Faults) IgnoreConsumerWindows(on bool) {
	b := f.b
	b.mu.Lock()
	defer b.mu.Unlock()
	b.faults.ignoreWindows = on
	if on {
		b.dispatchAllLocked()
	}
}

// ResumeDelivery undoes PauseDelivery.
func (f Faults) ResumeDelivery() {
	b := f.b
	b.mu.Lock()
	defer b.mu.Unlock()
	b.faults.paused = false
	b.dispatchAllLocked()
}

// dispatchAllLocked, with b.mu held, delivers what every queue can deliver
// now, after a fault that held delivery back was lifted or relaxed.
func (b *Broker) dispatchAllLocked() {
	for _, v := range b.vpns {
		for _, q := range v.queues {
			b.dispatch(q)
		}
	}
}

// ---- what a test prints when delivery stalls ----

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

// FaultState is what faults are in force, as Faults.State reports them.
type FaultState struct {
	DeliveryPaused        bool // PauseDelivery
	RefusingLogins        bool // RefuseLogins, until its time is up
	PublishNacksLeft      int  // NackNextPublishes
	IgnoreConsumerWindows bool // IgnoreConsumerWindows
}

// State reports the faults in force.
func (f Faults) State() FaultState {
	b := f.b
	b.mu.Lock()
	defer b.mu.Unlock()
	return FaultState{DeliveryPaused: b.faults.paused, RefusingLogins: b.faults.refusingLogins(),
		PublishNacksLeft: b.faults.nackLeft, IgnoreConsumerWindows: b.faults.ignoreWindows}
}
