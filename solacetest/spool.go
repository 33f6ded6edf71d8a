package solacetest

// This file is the spool layer: queues, the messages they hold, consumer
// flows with their windows, settlement (accepted / failed / released /
// rejected), redelivery, dead-message queues and TTL expiry. Every function
// here runs with Broker.mu held.

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/connect-solace/connect-solace/internal/selector"
)

// tempQueueGrace is how long a temporary queue outlives the session that owns
// it, so that a reconnecting client can re-bind and get its messages back.
const tempQueueGrace = 60 * time.Second

// defaultMaxUnacked is the per-flow limit of delivered, unsettled messages
// (SEMP's maxDeliveredUnackedMsgsPerFlow default).
const defaultMaxUnacked = 10000

// storedMsg is the immutable content of a spooled message, shared by every
// queue it was spooled to and by the replay log.
type storedMsg struct {
	id      uint64 // message part of the replication group message id
	pid     uint64 // its record in the data directory (persist.go); 0 before
	at      time.Time
	queue   string // the target of a #P2P/QUE/ publish; "" for topics
	topic   string
	flags   byte   // SMF byte-0 flags of the publish (DMQE and friends)
	byte2   byte   // SMF byte 2 of the publish
	kept    []byte // encoded header parameters forwarded to consumers
	ext     []extParam
	payload []byte
	summary []byte // P22, to find the application payload
	ttl     time.Duration
	size    int
	// for selectors
	priority   byte
	persistent bool
}

func (m *storedMsg) dmqEligible() bool { return m.flags&flagDMQE != 0 }

func (m *storedMsg) appPayload() []byte { return applicationPayload(m.summary, m.payload) }

// qmsg is a message's state in one queue.
type qmsg struct {
	m          *storedMsg
	seq        uint64 // spool order
	expiry     time.Time
	deliveries int // how often it was sent to a consumer
	partition  int // partitioned queues: the message's partition, -1 until known
	flow       *flow
	deliveryID uint64
	// next and prev link the message into queue.ready while it is not
	// delivered (inReady).
	next, prev *qmsg
	inReady    bool
}

// readyList is a queue's list of undelivered messages, in spool order,
// linked through the messages themselves: a container/list would cost an
// element allocation per spooled message. Its zero value is empty.
type readyList struct {
	head, tail *qmsg
	n          int
}

// Front is the first message, or nil.
func (l *readyList) Front() *qmsg { return l.head }

// Len is the number of messages.
func (l *readyList) Len() int { return l.n }

// PushBack appends qm, which must not be in a list.
func (l *readyList) PushBack(qm *qmsg) { l.InsertBefore(qm, nil) }

// InsertBefore inserts qm, which must not be in a list, before mark, or at
// the back when mark is nil.
func (l *readyList) InsertBefore(qm, mark *qmsg) {
	prev := l.tail
	if mark != nil {
		prev = mark.prev
	}
	qm.prev, qm.next, qm.inReady = prev, mark, true
	if prev != nil {
		prev.next = qm
	} else {
		l.head = qm
	}
	if mark != nil {
		mark.prev = qm
	} else {
		l.tail = qm
	}
	l.n++
}

// Remove unlinks qm, which must be in l.
func (l *readyList) Remove(qm *qmsg) {
	if qm.prev != nil {
		qm.prev.next = qm.next
	} else {
		l.head = qm.next
	}
	if qm.next != nil {
		qm.next.prev = qm.prev
	} else {
		l.tail = qm.prev
	}
	qm.prev, qm.next, qm.inReady = nil, nil, false
	l.n--
}

// Init empties l, unlinking every message.
func (l *readyList) Init() {
	for qm := l.head; qm != nil; {
		next := qm.next
		qm.prev, qm.next, qm.inReady = nil, nil, false
		qm = next
	}
	*l = readyList{}
}

