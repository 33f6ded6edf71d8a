package output

// This file is the solace output's per-batch working memory, kept across
// batches so that a batch costs no allocations of its own.

import (
	"github.com/connect-solace/connect-solace/internal/freelist"
	"github.com/connect-solace/connect-solace/internal/session"
)

// soScratch is the per-batch working memory of WriteBatch, reused across
// batches so that a batch costs no allocations of its own.
type soScratch struct {
	vals    []session.Outbound
	outs    []*session.Outbound
	idx     []int
	results []session.Result
}

// soScratches survives garbage collections, which emptied a sync.Pool of
// part of the max_in_flight writers' scratch space each time.
var soScratches freelist.List[soScratch]

// soScratchKeep is the largest batch, in messages, whose scratch space goes
// back to soScratches. The list keeps what it holds for good: one batch of
// a batching policy by period or bytes (which bounds no count) would pin
// some 270 bytes per message for each of the max_in_flight writers long
// after. A larger batch allocates its own, a small cost beside publishing
// that many messages.
const soScratchKeep = 1024

func soGetScratch(n int) *soScratch {
	sc := soScratches.Get()
	if cap(sc.vals) < n {
		sc.vals = make([]session.Outbound, n)
		sc.outs = make([]*session.Outbound, 0, n)
		sc.idx = make([]int, 0, n)
	}
	sc.vals = sc.vals[:n]
	return sc
}

func soPutScratch(sc *soScratch) {
	if cap(sc.vals) > soScratchKeep || cap(sc.results) > soScratchKeep {
		return // for the collector
	}
	clear(sc.vals) // drop payload and property references
	clear(sc.outs[:cap(sc.outs)])
	clear(sc.results) // drop error references
	sc.outs, sc.idx, sc.results = sc.outs[:0], sc.idx[:0], sc.results[:0]
	soScratches.Put(sc)
}
