package jms

// CreditWindow decides when a receiver link grants credit and how much. It
// is pure bookkeeping, not safe for concurrent use (the Receiver holds its
// lock around it), so the policy is tested without a broker; the benchmark's
// raw go-amqp receiver uses it too, so both sides ask for credit alike.
//
// Two rules:
//
//   - Credit is renewed as messages are handed to the consumer, not as they
//     are settled: the window is what the broker may send ahead of the
//     consumer, as JMS prefetch is, so the next messages travel while the
//     pipeline still works on (and acknowledges) the last ones. Messages
//     handed out but not yet settled are capped at prefetch as well, so at
//     most 2×prefetch are unsettled: with a slow pipeline credit comes back
//     with the settlements.
//   - Against RabbitMQ 3.x credit is granted only when every credit granted
//     before has been used (a flow frame never overlaps deliveries in
//     flight). RabbitMQ 3.10 counts credit at the queue process, which does
//     not see deliveries still on their way through the session: a flow
//     frame that arrives while some are in flight makes it send that many
//     more than the window allows. go-amqp then takes its link credit below
//     zero, and a later grant of exactly that many adds up to 0 and is
//     dropped without a flow frame, so the link starves for good. Granting
//     half windows while credit was outstanding did that at prefetch 2, 4
//     and 8 (scripts/jms_vs_amqp1_input.py, TestIntegrationJMSInputBrokerRestart,
//     TestIntegrationJMSInputSmallPrefetch); with no delivery in flight a
//     flow frame is exact. The cost is one round trip per window in which
//     the broker has no credit, which at prefetch 1 is what every scheme
//     pays and at large prefetch is spread over the window. Brokers that
//     count credit as AMQP defines it (overlap) get the window renewed once
//     half of it is used, so deliveries never pause.
type CreditWindow struct {
	prefetch uint64
	overlap  bool   // flows may overlap deliveries in flight
	granted  uint64 // credit granted since attach, including the first
	received uint64 // messages handed to the consumer
	settled  uint64 // messages settled, any outcome
}

// NewCreditWindow starts the bookkeeping of a link attached with prefetch
// credit. With overlap, credit is renewed once half the window is used;
// without, only once all of it is (for RabbitMQ 3.x).
func NewCreditWindow(prefetch int, overlap bool) CreditWindow {
	return CreditWindow{prefetch: uint64(prefetch), overlap: overlap, granted: uint64(prefetch)}
}

// limit is the delivery count up to which the broker may send now.
func (w *CreditWindow) limit() uint64 {
	base := w.received
	if capped := w.settled + w.prefetch; capped < base {
		base = capped
	}
	return base + w.prefetch
}

// grant returns the credit to issue now (0 for none) and counts it granted.
func (w *CreditWindow) grant() uint32 {
	if w.received < w.granted && (!w.overlap || w.granted-w.received > w.prefetch/2) {
		// Credit outstanding, so deliveries may be in flight (or, with
		// overlap, more than half the window is still to come).
		return 0
	}
	lim := w.limit()
	if lim <= w.granted || lim <= w.received {
		// Nothing to add, or a broker that sent past the window already
		// has what the limit allows: go-amqp would turn a grant into a
		// flow of link credit 0 (or below) and drop it.
		return 0
	}
	n := lim - w.granted
	w.granted = lim
	return uint32(n)
}

// OnReceive counts a message handed to the consumer and returns the credit
// to issue.
func (w *CreditWindow) OnReceive() uint32 {
	w.received++
	return w.grant()
}

// OnSettle counts a settlement and returns the credit to issue.
func (w *CreditWindow) OnSettle() uint32 {
	w.settled++
	return w.grant()
}