// queue is a durable or temporary queue.
type queue struct {
	vpn   *vpnState
	cfg   QueueConfig
	ready readyList // messages not currently delivered, in spool order
	count int       // messages held, ready or delivered
	// expiring counts the messages held (ready or delivered) that have an
	// expiry, so that the janitor skips queues without any: walking every
	// ready message each tick cost a full queue's worth of work per tick
	// once a queue held a large backlog without TTLs.
	expiring     int
	bytes        int64
	flows        []*flow // bound consumers in bind order; flows[0] is the active one of an exclusive queue
	rr           int     // round-robin position for non-exclusive queues
	redelivered  int
	deadLettered int    // messages dead-lettered: moved to the DMQ or discarded
	tempOwner    string // client name that created a temporary queue
	// partOwners is each partition's consumer flow (nil: none until the
	// next rebalance), rebalanceAt when that is due (partition.go).
	partOwners   []*flow
	rebalanceAt  time.Time
	handoffUntil time.Time       // moved partitions wait for their old owners until then
	clientSubs   map[string]bool // subscriptions a client added over SMP (it may remove only those)
	orphanedAt   time.Time       // when a temporary queue's owner went away
}

func (q *queue) config() QueueConfig {
	c := q.cfg
	c.Subscriptions = slices.Clone(c.Subscriptions)
	return c
}

func (q *queue) stats() QueueStats {
	s := QueueStats{SpooledMsgCount: q.count, SpooledBytes: q.bytes, Redelivered: q.redelivered, DeadLettered: q.deadLettered,
		Consumers: len(q.flows)}
	for _, f := range q.flows {
		s.Unacked += len(f.unsettled)
	}
	return s
}

// allMessages returns ready and delivered messages in spool order.
func (q *queue) allMessages() []*qmsg {
	var out []*qmsg
	for qm := q.ready.Front(); qm != nil; qm = qm.next {
		out = append(out, qm)
	}
	for _, f := range q.flows {
		for _, m := range f.unsettled {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b *qmsg) int { return cmp.Compare(a.seq, b.seq) })
	return out
}

func (q *queue) matches(topic string) bool {
	return slices.ContainsFunc(q.cfg.Subscriptions, func(s string) bool { return topicMatches(s, topic) })
}

func (q *queue) overQuota(extra int) bool {
	return q.cfg.MaxMsgSpoolUsage > 0 && q.bytes+int64(extra) > q.cfg.MaxMsgSpoolUsage*1024*1024
}

// flow is a consumer flow bound to a queue.
type flow struct {
	sel         *selector.Selector // nil: every message
	id          uint32
	q           *queue
	c           *conn
	window      int      // deliveries the client accepts beyond its last transport ack
	sent        []uint64 // delivery ids not yet transport-acked, in order
	unsettled   map[uint64]*qmsg
	prevID      uint64 // the last delivery id sent on this flow (P18 of the next)
	wantUpdates bool
	active      bool
	maxUnacked  int
}

func (f *flow) hasRoom() bool {
	return f.c != nil && (len(f.sent) < f.window || f.c.b.faults.ignoreWindows) && len(f.unsettled) < f.maxUnacked
}

// spool adds a message to q and schedules delivery.
func (b *Broker) spool(q *queue, m *storedMsg, deliveries int) {
	b.nextSpool++
	qm := &qmsg{m: m, seq: b.nextSpool, deliveries: deliveries, partition: -1}
	if q.cfg.RespectTTL && m.ttl > 0 {
		qm.expiry = time.Now().Add(m.ttl)
		q.expiring++
	}
	q.ready.PushBack(qm)
	q.count++
	q.bytes += int64(m.size)
	b.st.spooled(q, qm)
	b.dispatch(q)
}

// remove drops a message from q entirely.
func (q *queue) remove(qm *qmsg) {
	q.vpn.st.removed(q, qm)
	if qm.inReady {
		q.ready.Remove(qm)
	}
	if qm.flow != nil {
		delete(qm.flow.unsettled, qm.deliveryID)
		qm.flow = nil
	}
	q.count--
	q.bytes -= int64(qm.m.size)
	if !qm.expiry.IsZero() {
		q.expiring--
	}
}

