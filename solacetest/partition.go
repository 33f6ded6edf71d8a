package solacetest

// This file is partitioned queues: a non-exclusive queue with
// PartitionCount > 0. Each message goes to a partition (by a hash of its
// partition key, the JMSXGroupID user property, or in turn when it has none)
// and each partition to one consumer: the first PartitionCount bound flows
// are active and own partitions p, p+n, ... in bind order; further flows
// are inactive (told so when they asked for flow updates) until a partition
// is free. Messages of one key therefore reach one consumer, in order.
// It is also what consumers see when a queue's egress is switched off and
// on: flows stay bound but become inactive (passivateFlows), told both ways
// when they asked for flow-change updates.

import (
	"hash/fnv"
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
// partitions. A message whose owner has no room waits; messages of other
// partitions may pass it.
func (b *Broker) dispatchPartitioned(q *queue) {
	var owners []*flow
	for _, f := range q.flows {
		if f.active {
			owners = append(owners, f)
		}
	}
	if len(owners) == 0 {
		return
	}
	for qm := q.ready.Front(); qm != nil; {
		next := qm.next
		if qm.partition < 0 {
			qm.partition = q.partitionOf(qm.m)
		}
		if f := owners[qm.partition%len(owners)]; f.hasRoom() {
			b.deliver(f, qm)
		}
		qm = next
	}
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
