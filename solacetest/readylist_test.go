package solacetest

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReadyListMatchesModel drives a readyList and a plain slice with the
// same random pushes, ordered inserts (as requeue does) and removals, and
// checks after every step that both hold the same messages in the same
// order, walking forwards and backwards.
func TestReadyListMatchesModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var l readyList
	var model []*qmsg
	out := []*qmsg{} // messages not in the list, to requeue
	seq := uint64(0)
	check := func() {
		t.Helper()
		require.Equal(t, len(model), l.Len())
		var fwd []*qmsg
		for qm := l.Front(); qm != nil; qm = qm.next {
			require.True(t, qm.inReady)
			fwd = append(fwd, qm)
		}
		require.True(t, slices.Equal(model, fwd), "forwards")
		var back []*qmsg
		for qm := l.tail; qm != nil; qm = qm.prev {
			back = append(back, qm)
		}
		slices.Reverse(back)
		require.True(t, slices.Equal(model, back), "backwards")
	}
	for step := 0; step < 2000; step++ {
		switch op := rng.IntN(3); {
		case op == 0 || len(model) == 0:
			seq++
			qm := &qmsg{seq: seq}
			l.PushBack(qm)
			model = append(model, qm)
		case op == 1:
			i := rng.IntN(len(model))
			qm := model[i]
			l.Remove(qm)
			require.False(t, qm.inReady)
			model = slices.Delete(model, i, i+1)
			out = append(out, qm)
		default:
			if len(out) == 0 {
				continue
			}
			i := rng.IntN(len(out))
			qm := out[i]
			out = slices.Delete(out, i, i+1)
			// requeue's placement: before the first message spooled later.
			q := &queue{ready: l}
			q.requeue(qm)
			l = q.ready
			j, _ := slices.BinarySearchFunc(model, qm.seq, func(m *qmsg, s uint64) int { return int(m.seq) - int(s) })
			model = slices.Insert(model, j, qm)
		}
		check()
	}
	l.Init()
	require.Zero(t, l.Len())
	require.Nil(t, l.Front())
}