// requeue makes a delivered message available again, in spool order.
func (q *queue) requeue(qm *qmsg) {
	if qm.flow != nil {
		delete(qm.flow.unsettled, qm.deliveryID)
		qm.flow = nil
	}
	for e := q.ready.Front(); e != nil; e = e.next {
		if e.seq > qm.seq {
			q.ready.InsertBefore(qm, e)
			return
		}
	}
	q.ready.PushBack(qm)
}

// redeliver puts an unsettled message back for another delivery after a
// FAILED settlement or the loss of its flow. A message that has already been
// redelivered MaxRedeliveryCount times goes to the DMQ instead.
func (b *Broker) redeliver(q *queue, qm *qmsg, why string) {
	if max := q.cfg.MaxRedeliveryCount; max > 0 && qm.deliveries-1 >= max {
		b.deadLetter(q, qm, "max redelivery count exceeded")
		return
	}
	b.log.Debug("message requeued for redelivery", "queue", q.cfg.Name, "reason", why, "deliveries", qm.deliveries)
	q.requeue(qm)
}

// deadLetter removes a message from q and moves it to q's dead-message queue
// when one is configured, exists and the message is DMQ-eligible; otherwise
// the message is discarded. The copy in the DMQ has no TTL, so it cannot
// expire again.
func (b *Broker) deadLetter(q *queue, qm *qmsg, why string) {
	q.remove(qm)
	q.deadLettered++
	dmqName := q.cfg.DeadMsgQueue
	dmq, ok := q.vpn.queues[dmqName]
	if dmqName == "" || !ok || dmq == q || !qm.m.dmqEligible() {
		b.log.Info("message discarded", "queue", q.cfg.Name, "reason", why)
		return
	}
	b.log.Info("message moved to dead-message queue", "queue", q.cfg.Name, "dmq", dmqName, "reason", why)
	m := *qm.m
	m.ttl = 0
	b.spool(dmq, &m, 0)
}

// dispatch sends ready messages to consumers with room in their windows.
// Exclusive queues deliver only to their active (first-bound) flow;
// non-exclusive queues round-robin over all flows.
func (b *Broker) dispatch(q *queue) {
	if b.faults.paused || !q.cfg.EgressEnabled || len(q.flows) == 0 {
		return
	}
	if q.partitioned() {
		b.dispatchPartitioned(q)
		return
	}
	now := time.Now()
	if !q.hasSelectors() {
		for q.ready.Len() > 0 {
			f := b.nextFlowWithRoom(q, nil)
			if f == nil {
				return
			}
			qm := q.ready.Front()
			if !qm.expiry.IsZero() && !now.Before(qm.expiry) {
				b.deadLetter(q, qm, "TTL expired")
				continue
			}
			b.deliver(f, qm)
		}
		return
	}
	// With selectors a message goes to a flow whose selector it matches;
	// messages nobody selects stay queued, in order.
	for qm := q.ready.Front(); qm != nil; {
		next := qm.next
		if !q.anyRoom() {
			return
		}
		if !qm.expiry.IsZero() && !now.Before(qm.expiry) {
			b.deadLetter(q, qm, "TTL expired")
		} else if f := b.nextFlowWithRoom(q, qm.m); f != nil {
			b.deliver(f, qm)
		}
		qm = next
	}
}

func (q *queue) hasSelectors() bool {
	return slices.ContainsFunc(q.flows, func(f *flow) bool { return f.sel != nil })
}

func (q *queue) anyRoom() bool {
	return slices.ContainsFunc(q.flows, func(f *flow) bool { return f.active && f.hasRoom() })
}

// nextFlowWithRoom picks the flow for the next message: the active flow of an
// exclusive queue, or the next flow in round-robin order of a non-exclusive
// one. With m set, only flows whose selector matches m qualify.
func (b *Broker) nextFlowWithRoom(q *queue, m *storedMsg) *flow {
	if q.cfg.AccessType != AccessNonExclusive {
		if f := q.flows[0]; f.active && f.hasRoom() && (m == nil || selects(f.sel, m)) {
			return f
		}
		return nil
	}
	for i := range q.flows {
		f := q.flows[(q.rr+i)%len(q.flows)]
		if f.hasRoom() && (m == nil || selects(f.sel, m)) {
			q.rr = (q.rr + i + 1) % len(q.flows)
			return f
		}
	}
	return nil
}

