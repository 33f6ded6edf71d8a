package jms

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/connect-solace/connect-solace/internal/amqpwire"
)

// Outgoing is one message for Sender.Send: its JMS view, with destinations
// given by name, because how a name becomes an address depends on the broker
// the connection reached.
type Outgoing struct {
	Message
	DestKind    DestKind
	DestName    string
	ReplyToKind DestKind
	ReplyToName string // "" for no JMSReplyTo
}

// Result is the fate of one message of a batch.
type Result struct {
	// Err is nil when the broker accepted the message.
	Err error
	// Latency is the time from transfer to settlement of an accepted message.
	Latency time.Duration
}

// Work is the messages and results of one Send, pooled (a WriteBatch then
// allocates neither): Msgs[i] points at a zeroed Outgoing to fill, or is set
// to nil for a message not to send. Release it once nothing refers to them.
type Work struct {
	Msgs []*Outgoing
	Res  []Result
	outs []Outgoing
}

var works = sync.Pool{New: func() any { return new(Work) }}

// GetWork returns a Work for n messages.
func GetWork(n int) *Work {
	w := works.Get().(*Work)
	if cap(w.outs) < n {
		w.outs, w.Msgs, w.Res = make([]Outgoing, n), make([]*Outgoing, n), make([]Result, n)
	}
	w.outs, w.Msgs, w.Res = w.outs[:n], w.Msgs[:n], w.Res[:n]
	for i := range w.outs {
		w.Msgs[i] = &w.outs[i]
	}
	return w
}

// Release returns w to the pool, keeping no message reachable.
func (w *Work) Release() {
	clear(w.outs)
	clear(w.Res)
	if cap(w.outs) <= 1024 {
		works.Put(w)
	}
}

// SenderConfig says how a Sender sends.
type SenderConfig struct {
	// SendTimeout bounds how long deliveries may be outstanding without any
	// settlement arriving; then the connection is closed as dead. 0 disables.
	SendTimeout time.Duration
	// Ordered resends, after a link or session failure, every message from the
	// first unsettled one on, in batch order, so a retry never reorders (at the
	// cost of duplicates of messages already accepted after it).
	Ordered bool
	// Retry paces resends after a link or session failure on a connection
	// that is still up, until its MaxElapsedTime; each Send uses a fresh copy.
	// Nil means no resend: those messages fail. Connection failures are never
	// retried here: Send returns ErrConnectionLost and the caller reconnects.
	Retry *backoff.ExponentialBackOff
	// OnRetry, when set, is told about each resend.
	OnRetry func(messages int, wait time.Duration, cause error)
}

// ErrConnectionLost says the connection failed during Send, so the fate of
// some messages is unknown and the Sender is unusable.
var ErrConnectionLost = errors.New("connection to the broker lost")

// Sender sends batches over one connection: per destination it transfers a
// batch's messages back to back on one link without waiting in between, then
// collects the settlements, and returns one Result per message. Many batches
// may be sent concurrently.
type Sender struct {
	conn *Conn
	addr Addresser
	cfg  SenderConfig

	// Watchdog state: deliveries outstanding and settlements seen.
	outstanding atomic.Int64
	settled     atomic.Uint64
	timedOut    atomic.Bool
	stop        chan struct{}
	stopOnce    sync.Once
}

// NewSender sends over conn, addressing with addr.
func NewSender(conn *Conn, addr Addresser, cfg SenderConfig) *Sender {
	s := &Sender{conn: conn, addr: addr, cfg: cfg, stop: make(chan struct{})}
	if cfg.SendTimeout > 0 {
		go s.watchdog()
	}
	return s
}

// Conn is the connection the Sender sends over.
func (s *Sender) Conn() *Conn { return s.conn }

// Addresser is how the Sender turns names into addresses.
func (s *Sender) Addresser() Addresser { return s.addr }

// Close stops the Sender and closes its connection.
func (s *Sender) Close() error {
	s.stopOnce.Do(func() { close(s.stop) })
	return s.conn.Close()
}

