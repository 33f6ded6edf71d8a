package solacetest

// This file is the codec's SDT (structured data) decoding: the binary-metadata
// section of a message, whose SDT map holds the JMS header fields ("h") and
// user properties ("p") that consumer-flow selectors read, and its encoding
// for messages the broker publishes itself (publish.go).

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
)

// SDT type codes.
const (
	sdtNull   = 0
	sdtBool   = 1
	sdtInt    = 2
	sdtUint   = 3
	sdtFloat  = 4
	sdtChar   = 5
	sdtBytes  = 6
	sdtString = 7
	sdtMap    = 10
	sdtStream = 11
)

// sdtItem reads one SDT item at the start of b: its type, payload and the
// bytes it took up. The tag byte holds type<<2 | (length bytes - 1); the
// length counts the tag and length bytes.
func sdtItem(b []byte) (typ byte, payload []byte, n int, err error) {
	if len(b) < 2 {
		return 0, nil, 0, errors.New("short SDT item")
	}
	typ, lb := b[0]>>2, int(b[0]&3)+1
	if len(b) < 1+lb {
		return 0, nil, 0, errors.New("short SDT length")
	}
	l := int(beUint(b[1 : 1+lb]))
	if l < 1+lb || l > len(b) {
		return 0, nil, 0, fmt.Errorf("SDT item length %d", l)
	}
	return typ, b[1+lb : l], l, nil
}

// sdtValue converts a scalar SDT item to a selector value: bool, int64,
// float64 or string; nil for types a selector cannot use.
func sdtValue(typ byte, p []byte) any {
	switch typ {
	case sdtBool:
		return len(p) == 1 && p[0] != 0
	case sdtInt:
		switch len(p) {
		case 1:
			return int64(int8(p[0]))
		case 2:
			return int64(int16(binary.BigEndian.Uint16(p)))
		case 4:
			return int64(int32(binary.BigEndian.Uint32(p)))
		case 8:
			return int64(binary.BigEndian.Uint64(p))
		}
	case sdtUint:
		if len(p) > 0 && len(p) <= 8 {
			v := beUint(p)
			if v > math.MaxInt64 {
				return float64(v)
			}
			return int64(v)
		}
	case sdtFloat:
		switch len(p) {
		case 4:
			return float64(math.Float32frombits(binary.BigEndian.Uint32(p)))
		case 8:
			return math.Float64frombits(binary.BigEndian.Uint64(p))
		}
	case sdtChar:
		if len(p) == 2 {
			return string(rune(binary.BigEndian.Uint16(p)))
		}
	case sdtString:
		return trimNUL(p)
	}
	return nil
}

// sdtMapValues decodes an SDT map payload into its scalar entries; nested
// maps are returned as map[string]any.
func sdtMapValues(p []byte) map[string]any {
	out := map[string]any{}
	for len(p) > 0 {
		kt, kp, n, err := sdtItem(p)
		if err != nil || kt != sdtString {
			return out
		}
		p = p[n:]
		vt, vp, n, err := sdtItem(p)
		if err != nil {
			return out
		}
		p = p[n:]
		if vt == sdtMap {
			out[trimNUL(kp)] = sdtMapValues(vp)
		} else {
			out[trimNUL(kp)] = sdtValue(vt, vp)
		}
	}
	return out
}

// messageMetadata returns the header map ("h": mi application message id,
// ci correlation id, mt application message type, ...) and the user
// properties ("p") carried in a message's binary-metadata section.
func messageMetadata(summary, payload []byte) (headers, props map[string]any) {
	secs, err := decodeContentsSummary(summary)
	if err != nil {
		return nil, nil
	}
	off := 0
	for _, s := range secs {
		if off+s.Len > len(payload) {
			return nil, nil
		}
		if s.Type == sectionBinaryMeta {
			return binaryMetadata(payload[off : off+s.Len])
		}
		off += s.Len
	}
	return nil, nil
}

// binaryMetadata walks the binary-metadata section: a block count, 4-byte
// index entries (type, 24-bit length), then the blocks; block type 0 is an
// SDT stream whose map holds "h" and "p".
func binaryMetadata(b []byte) (headers, props map[string]any) {
	if len(b) < 1 {
		return nil, nil
	}
	nb := int(b[0])
	if len(b) < 1+4*nb {
		return nil, nil
	}
	off := 1 + 4*nb
	for i := range nb {
		e := b[1+4*i : 5+4*i]
		l := int(beUint(e[1:4]))
		if off+l > len(b) {
			return nil, nil
		}
		if e[0] == 0 {
			walkSDT(b[off:off+l], func(m map[string]any) {
				if h, ok := m["h"].(map[string]any); ok {
					headers = h
				}
				if p, ok := m["p"].(map[string]any); ok {
					props = p
				}
			})
		}
		off += l
	}
	return headers, props
}

// walkSDT calls fn for every map found in a sequence of SDT items, looking
// inside streams.
func walkSDT(b []byte, fn func(map[string]any)) {
	for len(b) > 0 {
		t, p, n, err := sdtItem(b)
		if err != nil {
			return
		}
		switch t {
		case sdtStream:
			walkSDT(p, fn)
		case sdtMap:
			fn(sdtMapValues(p))
		}
		b = b[n:]
	}
}

// appendSDT appends one SDT item of type typ around payload, with the
// length as the Go client writes it: four bytes for maps and streams, one
// byte for scalars when it fits.
func appendSDT(dst []byte, typ byte, payload []byte) []byte {
	if l := len(payload) + 2; typ != sdtMap && typ != sdtStream && l <= 0xff {
		return append(append(dst, typ<<2, byte(l)), payload...)
	}
	dst = append(dst, typ<<2|3)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(payload)+5))
	return append(dst, payload...)
}

// appendSDTStringMap appends an SDT map of string keys and values, in key
// order.
func appendSDTStringMap(dst []byte, m map[string]string) []byte {
	var entries []byte
	for _, k := range slices.Sorted(maps.Keys(m)) {
		entries = appendSDT(entries, sdtString, cstr(k))
		entries = appendSDT(entries, sdtString, cstr(m[k]))
	}
	return appendSDT(dst, sdtMap, entries)
}

// encodeBinaryMetadata builds the binary-metadata section that
// binaryMetadata reads and the Go client decodes: one block of type 0, an
// SDT stream of the format marker the client writes (bytes 07 00) and a map
// with the header fields under "h" and the user properties under "p". It
// returns nil when both are empty.
func encodeBinaryMetadata(headers, props map[string]string) []byte {
	if len(headers) == 0 && len(props) == 0 {
		return nil
	}
	var top []byte
	if len(headers) > 0 {
		top = appendSDT(top, sdtString, cstr("h"))
		top = appendSDTStringMap(top, headers)
	}
	if len(props) > 0 {
		top = appendSDT(top, sdtString, cstr("p"))
		top = appendSDTStringMap(top, props)
	}
	stream := appendSDT(nil, sdtBytes, []byte{7, 0})
	stream = appendSDT(stream, sdtMap, top)
	block := appendSDT(nil, sdtStream, stream)
	// One block: its index entry is the type (0) and a 24-bit length.
	out := []byte{1, 0, byte(len(block) >> 16), byte(len(block) >> 8), byte(len(block))}
	return append(out, block...)
}
