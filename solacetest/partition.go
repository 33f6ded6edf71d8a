package solacetest

// This file is partitioned queues: a non-exclusive queue with
// PartitionCount > 0. Each message goes to a partition (by a hash of its
// partition key, the JMSXGroupID user property, or in turn when it has none)
// and each partition to one consumer: the first PartitionCount bound flows
// are active and share the partitions evenly; further flows are inactive
// (told so when they asked for flow updates) until a partition is free.
// Messages of one key therefore reach one consumer, in order. As on
// PubSub+, when consumers come or go (the first one included), a partition
// without a consumer waits (its messages stay queued) and the partitions
// are rebalanced once the queue's PartitionRebalanceDelay has passed,
// moving as few as possible: consumers that bind together share the
// partitions from the start (the vendor suite's partitioned-queue spec
// counts every message received exactly once across three receivers). A moved
// partition's new owner gets its messages only once the old owner has
// settled those it holds (the handoff), so that a key's messages still
// reach the application in order; after partitionHandoffMax the broker
// takes back what the old owner still holds and redelivers it, flagged, to
// the new owner before the partition's later messages (revokeMoved).
// It is also what consumers see when a queue's egress is switched off and
// on: flows stay bound but become inactive (passivateFlows), told both ways
// when they asked for flow-change updates.

import (
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"time"
)

// partitionKeyProperty is the user property holding a message's partition key.
const partitionKeyProperty = "JMSXGroupID"

func (q *queue) partitioned() bool {
	return q.cfg.PartitionCount > 0 && q.cfg.AccessType == AccessNonExclusive
}

// activeSlot reports whether the flow bound i-th may be active.
func (q *queue) activeSlot(i int) bool {
	switch {
	case q.partitioned():
		return i < q.cfg.PartitionCount
	case q.cfg.AccessType == AccessNonExclusive:
		return true
	}
	return i == 0
}

// partitionOf returns the message's partition.
func (q *queue) partitionOf(m *storedMsg) int {
	_, props := messageMetadata(m.summary, m.payload)
	if key, ok := props[partitionKeyProperty].(string); ok && key != "" {
		h := fnv.New32a()
		_, _ = h.Write([]byte(key))
		return int(h.Sum32() % uint32(q.cfg.PartitionCount))
	}
	p := q.rr % q.cfg.PartitionCount
	q.rr++
	return p
}

// dispatchPartitioned delivers ready messages to the owners of their
// partitions. A message whose owner has no room, or whose partition has no
// owner until the next rebalance, waits; messages of other partitions may
// pass it.
func (b *Broker) dispatchPartitioned(q *queue) {
	now := time.Now()
	b.checkOwners(q, now)
	// held[p]: another flow than p's owner still holds messages of p.
	var held map[int]bool
	if !q.handoffUntil.IsZero() {
		if now.After(q.handoffUntil) {
			q.handoffUntil = time.Time{}
			b.revokeMoved(q)
		} else {
			held = map[int]bool{}
			for _, f := range q.flows {
				for _, qm := range f.unsettled {
					if qm.partition >= 0 && qm.partition < len(q.partOwners) && q.partOwners[qm.partition] != f {
						held[qm.partition] = true
					}
				}
			}
			if len(held) == 0 {
				q.handoffUntil = time.Time{}
			}
		}
	}
	for qm := q.ready.Front(); qm != nil; {
		next := qm.next
		if qm.partition < 0 {
			qm.partition = q.partitionOf(qm.m)
		}
		if f := q.partOwners[qm.partition]; f != nil && !held[qm.partition] && f.hasRoom() {
			b.deliver(f, qm)
		}
		qm = next
	}
}

// revokeMoved takes back, once the handoff time is up, the messages of
// moved partitions that their old owners still hold: as on PubSub+, they
// go to the new owner flagged redelivered, ahead of the partition's later
// messages, and the old owner's late settlement of them is ignored.
func (b *Broker) revokeMoved(q *queue) {
	for _, f := range q.flows {
		for _, id := range slices.Sorted(maps.Keys(f.unsettled)) {
			qm := f.unsettled[id]
			if qm.partition >= 0 && qm.partition < len(q.partOwners) && q.partOwners[qm.partition] != f {
				b.redeliver(q, qm, "partition handed off")
			}
		}
	}
}

// partitionHandoffMax bounds how long a moved partition waits for its old
// owner to settle what it holds (PubSub+'s partitionRebalanceMaxHandoffTime
// default).
const partitionHandoffMax = 3 * time.Second