// deliver sends one message on a flow. Every send, redeliveries included,
// gets a new message id (the client drops a reused id as a duplicate).
func (b *Broker) deliver(f *flow, qm *qmsg) {
	q := f.q
	q.ready.Remove(qm)
	b.nextMsgID++
	id := b.nextMsgID
	redelivered := qm.deliveries > 0
	if redelivered {
		q.redelivered++
	}
	qm.deliveries++
	b.st.delivered(q, qm)
	qm.flow, qm.deliveryID = f, id
	f.unsettled[id] = qm
	f.sent = append(f.sent, id)

	m := qm.m
	params := []param{
		{Type: pADMsgID, Value: u64(id)},
		{Type: pADPrevMsgID, Value: u64(f.prevID)},
		{Type: pADFlowID, Value: u32(f.id)},
	}
	if redelivered {
		params = append(params, param{Type: pADRedelivered})
	}
	// The client builds the replication group message id from the spooler
	// unique id of the bind response (p54) and the message part of P31 0x29,
	// falling back to P17, which changes per delivery; 0x29 is storedMsg.id,
	// so the id is stable across redeliveries and the same in every queue. It reports a delivery count
	// only when the bind response's endpoint behaviour (p34) enables it, as
	// the P31 0x2e redelivery count plus one.
	ext := slices.Clone(m.ext)
	ext = append(ext,
		extParam{Type: extSpoolerUnique, Value: u64(b.spoolerID)},
		extParam{Type: extAckMessageID, Value: u64(m.id)},
		extParam{Type: extRedeliverCount, Value: u32(uint32(qm.deliveries - 1))},
	)
	params = append(params, param{Type: pExtendedStream, Value: encodeExtStream(ext)})
	f.prevID = id
	fr := &frame{Flags: m.flags | flagADF, UH: 2, Proto: protoTrMsg, Byte2: m.byte2, TTL: 255,
		rawParams: m.kept, Params: params, Payload: m.payload}
	f.c.sendData(fr.encode(nil))
}

