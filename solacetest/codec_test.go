package solacetest

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/selector"
)

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	require.NoError(t, err)
	return b
}

// Frames captured from the real client (smf-wire-notes.md §2).
func TestDecodeCapturedFrames(t *testing.T) {
	t.Run("direct publish", func(t *testing.T) {
		b := mustHex(t, "0b 8d 00 ff 00 00 00 15 00 00 00 21 98 06 61 2f 62 00 03 03 04 68 65 6c 6c 6f 2d 64 69 72 65 63 74")
		f, n, err := decodeFrame(b)
		require.NoError(t, err)
		require.Equal(t, len(b), n)
		require.Equal(t, byte(protoTrMsg), f.Proto)
		require.Equal(t, byte(flagDMQE), f.Flags)
		require.Equal(t, byte(2), f.UH)
		topic, ok := f.param(pTopic)
		require.True(t, ok)
		require.Equal(t, "a/b", trimNUL(topic))
		require.Equal(t, "hello-direct", string(f.Payload))
		require.Equal(t, b, f.encode(nil), "re-encoding gives the same bytes")
	})
	t.Run("smp subscribe with correlation tag", func(t *testing.T) {
		b := mustHex(t, "03 8f 00 01 00 00 00 10 00 00 00 1a 23 00 00 02 80 00 00 00 0a 0c 61 2f 3e 00")
		f, _, err := decodeFrame(b)
		require.NoError(t, err)
		tag, ok := f.correlationTag()
		require.True(t, ok)
		require.Equal(t, []byte{0, 0, 2}, tag)
		m, err := decodeSMP(f.Payload)
		require.NoError(t, err)
		require.Equal(t, &smpMsg{Type: smpAddSubscription, Flags: 0x0c, Topic: "a/>"}, m)
	})
	t.Run("client ack with settlement", func(t *testing.T) {
		payload := mustHex(t, "04 03 00 00 00 2c 86 06 00 00 00 66 82 0a 00 00 00 00 00 00 13 8a 83 03 ff"+
			"85 13 00 00 00 00 00 00 13 89 00 00 00 00 00 00 13 89 01")
		a, err := decodeAdCtrl(payload)
		require.NoError(t, err)
		require.Equal(t, byte(adAck), a.Type)
		id, _ := a.uint(apFlowID)
		require.EqualValues(t, 0x66, id)
		win, _ := a.uint(apWindow)
		require.EqualValues(t, 255, win)
		v, _ := a.get(apAppAck)
		ack, ok := decodeAppAck(v)
		require.True(t, ok)
		require.Equal(t, appAck{Min: 5001, Max: 5001, Outcome: outcomeFailed}, ack)
	})
}

func TestParamEncodingLongForm(t *testing.T) {
	long := strings.Repeat("x", 300)
	f := &frame{Proto: protoTrMsg, TTL: 255, Params: []param{{UH: 2, Type: pTopic, Value: cstr(long)}}, Payload: []byte("p")}
	g, _, err := decodeFrame(f.encode(nil))
	require.NoError(t, err)
	v, ok := g.param(pTopic)
	require.True(t, ok)
	require.Equal(t, long, trimNUL(v))
}

func TestExtStreamRoundTrip(t *testing.T) {
	in := []extParam{
		{Type: extSpoolerUnique, Value: u64(0x1234)},
		{Type: extRedeliverCount, Value: u32(3)},
		{Type: 0x36, Value: []byte("trace-context-of-some-length")},
		{Type: 0x33},
		{Type: 0x10, Value: []byte{1}},
		{Type: 0x11, Value: []byte{1, 2}},
		{Type: 0x12, Value: bytes.Repeat([]byte{7}, 300)},
	}
	out, err := decodeExtStream(encodeExtStream(in))
	require.NoError(t, err)
	require.Len(t, out, len(in))
	for i := range in {
		require.Equal(t, in[i].Type, out[i].Type)
		require.Equal(t, len(in[i].Value), len(out[i].Value))
	}
}

func TestApplicationPayload(t *testing.T) {
	tests := []struct {
		name     string
		summary  []byte
		payload  []byte
		expected string
	}{
		{name: "no summary", payload: []byte("raw"), expected: "raw"},
		{name: "binary attachment then metadata", summary: []byte{0x22, 3, 0x42, 2}, payload: []byte("abcXY"), expected: "abc"},
		{name: "sdt string", summary: []byte{0x22, 9}, payload: []byte{0x1f, 0, 0, 0, 9, 'h', 'i', '!', 0}, expected: "hi!"},
		{name: "not an sdt string", summary: []byte{0x22, 3}, payload: []byte{0x1f, 0, 9}, expected: "\x1f\x00\x09"},
	}
	for _, tc := range tests {
		require.Equal(t, tc.expected, string(applicationPayload(tc.summary, tc.payload)), tc.name)
	}
}