// checkOwners forgets partition owners that are no longer active and
// rebalances: at once when the queue has no rebalance delay, otherwise once
// the delay has passed since the imbalance was first seen (the janitor
// calls dispatch then).
func (b *Broker) checkOwners(q *queue, now time.Time) {
	n := q.cfg.PartitionCount
	if len(q.partOwners) != n {
		q.partOwners = append(q.partOwners[:0:0], q.partOwners[:min(n, len(q.partOwners))]...)
		q.partOwners = append(q.partOwners, make([]*flow, n-len(q.partOwners))...)
	}
	var active []*flow
	for _, f := range q.flows {
		if f.active && f.c != nil {
			active = append(active, f)
		}
	}
	counts := map[*flow]int{}
	owned := 0
	for p, f := range q.partOwners {
		if f != nil && !slices.Contains(active, f) {
			q.partOwners[p], f = nil, nil
		}
		if f != nil {
			counts[f]++
			owned++
		}
	}
	balanced := owned == n
	for _, f := range active {
		balanced = balanced && counts[f] >= n/len(active) && counts[f] <= (n+len(active)-1)/len(active)
	}
	delay := time.Duration(q.cfg.PartitionRebalanceDelay) * time.Second
	switch {
	case balanced || len(active) == 0:
		q.rebalanceAt = time.Time{}
		return
	case delay > 0 && q.rebalanceAt.IsZero():
		q.rebalanceAt = now.Add(delay)
		return
	case delay > 0 && now.Before(q.rebalanceAt):
		return
	}
	q.rebalanceAt = time.Time{}
	q.handoffUntil = now.Add(partitionHandoffMax)
	// Each active flow, in bind order, gets n/k partitions, the first n%k
	// one more; it keeps as many of its own as it may, the rest move.
	target := map[*flow]int{}
	for i, f := range active {
		target[f] = n / len(active)
		if i < n%len(active) {
			target[f]++
		}
	}
	kept := map[*flow]int{}
	for p, f := range q.partOwners {
		if f != nil && kept[f] < target[f] {
			kept[f]++
		} else {
			q.partOwners[p] = nil
		}
	}
	for p, f := range q.partOwners {
		if f != nil {
			continue
		}
		for _, a := range active {
			if kept[a] < target[a] {
				q.partOwners[p] = a
				kept[a]++
				break
			}
		}
	}
	b.log.Info("partitions rebalanced", "queue", q.cfg.Name, "partitions", n, "consumers", len(active))
}

// rebalanceDue reports whether q waits for a rebalance whose delay has
// passed.
func (q *queue) rebalanceDue(now time.Time) bool {
	return (!q.rebalanceAt.IsZero() && !now.Before(q.rebalanceAt)) || (!q.handoffUntil.IsZero() && now.After(q.handoffUntil))
}

// repartition re-applies the active slots after the partition count or
// the set of flows changed, telling flows that lose theirs.
func (b *Broker) repartition(q *queue) {
	for i, f := range q.flows {
		if f.active && !q.activeSlot(i) {
			f.active = false
			if f.wantUpdates && f.c != nil {
				f.c.sendFlowUpdate(f)
			}
		}
	}
	b.updateActive(q)
}

// ---- egress off and on ----
//
// A real broker keeps the flows of a queue whose egress is switched off bound
// but makes them inactive, and tells clients that asked for flow-change
// updates (the Go client's activation/passivation listener) both ways.

// passivateFlows makes q's active flows inactive and tells them so.
func (b *Broker) passivateFlows(q *queue) {
	for _, f := range q.flows {
		if !f.active {
			continue
		}
		f.active = false
		if f.wantUpdates && f.c != nil {
			b.log.Info("consumer flow became inactive", "queue", q.cfg.Name, "flow", f.id)
			f.c.sendFlowUpdate(f)
		}
	}
}

// sendFlowUpdate tells the client whether its consumer flow f is now the
// active one (AssuredCtrl FlowUpdate), for flows whose client asked for
// flow-change updates.
func (c *conn) sendFlowUpdate(f *flow) {
	c.sendAdCtrl(nil, 200, "OK", adFlowUpdate, []adParam{
		{Type: apFlowID, Value: u32(f.id)},
		{Type: apActiveFlow, Value: u8(boolByte(f.active))},
	})
}

// PartitionOwners lists, for each partition of a partitioned queue, the
// client name of the consumer that owns it now, "" for a partition waiting
// for a rebalance.
func (b *Broker) PartitionOwners(vpn, name string) ([]string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	q, err := b.queueLocked(vpn, name)
	if err != nil {
		return nil, err
	}
	if !q.partitioned() {
		return nil, fmt.Errorf("queue %q in VPN %q is not partitioned", name, vpn)
	}
	b.checkOwners(q, time.Now())
	out := make([]string, len(q.partOwners))
	for p, f := range q.partOwners {
		if f != nil && f.c != nil {
			out[p] = f.c.clientName
		}
	}
	return out, nil
}
