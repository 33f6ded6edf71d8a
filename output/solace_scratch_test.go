package output

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSolaceScratchKeepsNoLargeBatch: the writers' free list keeps what it
// is given for good, so a batch larger than soScratchKeep messages (a
// batching policy by period or bytes bounds no count) does not put its
// scratch space back, where it would pin a few hundred bytes per message for
// every writer long after; smaller batches do.
func TestSolaceScratchKeepsNoLargeBatch(t *testing.T) {
	big, small := soGetScratch(soScratchKeep+1), soGetScratch(soScratchKeep)
	soPutScratch(big)
	soPutScratch(small)
	var held []*soScratch
	t.Cleanup(func() {
		for _, sc := range held {
			soScratches.Put(sc)
		}
	})
	kept := false
	for {
		sc := soScratches.Get()
		if sc.vals == nil { // a new one: the list is empty
			break
		}
		held = append(held, sc)
		require.False(t, sc == big, "a large batch's scratch went back to the free list")
		kept = kept || sc == small
	}
	assert.True(t, kept, "a batch of soScratchKeep messages reuses its scratch")
}