// watchdog closes the connection when deliveries are outstanding but no
// settlement arrived for SendTimeout: one ticker per connection instead of a
// context timer per send.
func (s *Sender) watchdog() {
	tick := max(s.cfg.SendTimeout/4, 10*time.Millisecond)
	t := time.NewTicker(tick)
	defer t.Stop()
	last, since := s.settled.Load(), time.Now()
	for {
		select {
		case <-s.stop:
			return
		case <-s.conn.Done():
			return
		case now := <-t.C:
			n := s.settled.Load()
			if n != last || s.outstanding.Load() == 0 {
				last, since = n, now
				continue
			}
			if now.Sub(since) >= s.cfg.SendTimeout {
				s.timedOut.Store(true)
				_ = s.conn.Close()
				return
			}
		}
	}
}

// Send sends every msgs[i] that is not nil and whose res[i].Err is not set
// yet, and fills res. A message the broker did not accept fails on its own
// (an *OutcomeError, a *RefusedError or a *MessageError); messages cut off by
// a link or session failure are resent as cfg.Retry allows. When the
// connection failed, the messages whose fate is unknown get that error and
// Send returns it, wrapping ErrConnectionLost. When ctx ends, Send returns
// its error.
func (s *Sender) Send(ctx context.Context, msgs []*Outgoing, res []Result) error {
	sc := scratches.Get().(*scratch)
	defer sc.put()
	pending := sc.pending[:0]
	for i, m := range msgs {
		if m != nil && res[i].Err == nil {
			pending = append(pending, i)
		}
	}
	sc.pending = pending
	var bo *backoff.ExponentialBackOff
	for attempt := 1; len(pending) > 0; attempt++ {
		retry, cause := s.attempt(ctx, sc, msgs, pending, res)
		if len(retry) == 0 {
			return nil
		}
		if s.cfg.Ordered {
			retry = s.fromFirst(pending, retry, res)
		}
		fail := func(err error) {
			for _, i := range retry {
				res[i] = Result{Err: err}
			}
		}
		if err := ctx.Err(); err != nil {
			fail(err)
			return err
		}
		var ce *amqpwire.ConnError
		if s.conn.Lost() || errors.As(cause, &ce) {
			if s.timedOut.Load() {
				cause = fmt.Errorf("no settlement within send_timeout %v: %w", s.cfg.SendTimeout, cause)
			}
			err := fmt.Errorf("%w (%s): %w", ErrConnectionLost, s.conn.URL(), cause)
			fail(err)
			return err
		}
		if bo == nil && s.cfg.Retry != nil {
			b := *s.cfg.Retry
			bo = &b
			bo.Reset()
		}
		wait := backoff.Stop
		if bo != nil {
			wait = bo.NextBackOff()
		}
		if wait == backoff.Stop {
			fail(fmt.Errorf("sending on %s failed after %d attempts: %w", s.conn.URL(), attempt, cause))
			return nil
		}
		if s.cfg.OnRetry != nil {
			s.cfg.OnRetry(len(retry), wait, cause)
		}
		if err := s.sleep(ctx, wait); err != nil {
			fail(err)
			return err
		}
		pending = retry
	}
	return nil
}

// fromFirst widens retry to every pending message from the first one in
// retry on that did not fail on its own, in batch order.
func (s *Sender) fromFirst(pending, retry []int, res []Result) []int {
	first := slices.Min(retry)
	out := retry[:0:0]
	for _, i := range pending {
		if i < first {
			continue
		}
		if slices.Contains(retry, i) || res[i].Err == nil {
			res[i] = Result{}
			out = append(out, i)
		}
	}
	return out
}

func (s *Sender) sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-s.conn.Done():
		return nil // the next attempt reports the lost connection
	}
}

// scratch holds a Send's working memory, pooled so a batch costs no
// allocations for it.
type scratch struct {
	pending  []int
	flights  []inflight
	links    []*SendLink
	runIdx   []int
	arena    []byte   // the run's encoded messages, back to back
	offs     []int    // where each ends in arena
	payloads [][]byte // views of arena
	ds       []amqpwire.Delivery
	batch    *amqpwire.Batch
}

var scratches = sync.Pool{New: func() any { return &scratch{batch: amqpwire.NewBatch()} }}

func (sc *scratch) put() {
	sc.pending = sc.pending[:0]
	if cap(sc.arena) > 1<<20 {
		sc.arena = nil // do not pin one huge batch's memory
	}
	scratches.Put(sc)
}

