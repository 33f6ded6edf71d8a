package ccsmp

import (
	"encoding/binary"
	"encoding/hex"
	"sync/atomic"
)

// rgmidLayout is how CCSMP lays out the 16 opaque bytes of a replication
// group message id. Its string form ("rmid1:" and 32 hex digits in groups of
// 5, 11, 8 and 8) is the 128-bit value of the spooler id and the message id;
// formatting it here costs a fraction of CCSMP's toString. The layout is
// learnt from the first id CCSMP formats, and a layout that does not
// reproduce CCSMP's string exactly keeps CCSMP formatting every id.
type rgmidLayout int32

const (
	rgmidUnknown   rgmidLayout = iota
	rgmidWordsLE               // two little-endian 64-bit words, high first
	rgmidBigEndian             // one big-endian 128-bit value
	rgmidByCCSMP               // unrecognised: CCSMP formats every id
)

var rgmidLayoutState atomic.Int32

const rgmidStrLen = len("rmid1:") + 32 + 3

// orderRGMID returns raw as the big-endian 128-bit value.
func orderRGMID(raw [16]byte, l rgmidLayout) [16]byte {
	if l == rgmidWordsLE {
		var v [16]byte
		binary.BigEndian.PutUint64(v[:8], binary.LittleEndian.Uint64(raw[:8]))
		binary.BigEndian.PutUint64(v[8:], binary.LittleEndian.Uint64(raw[8:]))
		return v
	}
	return raw
}

// appendRGMID appends the string form of the big-endian value v.
func appendRGMID(dst []byte, v [16]byte) []byte {
	var h [32]byte
	hex.Encode(h[:], v[:])
	dst = append(dst, "rmid1:"...)
	dst = append(dst, h[:5]...)
	dst = append(dst, '-')
	dst = append(dst, h[5:16]...)
	dst = append(dst, '-')
	dst = append(dst, h[16:24]...)
	dst = append(dst, '-')
	return append(dst, h[24:]...)
}

// learnRGMIDLayout finds the layout under which raw formats as want, CCSMP's
// string for it, and records it for every later message.
func learnRGMIDLayout(raw [16]byte, want string) rgmidLayout {
	l := rgmidByCCSMP
	for _, c := range []rgmidLayout{rgmidWordsLE, rgmidBigEndian} {
		if string(appendRGMID(nil, orderRGMID(raw, c))) == want {
			l = c
			break
		}
	}
	rgmidLayoutState.CompareAndSwap(int32(rgmidUnknown), int32(l))
	return rgmidLayout(rgmidLayoutState.Load())
}

// RGMIDFormattedInGo reports whether Read formats replication group message
// ids itself, having learnt CCSMP's layout from the first one it read.
func RGMIDFormattedInGo() bool {
	l := rgmidLayout(rgmidLayoutState.Load())
	return l == rgmidWordsLE || l == rgmidBigEndian
}