// settle applies one application-ack range of flow f.
func (b *Broker) settle(f *flow, a appAck) {
	q := f.q
	var ids []uint64
	for id := range f.unsettled {
		if id >= a.Min && id <= a.Max {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		qm := f.unsettled[id]
		switch a.Outcome {
		case outcomeAccepted:
			q.remove(qm)
		case outcomeFailed:
			b.redeliver(q, qm, "settled FAILED")
		case outcomeReleased:
			// Released: not processed; put back without counting it.
			qm.deliveries--
			b.st.delivered(q, qm)
			q.requeue(qm)
		case outcomeRejected:
			b.deadLetter(q, qm, "settled REJECTED")
		default:
			b.log.Warn("unknown settlement outcome; treating as failed", "outcome", a.Outcome)
			b.redeliver(q, qm, "unknown outcome")
		}
	}
}

// transportAck frees window slots up to and including id.
func (f *flow) transportAck(id uint64) {
	i := 0
	for i < len(f.sent) && f.sent[i] <= id {
		i++
	}
	f.sent = f.sent[i:]
}

// unbindFlow removes f from its queue and requeues what it had not settled,
// as redeliveries.
func (b *Broker) unbindFlow(f *flow, why string) {
	q := f.q
	if i := slices.Index(q.flows, f); i >= 0 {
		q.flows = slices.Delete(q.flows, i, i+1)
	}
	for _, id := range slices.Sorted(maps.Keys(f.unsettled)) {
		b.redeliver(q, f.unsettled[id], why)
	}
	f.c = nil
	b.updateActive(q)
	b.dispatch(q)
}

// updateActive makes the first-bound flow of an exclusive queue the active
// one and tells it so when it asked for flow-change updates.
func (b *Broker) updateActive(q *queue) {
	if !q.cfg.EgressEnabled {
		return // flows stay inactive until egress is back (partition.go)
	}
	for i, f := range q.flows {
		if q.activeSlot(i) && !f.active {
			f.active = true
			if f.wantUpdates && f.c != nil {
				b.log.Info("consumer flow became active", "queue", q.cfg.Name, "flow", f.id)
				f.c.sendFlowUpdate(f)
			}
		}
	}
}

func (b *Broker) deleteQueueLocked(q *queue) {
	b.st.purged(q)
	for _, f := range slices.Clone(q.flows) {
		f.unsettled = map[uint64]*qmsg{}
		if f.c != nil {
			delete(f.c.flows, f.id)
			// The broker unbinds the consumers of a deleted queue; the
			// client reports the flow down and terminates the receiver.
			f.c.sendAdCtrl(nil, 400, "Unknown Queue", adUnbind, []adParam{{Type: apFlowID, Value: u32(f.id)}})
		}
		f.c = nil
	}
	q.flows = nil
	q.ready.Init()
	q.count, q.bytes, q.expiring = 0, 0, 0
	delete(q.vpn.queues, q.cfg.Name)
	b.log.Info("queue deleted", "vpn", q.vpn.name, "queue", q.cfg.Name)
}

// expireAndReap expires ready messages past their TTL and deletes temporary
// queues whose owner has been gone for tempQueueGrace.
func (b *Broker) expireAndReap(now time.Time) {
	for _, v := range b.vpns {
		for _, q := range v.queues {
			if !q.orphanedAt.IsZero() && now.Sub(q.orphanedAt) > tempQueueGrace {
				b.deleteQueueLocked(q)
				continue
			}
			if q.rebalanceDue(now) {
				b.dispatch(q)
			}
			if q.expiring == 0 {
				continue
			}
			var expired []*qmsg
			for qm := q.ready.Front(); qm != nil; qm = qm.next {
				if !qm.expiry.IsZero() && !now.Before(qm.expiry) {
					expired = append(expired, qm)
				}
			}
			for _, qm := range expired {
				b.deadLetter(q, qm, "TTL expired")
			}
		}
	}
}

// keptParams encodes the publisher's header parameters that travel on to
// consumers: everything except the publisher's own flow bookkeeping (P1, P17,
// P18, P19, P23, P25), responses, lightweight parameters and the
// assured-delivery entries of the extended stream, which the broker adds
// afresh per delivery.
func keptParams(f *frame) (kept []byte, ext []extParam) {
	kept = make([]byte, 0, len(f.rawBytes)-len(f.Payload)) // at most the header
	for _, p := range f.Params {
		if p.Light {
			continue
		}
		switch p.Type {
		case pPublisherID, pADMsgID, pADPrevMsgID, pADRedelivered, pADFlowID, pADFlowRedeliv, pResponse:
			continue
		case pExtendedStream:
			es, err := decodeExtStream(p.Value)
			if err != nil {
				continue
			}
			for _, e := range es {
				if e.Type < 0x29 || e.Type > 0x33 { // not an assured-delivery entry
					ext = append(ext, e)
				}
			}
			continue
		}
		kept = appendParam(kept, p)
	}
	return kept, ext
}

// messageTTL reads P28 (milliseconds).
func messageTTL(f *frame) time.Duration {
	v, ok := f.param(pADTTL)
	if !ok || len(v) == 0 || len(v) > 8 {
		return 0
	}
	return time.Duration(beUint(v)) * time.Millisecond
}

// envFor builds the identifier lookup for a stored message: JMS header
// names map to the message's header fields, anything else to a user
// property.
func envFor(m *storedMsg) selector.Env {
	headers, props := messageMetadata(m.summary, m.payload)
	return func(name string) any {
		switch name {
		case "JMSCorrelationID":
			return headers["ci"]
		case "JMSMessageID":
			return headers["mi"]
		case "JMSType":
			return headers["mt"]
		case "JMSPriority":
			return int64(m.priority)
		case "JMSDeliveryMode":
			if m.persistent {
				return "PERSISTENT"
			}
			return "NON_PERSISTENT"
		}
		return props[name]
	}
}

// selects reports whether sel selects m; a nil selector selects every
// message.
func selects(sel *selector.Selector, m *storedMsg) bool {
	return sel == nil || sel.Matches(envFor(m))
}