type inflight struct {
	idx     int
	d       *amqpwire.Delivery
	start   time.Time
	address string
	link    *SendLink
}

// attempt transfers the pending messages, run by run of one destination,
// then waits for their settlements. It fills res for settled and
// permanently failed messages and returns those whose fate a link, session
// or connection failure left unknown, with that failure.
func (s *Sender) attempt(ctx context.Context, sc *scratch, msgs []*Outgoing, pending []int, res []Result) (retry []int, cause error) {
	s.outstanding.Add(int64(len(pending)))
	defer s.outstanding.Add(-int64(len(pending)))

	flights := sc.flights[:0]
	links := sc.links[:0]
	// The deliveries stay where they are while the connection may write
	// to them: sized once for the whole attempt.
	ds := slices.Grow(sc.ds[:0], len(pending))[:len(pending)]
	used := 0
	b := sc.batch
	b.Reset()
	defer func() {
		for _, l := range links {
			s.conn.Release(l)
		}
		clear(links)
		clear(flights)
		clear(ds)
		clear(sc.payloads)
		sc.flights, sc.links, sc.ds = flights[:0], links[:0], ds[:0]
	}()

	for n := 0; n < len(pending); {
		first := msgs[pending[n]]
		end := n + 1
		for end < len(pending) && msgs[pending[end]].DestName == first.DestName && msgs[pending[end]].DestKind == first.DestKind {
			end++
		}
		group, rest := pending[n:end], pending[end:]
		n = end

		dest, err := s.addr.Resolve(first.DestKind, first.DestName)
		if err != nil {
			failAll(res, group, &MessageError{Label: LabelEncoding, Err: err})
			continue
		}
		link, err := s.conn.Sender(ctx, dest)
		if err != nil {
			var refused *RefusedError
			if errors.As(err, &refused) {
				failAll(res, group, err)
				continue
			}
			// Not sent; what is already in flight is still waited for.
			retry = slices.Concat(retry, group, rest)
			cause = err
			break
		}
		links = append(links, link)

		runIdx, arena, offs := sc.runIdx[:0], sc.arena[:0], sc.offs[:0]
		for _, i := range group {
			var err error
			if arena, err = s.encode(arena, msgs[i], dest); err != nil {
				res[i] = Result{Err: err}
				continue
			}
			runIdx = append(runIdx, i)
			offs = append(offs, len(arena))
		}
		payloads := sc.payloads[:0]
		for k, end := range offs {
			from := 0
			if k > 0 {
				from = offs[k-1]
			}
			payloads = append(payloads, arena[from:end:end])
		}
		sc.runIdx, sc.arena, sc.offs, sc.payloads = runIdx, arena, offs, payloads

		run := ds[used : used+len(runIdx)]
		used += len(runIdx)
		start := time.Now()
		sent, err := link.l.Transfer(ctx, payloads, run, b)
		for k := range sent {
			flights = append(flights, inflight{idx: runIdx[k], d: &run[k], start: start, address: dest.Address, link: link})
		}
		if err != nil {
			s.conn.linkFailed(link, err)
			retry = append(retry, runIdx[sent:]...)
			retry = append(retry, rest...)
			cause = err
			break
		}
	}

	if err := b.Wait(ctx); err != nil {
		s.conn.wire.Abandon(ds[:used])
	}
	for k := range flights {
		f := &flights[k]
		d := f.d
		if !d.Finished() { // abandoned: ctx ended
			if cause == nil {
				cause = ctx.Err()
			}
			retry = append(retry, f.idx)
			continue
		}
		if d.Err != nil {
			var we *amqpwire.Error
			if errors.As(d.Err, &we) && we.Condition == amqpwire.CondMessageSizeExceeded && !isLinkLevel(d.Err) {
				res[f.idx] = Result{Err: &MessageError{Label: we.Condition, Err: fmt.Errorf("sending to %s: %w", f.address, d.Err)}}
				continue
			}
			if cause == nil {
				cause = d.Err
			}
			s.conn.linkFailed(f.link, d.Err)
			retry = append(retry, f.idx)
			continue
		}
		s.settled.Add(1)
		if oerr := wireOutcome(d.State, f.address); oerr != nil {
			res[f.idx] = Result{Err: oerr}
			continue
		}
		res[f.idx] = Result{Latency: time.Since(f.start)}
	}
	slices.Sort(retry)
	return retry, cause
}

