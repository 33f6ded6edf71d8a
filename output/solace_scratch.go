package output

// This file is the solace output's per-group working memory (see
// solace_writer.go), kept across groups so that a group costs no
// allocations of its own.

import (
	"github.com/connect-solace/connect-solace/internal/freelist"
	"github.com/connect-solace/connect-solace/internal/session"
)

// soScratch is the per-group working memory of WriteBatch, reused across
// groups so that a group costs no allocations of its own.
type soScratch struct {
	vals    []session.Outbound
	outs    []*session.Outbound
	owner   []soOwner
	results []session.Result
	failsBy [][]soFailure
	countBy []soCount
}

// fails returns n empty failure lists, one per call of the group.
func (sc *soScratch) fails(n int) [][]soFailure {
	if cap(sc.failsBy) < n {
		sc.failsBy = make([][]soFailure, n)
	}
	sc.failsBy = sc.failsBy[:n]
	return sc.failsBy
}

// counts returns n zero counts, one per call of the group.
func (sc *soScratch) counts(n int) []soCount {
	if cap(sc.countBy) < n {
		sc.countBy = make([]soCount, n)
	}
	sc.countBy = sc.countBy[:n]
	clear(sc.countBy)
	return sc.countBy
}

// soScratches survives garbage collections, which emptied a sync.Pool of
// part of the max_in_flight writers' scratch space each time.
var soScratches freelist.List[soScratch]

// soScratchKeep is the largest group, in messages, whose scratch space goes
// back to soScratches. The list keeps what it holds for good: one batch of
// a batching policy by period or bytes (which bounds no count) would pin
// some 270 bytes per message for each of the max_in_flight writers long
// after. A larger group allocates its own, a small cost beside publishing
// that many messages.
const soScratchKeep = 1024

func soGetScratch(n int) *soScratch {
	sc := soScratches.Get()
	if cap(sc.vals) < n {
		sc.vals = make([]session.Outbound, n)
		sc.outs = make([]*session.Outbound, 0, n)
		sc.owner = make([]soOwner, 0, n)
	}
	sc.vals = sc.vals[:n]
	return sc
}

func soPutScratch(sc *soScratch) {
	if cap(sc.vals) > soScratchKeep || cap(sc.results) > soScratchKeep || cap(sc.failsBy) > soScratchKeep {
		return // for the collector
	}
	clear(sc.vals) // drop payload and property references
	clear(sc.outs[:cap(sc.outs)])
	clear(sc.results) // drop error references
	clear(sc.failsBy) // drop failure lists (rare: they are not reused)
	sc.outs, sc.owner, sc.results, sc.failsBy = sc.outs[:0], sc.owner[:0], sc.results[:0], sc.failsBy[:0]
	soScratches.Put(sc)
}
