package store

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// writeLog opens dir, compacts it to the records first, appends then and
// closes it: the log a broker leaves behind after a snapshot and a run.
func writeLog(t *testing.T, dir string, segLimit int64, first, then []string) {
	t.Helper()
	l, err := Open(t.Context(), dir, Options{SegmentLimit: segLimit})
	require.NoError(t, err)
	_, err = l.Replay(func(byte, []byte) error { return nil })
	require.NoError(t, err)
	require.NoError(t, l.Compact(func(add func(byte, []byte)) {
		for _, r := range first {
			add(1, []byte(r))
		}
	}))
	// Synced in groups of 20, as publishers waiting for acks would be.
	for g := range slices.Chunk(then, 20) {
		var wg sync.WaitGroup
		for _, r := range g {
			wg.Add(1)
			l.Append(1, func(d []byte) []byte { return append(d, r...) })
			l.AfterSync(wg.Done)
		}
		wg.Wait()
	}
	require.NoError(t, l.Close())
}

// replayAll reads dir back.
func replayAll(t *testing.T, dir string) ([]string, []Damage) {
	t.Helper()
	l, err := Open(t.Context(), dir, Options{})
	require.NoError(t, err)
	defer l.Close()
	var got []string
	damage, err := l.Replay(func(typ byte, body []byte) error {
		if string(body) == "bad" {
			return fmt.Errorf("refused")
		}
		got = append(got, string(body))
		return nil
	})
	require.NoError(t, err)
	return got, damage
}

func records(prefix string, n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("%s-%04d", prefix, i))
	}
	return out
}

func TestReplayRoundTrip(t *testing.T) {
	dir := t.TempDir()
	first, then := records("snap", 10), records("run", 500)
	writeLog(t, dir, 1<<10, first, then)
	got, damage := replayAll(t, dir)
	require.Empty(t, damage)
	require.Equal(t, append(slices.Clone(first), then...), got)

	// Compacting again keeps only what the new snapshot holds, and the
	// replaced segments go.
	writeLog(t, dir, 1<<10, []string{"only"}, nil)
	got, damage = replayAll(t, dir)
	require.Empty(t, damage)
	require.Equal(t, []string{"only"}, got)
	segs, _ := filepath.Glob(filepath.Join(dir, "seg-*.log"))
	require.Len(t, segs, 1)
}

// TestReplayDamage damages a log written in small segments and requires
// replay to report it, return every record before the damage and not panic.
func TestReplayDamage(t *testing.T) {
	first, then := records("snap", 5), records("run", 400)
	for _, tc := range []struct {
		name    string
		damage  func(t *testing.T, segs []string)
		problem string
		// keep says which of then must come back: those before the damage.
		keep func(got []string) int
	}{
		{"truncated tail", func(t *testing.T, segs []string) {
			last := segs[len(segs)-1]
			st, err := os.Stat(last)
			require.NoError(t, err)
			require.NoError(t, os.Truncate(last, st.Size()-3))
		}, "record truncated", func([]string) int { return len(then) - 1 }},
		{"flipped byte", func(t *testing.T, segs []string) {
			seg := segs[2]
			data, err := os.ReadFile(seg)
			require.NoError(t, err)
			data[len(data)/2] ^= 0x01
			require.NoError(t, os.WriteFile(seg, data, 0o600))
		}, "checksum mismatch", nil},
		{"missing segment", func(t *testing.T, segs []string) {
			require.NoError(t, os.Remove(segs[2]))
		}, "missing", nil},
		{"missing snapshot", func(t *testing.T, segs []string) {
			require.NoError(t, os.Remove(segs[0]))
		}, "snapshot segment", nil},
		{"garbage header", func(t *testing.T, segs []string) {
			require.NoError(t, os.WriteFile(segs[1], []byte("not a segment at all"), 0o600))
		}, "", nil},
		{"empty segment", func(t *testing.T, segs []string) {
			require.NoError(t, os.WriteFile(segs[len(segs)-1], nil, 0o600))
		}, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeLog(t, dir, 1<<10, first, then)
			segs, err := filepath.Glob(filepath.Join(dir, "seg-*.log"))
			require.NoError(t, err)
			slices.Sort(segs)
			require.Greater(t, len(segs), 4)
			tc.damage(t, segs)
			got, damage := replayAll(t, dir)
			require.NotEmpty(t, damage, "damage reported")
			require.Contains(t, fmt.Sprint(damage), tc.problem)
			t.Log(damage)
			// Whatever comes back is in order, and every record up to the
			// first one missing is there.
			all := append(slices.Clone(first), then...)
			if tc.name == "missing snapshot" {
				all = then
			}
			i := 0
			for _, r := range got {
				j := slices.Index(all[i:], r)
				require.GreaterOrEqual(t, j, 0, "record %q out of order or invented", r)
				i += j + 1
			}
			if tc.keep != nil {
				require.GreaterOrEqual(t, len(got), len(first)+tc.keep(got))
			}
			require.NotEmpty(t, got)
		})
	}
}