func TestReadFrameRejectsGarbage(t *testing.T) {
	for _, in := range [][]byte{
		mustHex(t, "04 8d 00 ff 00 00 00 0c 00 00 00 0c"),       // version 4
		mustHex(t, "03 8d 00 ff 00 00 00 0c 00 00 00 08"),       // total < 12
		mustHex(t, "03 8d 00 ff 00 00 00 0c ff ff ff ff"),       // absurd length
		mustHex(t, "03 8d 00 ff 00 00 00 10 00 00 00 0e 98 00"), // short long-form param
	} {
		_, err := readFrame(bufio.NewReader(bytes.NewReader(in)))
		require.Error(t, err, "%x", in)
	}
}

// FuzzDecode feeds arbitrary bytes to every decoder: none may panic, and a
// frame that decodes must survive re-encoding.
func FuzzDecode(f *testing.F) {
	f.Add(mustHex(f, "0b 8d 00 ff 00 00 00 15 00 00 00 21 98 06 61 2f 62 00 03 03 04 68 65 6c 6c 6f 2d 64 69 72 65 63 74"))
	f.Add(mustHex(f, "03 8f 00 01 00 00 00 10 00 00 00 1a 23 00 00 02 80 00 00 00 0a 0c 61 2f 3e 00"))
	f.Add(mustHex(f, "03 09 00 01 00 00 00 0c 00 00 00 25 04 03 00 00 00 19 86 06 00 00 00 66 82 0a 00 00 00 00 00 00 13 8a 83 03 ff"))
	f.Add(mustHex(f, "03 8c 00 01 00 00 00 20 00 00 00 2b 06 0a 64 58 4e 6c 63 67 3d 3d 07 0a 63 47 46 7a 63 77 3d 3d 81 00 00 00 00 0b 86 00 00 00 05"))
	// An oversized frame: header length 17, total just above maxFrameSize.
	f.Add(mustHex(f, "03 0d 00 01 00 00 00 11 02 00 00 01 98 05 61 2f 00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		// Streamed reads, as from a socket: whatever the bytes, readFrame
		// returns a frame or an error, never panics, and never allocates
		// more than maxFrameSize for a large declared length; the stream
		// is padded so that oversized frames are skipped, not cut short.
		if fr, err := readFrame(bufio.NewReader(io.MultiReader(bytes.NewReader(b), io.LimitReader(zeros{}, maxFrameSize+64)))); err == nil && fr.Oversize > 0 && fr.rawBytes != nil {
			t.Fatalf("an oversized frame kept its bytes")
		}
		fr, _, err := decodeFrame(b)
		_, _ = decodeClientCtrl(b)
		_, _ = decodeSMP(b)
		_, _ = decodeAdCtrl(b)
		_, _ = decodeExtStream(b)
		_, _ = decodeContentsSummary(b)
		_ = applicationPayload(b, b)
		_, _ = binaryMetadata(b)
		if sel, err := selector.Compile(string(b)); err == nil {
			sel.Eval(func(string) any { return int64(1) })
		}
		if err != nil {
			return
		}
		_, _ = decodeClientCtrl(fr.Payload)
		_, _ = decodeSMP(fr.Payload)
		_, _ = decodeAdCtrl(fr.Payload)
		again, _, err := decodeFrame(fr.encode(nil))
		if err != nil {
			t.Fatalf("re-encoded frame does not decode: %v", err)
		}
		if !bytes.Equal(again.Payload, fr.Payload) || len(again.Params) != len(fr.Params) {
			t.Fatalf("re-encoded frame differs")
		}
	})
}

// zeros is an endless stream of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// TestSlab checks that frames carved from one chunk cannot grow into each
// other, and that large frames and a nil slab get slices of their own.
func TestSlab(t *testing.T) {
	var sl slab
	a, b := sl.alloc(100), sl.alloc(100)
	require.Len(t, a, 100)
	require.Equal(t, 100, cap(a), "capped, so an append copies")
	a = append(a, 'x')
	require.Equal(t, byte('x'), a[100])
	require.Zero(t, b[0], "b untouched by a's append")
	big := sl.alloc(slabMax + 1)
	require.Len(t, big, slabMax+1)
	require.Equal(t, slabChunk-200, len(sl.free), "a large frame does not use the chunk")
	var none *slab
	require.Len(t, none.alloc(10), 10)
	// A frame read through a slab decodes as one read without.
	fr := &frame{Proto: protoTrMsg, TTL: 1, Params: []param{{Type: pTopic, Value: cstr("a/b")}}, Payload: []byte("hello")}
	in := fr.encode(nil)
	got, err := readFrameInto(bufio.NewReader(bytes.NewReader(in)), nil, &sl)
	require.NoError(t, err)
	require.Equal(t, []byte("hello"), got.Payload)
	require.Equal(t, in, got.rawBytes)
}