// isLinkLevel reports whether err is a link, session or connection ending.
func isLinkLevel(err error) bool {
	var (
		le *amqpwire.LinkError
		se *amqpwire.SessionError
		ce *amqpwire.ConnError
	)
	return errors.As(err, &le) || errors.As(err, &se) || errors.As(err, &ce)
}

// encode appends the wire form of o, addressed to dest, to b.
func (s *Sender) encode(b []byte, o *Outgoing, dest Destination) ([]byte, error) {
	m := o.Message
	m.Destination = dest
	m.ReplyTo = nil
	if o.ReplyToName != "" {
		rt, err := s.addr.Resolve(o.ReplyToKind, o.ReplyToName)
		if err != nil {
			return b, &MessageError{Label: LabelEncoding, Err: fmt.Errorf("reply_to: %w", err)}
		}
		m.ReplyTo = &rt
	}
	out, err := AppendEncoded(b, &m)
	if err != nil {
		return b, &MessageError{Label: LabelEncoding, Err: err}
	}
	return out, nil
}

func failAll(res []Result, idx []int, err error) {
	for _, i := range idx {
		res[i] = Result{Err: err}
	}
}

// Failure labels for metrics: bounded names, never error text.
const (
	LabelEncoding   = "encoding"
	LabelConnection = "connection"
	LabelRefused    = "refused"
)

// MessageError is a message that cannot be sent as it is (it cannot be
// encoded, or is too large): sending it again would fail again.
type MessageError struct {
	Label string
	Err   error
}

func (e *MessageError) Error() string { return e.Err.Error() }
func (e *MessageError) Unwrap() error { return e.Err }

// OutcomeError is a delivery the broker settled other than accepted.
type OutcomeError struct {
	Outcome     string // rejected, released or modified
	Condition   string
	Description string
	Address     string
}

func (e *OutcomeError) Error() string {
	s := "broker " + e.Outcome + " the message"
	if e.Condition != "" {
		s += ": " + e.Condition
	}
	if e.Description != "" {
		s += ": " + e.Description
	}
	if e.Address != "" {
		s += fmt.Sprintf(" (destination %q)", e.Address)
	}
	return s
}

// wireOutcome returns nil for an accepted delivery and an *OutcomeError for
// any other outcome.
func wireOutcome(st amqpwire.State, address string) error {
	var e *OutcomeError
	switch st.Kind {
	case amqpwire.StateAccepted:
		return nil
	case amqpwire.StateRejected:
		e = &OutcomeError{Outcome: "rejected"}
		if st.Error != nil {
			e.Condition, e.Description = st.Error.Condition, st.Error.Description
		}
	case amqpwire.StateReleased:
		e = &OutcomeError{Outcome: "released", Description: "the broker did not process it; it may be resent"}
	case amqpwire.StateModified:
		e = &OutcomeError{Outcome: "modified"}
		if st.UndeliverableHere {
			e.Description = "undeliverable here"
		}
	default:
		e = &OutcomeError{Outcome: "settled without an outcome"}
	}
	e.Address = address
	return e
}

// FailureLabel names why a message failed, for a metric label: an AMQP
// error condition, an outcome, "encoding", "refused" or "connection".
func FailureLabel(err error) string {
	var (
		oe *OutcomeError
		re *RefusedError
		me *MessageError
	)
	switch {
	case errors.As(err, &oe):
		// A broker's own condition symbols are reported by outcome
		// instead, so labels stay bounded.
		if amqpwire.StandardCondition(oe.Condition) {
			return oe.Condition
		}
		switch oe.Outcome {
		case "rejected", "released", "modified":
			return oe.Outcome
		}
		return "unknown_outcome"
	case errors.As(err, &re):
		if amqpwire.StandardCondition(re.Err.Condition) {
			return re.Err.Condition
		}
		return LabelRefused
	case errors.As(err, &me):
		if amqpwire.StandardCondition(me.Label) || me.Label == LabelEncoding {
			return me.Label
		}
		return LabelEncoding
	}
	return LabelConnection
}