// TestReplayRefusedRecord: a record the caller cannot use is reported and
// skipped; the records after it still come back.
func TestReplayRefusedRecord(t *testing.T) {
	dir := t.TempDir()
	writeLog(t, dir, 0, []string{"a", "bad", "b"}, nil)
	got, damage := replayAll(t, dir)
	require.Equal(t, []string{"a", "b"}, got)
	require.Len(t, damage, 1)
	require.Contains(t, damage[0].Problem, "refused")
}

// TestCompactionLeftovers: a snapshot that was being written when the
// broker died (a .tmp file) is ignored and removed.
func TestCompactionLeftovers(t *testing.T) {
	dir := t.TempDir()
	writeLog(t, dir, 0, []string{"a"}, []string{"b"})
	require.NoError(t, os.WriteFile(filepath.Join(dir, "seg-0000000000000009.log.tmp"), []byte("half"), 0o600))
	got, damage := replayAll(t, dir)
	require.Empty(t, damage)
	require.Equal(t, []string{"a", "b"}, got)
	_, err := os.Stat(filepath.Join(dir, "seg-0000000000000009.log.tmp"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestDecodeRecord(t *testing.T) {
	rec := AppendRecord(nil, 7, []byte("hello"))
	typ, body, n, err := DecodeRecord(rec)
	require.NoError(t, err)
	require.Equal(t, byte(7), typ)
	require.Equal(t, "hello", string(body))
	require.Equal(t, len(rec), n)
	for _, tc := range []struct {
		name string
		b    []byte
		want error
	}{
		{"short header", rec[:5], ErrTruncated},
		{"short body", rec[:len(rec)-1], ErrTruncated},
		{"zero length", make([]byte, 9), ErrLength},
		{"huge length", append([]byte{0xff, 0xff, 0xff, 0xff}, rec[4:]...), ErrLength},
		{"flipped", append(slices.Clone(rec[:len(rec)-1]), rec[len(rec)-1]^1), ErrChecksum},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, _, err := DecodeRecord(tc.b)
			require.ErrorIs(t, err, tc.want)
		})
	}
}

// FuzzDecodeRecord feeds arbitrary bytes to the record decoder: it must
// never panic, and what it accepts must re-encode to the same bytes.
func FuzzDecodeRecord(f *testing.F) {
	f.Add(AppendRecord(nil, 1, []byte("body")))
	f.Add(AppendRecord(AppendRecord(nil, 0, headerBody(1, 1)), 3, nil))
	f.Add([]byte{0, 0, 0, 1, 0, 0, 0, 0, 9})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		for len(b) > 0 {
			typ, body, n, err := DecodeRecord(b)
			if err != nil {
				return
			}
			require.Equal(t, b[:n], AppendRecord(nil, typ, body))
			b = b[n:]
		}
	})
}
