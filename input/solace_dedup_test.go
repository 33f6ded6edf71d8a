package input

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestDedupWindowBounds(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	tests := []struct {
		name     string
		size     int
		age      time.Duration
		add      []string
		addEvery time.Duration
		checkAt  time.Duration // after t0 + last add
		seen     []string
		unseen   []string
	}{
		{
			name: "size evicts oldest", size: 2,
			add: []string{"a", "b", "c"}, seen: []string{"b", "c"}, unseen: []string{"a"},
		},
		{
			name: "age evicts expired", age: 10 * time.Second, addEvery: 4 * time.Second,
			add: []string{"a", "b", "c"}, checkAt: 3 * time.Second,
			// a added at 0 s, b at 4 s, c at 8 s; checked at 11 s.
			seen: []string{"b", "c"}, unseen: []string{"a"},
		},
		{
			name: "both bounds, size binds first", size: 1, age: time.Hour,
			add: []string{"a", "b"}, seen: []string{"b"}, unseen: []string{"a"},
		},
		{
			name: "re-adding refreshes position", size: 2,
			add: []string{"a", "b", "a", "c"}, seen: []string{"a", "c"}, unseen: []string{"b"},
		},
		{
			name: "empty key is never a duplicate", size: 10,
			add: []string{""}, unseen: []string{""},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newDedupWindow(tc.size, tc.age)
			now := t0
			for i, k := range tc.add {
				if i > 0 {
					now = now.Add(tc.addEvery)
				}
				w.Add(k, now)
			}
			check := now.Add(tc.checkAt)
			for _, k := range tc.seen {
				require.True(t, w.Seen(k, check), "key %q should be in the window", k)
			}
			for _, k := range tc.unseen {
				require.False(t, w.Seen(k, check), "key %q should not be in the window", k)
			}
			if tc.size > 0 {
				require.LessOrEqual(t, w.Len(), tc.size)
			}
		})
	}
}

func TestDedupWindowConcurrent(t *testing.T) {
	w := newDedupWindow(1000, 0)
	done := make(chan struct{})
	for g := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 500 {
				k := fmt.Sprintf("%d-%d", g, i)
				w.Add(k, time.Now())
				_ = w.Seen(k, time.Now())
			}
		}()
	}
	for range 4 {
		<-done
	}
	require.Equal(t, 1000, w.Len())
}
