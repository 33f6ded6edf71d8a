package session

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReceiverReportsStaleDrops(t *testing.T) {
	var reported int
	r := &Receiver{onStale: func() { reported++ }}
	r.gen.Store(1)
	require.True(t, r.fresh(&Inbound{gen: 1}), "a message of the current connection is kept")
	require.False(t, r.fresh(&Inbound{gen: 0}), "a message from before the loss is dropped")
	require.Equal(t, 1, reported)
}
