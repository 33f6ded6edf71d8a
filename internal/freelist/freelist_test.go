package freelist

import (
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestListReusesAcrossCollections(t *testing.T) {
	var l List[[64]byte]
	a, b := l.Get(), l.Get()
	require.NotSame(t, a, b, "an empty list makes new values")
	l.Put(a)
	l.Put(b)
	runtime.GC()
	runtime.GC() // a sync.Pool would be empty now
	got := map[*[64]byte]bool{l.Get(): true, l.Get(): true}
	assert.Equal(t, map[*[64]byte]bool{a: true, b: true}, got, "both released values come back after collections")
}

func TestListConcurrent(t *testing.T) {
	var l List[int]
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				x := l.Get()
				*x++
				l.Put(x)
			}
		}()
	}
	wg.Wait()
	total := 0
	for len(l.items) > 0 {
		total += *l.Get()
	}
	assert.Equal(t, 8000, total, "no value was handed to two callers at once")
}
