package amqpwire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"
)

// The decoder reads only what a peer sends a sender: performatives, their
// fields, errors, delivery states and connection properties. Every read is
// bounds-checked, and nesting is limited, so a hostile peer gets a decode
// error, never a panic or an unbounded allocation.

var errShort = errors.New("amqp: truncated value")

// maxDepth bounds the nesting of compound values.
const maxDepth = 16

// valueLen returns the encoded length of the value at the start of b.
func valueLen(b []byte, depth int) (int, error) {
	if len(b) == 0 {
		return 0, errShort
	}
	if b[0] == 0x00 { // described: descriptor, then value
		if depth >= maxDepth {
			return 0, errors.New("amqp: values nested too deep")
		}
		d, err := valueLen(b[1:], depth+1)
		if err != nil {
			return 0, err
		}
		v, err := valueLen(b[1+d:], depth+1)
		if err != nil {
			return 0, err
		}
		return 1 + d + v, nil
	}
	var n int
	switch b[0] >> 4 {
	case 0x4:
		n = 1
	case 0x5:
		n = 2
	case 0x6:
		n = 3
	case 0x7:
		n = 5
	case 0x8:
		n = 9
	case 0x9:
		n = 17
	case 0xa, 0xc, 0xe:
		if len(b) < 2 {
			return 0, errShort
		}
		n = 2 + int(b[1])
	case 0xb, 0xd, 0xf:
		if len(b) < 5 {
			return 0, errShort
		}
		size := binary.BigEndian.Uint32(b[1:5])
		if uint64(size) > uint64(len(b)) {
			return 0, errShort
		}
		n = 5 + int(size)
	default:
		return 0, fmt.Errorf("amqp: unknown type constructor %#02x", b[0])
	}
	if len(b) < n {
		return 0, errShort
	}
	return n, nil
}

// compound splits a list, map or array body into its count and elements'
// bytes: for a list or map b is at its constructor.
func listItems(b []byte, max int, out [][]byte) ([][]byte, error) {
	if len(b) == 0 {
		return nil, errShort
	}
	switch b[0] {
	case tNull, tList0:
		return out[:0], nil
	case tList8, tMap8, tList32, tMap32:
	default:
		return nil, fmt.Errorf("amqp: expected a list or map, got constructor %#02x", b[0])
	}
	count, b, err := compoundBody(b)
	if err != nil {
		return nil, err
	}
	if count > len(b) { // every element takes at least one byte
		return nil, errShort
	}
	out = out[:0]
	for i := 0; i < count; i++ {
		n, err := valueLen(b, 0)
		if err != nil {
			return nil, err
		}
		if len(out) < max {
			out = append(out, b[:n])
		}
		b = b[n:]
	}
	return out, nil
}

// compoundBody reads the size and count of a list, map or array (8- or
// 32-bit form, by its constructor at b[0]) and returns the count and the
// elements' bytes (for an array, its element constructor first).
func compoundBody(b []byte) (int, []byte, error) {
	if b[0]>>4 == 0xc || b[0]>>4 == 0xe { // list8, map8, array8
		if len(b) < 3 || int(b[1]) < 1 || len(b) < 2+int(b[1]) {
			return 0, nil, errShort
		}
		return int(b[2]), b[3 : 2+int(b[1])], nil
	}
	if len(b) < 9 {
		return 0, nil, errShort
	}
	size := binary.BigEndian.Uint32(b[1:5])
	if size < 4 || uint64(size) > uint64(len(b)-5) {
		return 0, nil, errShort
	}
	return int(binary.BigEndian.Uint32(b[5:9])), b[9 : 5+int(size)], nil
}

// described splits a described value into its numeric descriptor and value.
func described(b []byte) (uint64, []byte, error) {
	if len(b) < 2 || b[0] != 0x00 {
		return 0, nil, errors.New("amqp: expected a described value")
	}
	code, n, err := descriptorAt(b[1:])
	if err != nil {
		return 0, nil, err
	}
	rest := b[1+n:]
	vl, err := valueLen(rest, 1)
	if err != nil {
		return 0, nil, err
	}
	return code, rest[:vl], nil
}

// descriptorAt reads a descriptor: a code (ulongAt), or a symbol, which is
// reported as math.MaxUint64.
func descriptorAt(b []byte) (uint64, int, error) {
	if len(b) > 0 && (b[0] == tSym8 || b[0] == tSym32) {
		n, err := valueLen(b, 0)
		return math.MaxUint64, n, err
	}
	return ulongAt(b)
}

// ulongAt reads an unsigned integer in any of its encodings: its value and
// its length.
func ulongAt(b []byte) (uint64, int, error) {
	if len(b) == 0 {
		return 0, 0, errShort
	}
	switch b[0] {
	case tUlong0, tUint0:
		return 0, 1, nil
	case tSmallUlong, tSmallUint, tUbyte:
		if len(b) < 2 {
			return 0, 0, errShort
		}
		return uint64(b[1]), 2, nil
	case tUlong:
		if len(b) < 9 {
			return 0, 0, errShort
		}
		return binary.BigEndian.Uint64(b[1:]), 9, nil
	case tUint:
		if len(b) < 5 {
			return 0, 0, errShort
		}
		return uint64(binary.BigEndian.Uint32(b[1:])), 5, nil
	}
	return 0, 0, fmt.Errorf("amqp: bad descriptor constructor %#02x", b[0])
}

// fields is a decoded composite: its raw field encodings.
type fields [][]byte

// get returns field i, nil when absent or null.
func (f fields) get(i int) []byte {
	if i >= len(f) || len(f[i]) == 0 || f[i][0] == tNull {
		return nil
	}
	return f[i]
}

// fieldReader reads a composite's fields by type, keeping the first error
// in *err, so that a decoder reads a field a line and checks once, at the
// end. A field that fails reads as zero. (The error is the decoder's own
// variable, not a field beside the fields: returned from the same struct,
// it would move a caller's field buffer to the heap.)
type fieldReader struct {
	fields
	err *error
}

// listReader reads the fields of the list at b, keeping up to cap(buf) of
// them in buf, and sets *err to the list's error (nil when it reads).
func listReader(b []byte, buf [][]byte, err *error) fieldReader {
	items, e := listItems(b, cap(buf), buf)
	*err = e
	return fieldReader{items, err}
}

// fail keeps e (nil for none) unless an error is kept already.
func (r *fieldReader) fail(e error) {
	if *r.err == nil {
		*r.err = e
	}
}

func (r *fieldReader) uint(i int, def uint32) uint32 {
	b := r.get(i)
	if b == nil {
		return def
	}
	v, _, err := ulongAt(b)
	if err != nil {
		r.fail(fmt.Errorf("amqp: field %d is not an unsigned integer", i))
		return 0
	}
	if v > math.MaxUint32 {
		r.fail(fmt.Errorf("amqp: field %d out of range", i))
		return 0
	}
	return uint32(v)
}

// optUint reads an optional uint field: nil when absent.
func (r *fieldReader) optUint(i int) *uint32 {
	if r.get(i) == nil {
		return nil
	}
	v := r.uint(i, 0)
	return &v
}

func (r *fieldReader) ushort(i int, def uint16) uint16 {
	b := r.get(i)
	if b == nil {
		return def
	}
	if b[0] == tUshort && len(b) >= 3 {
		return binary.BigEndian.Uint16(b[1:])
	}
	v, _, err := ulongAt(b)
	if err != nil || v > math.MaxUint16 {
		r.fail(fmt.Errorf("amqp: field %d is not a ushort", i))
		return 0
	}
	return uint16(v)
}

func (r *fieldReader) bool(i int) bool {
	b := r.get(i)
	if b == nil {
		return false
	}
	switch b[0] {
	case tTrue:
		return true
	case tFalse:
		return false
	case tBoolean:
		if len(b) >= 2 {
			return b[1] != 0
		}
	}
	r.fail(fmt.Errorf("amqp: field %d is not a boolean", i))
	return false
}

// str reads a string or symbol field.
func (r *fieldReader) str(i int) string {
	b := r.get(i)
	if b == nil {
		return ""
	}
	s, err := stringAt(b)
	r.fail(err)
	return s
}

func stringAt(b []byte) (string, error) {
	c, err := bytesAt(b)
	return string(c), err
}

// symbols reads a symbol or an array of symbols.
func (r *fieldReader) symbols(i int) []string {
	s, err := symbolsAt(r.get(i), i)
	r.fail(err)
	return s
}

// symbolsAt reads field i, b, as a symbol or an array of symbols.
func symbolsAt(b []byte, i int) ([]string, error) {
	if b == nil {
		return nil, nil
	}
	switch b[0] {
	case tSym8, tSym32:
		s, err := stringAt(b)
		return []string{s}, err
	case tArray8, tArray32:
	default:
		return nil, fmt.Errorf("amqp: field %d is not symbols", i)
	}
	count, body, err := compoundBody(b)
	if err != nil {
		return nil, err
	}
	if count == 0 {
		return nil, nil
	}
	if len(body) < 1 || (body[0] != tSym8 && body[0] != tSym32) {
		return nil, fmt.Errorf("amqp: field %d is not an array of symbols", i)
	}
	elem, body := body[0], body[1:]
	if count > len(body) {
		return nil, errShort
	}
	out := make([]string, 0, count)
	for range count {
		var n int
		if elem == tSym8 {
			if len(body) < 1 || len(body) < 1+int(body[0]) {
				return nil, errShort
			}
			out, n = append(out, string(body[1:1+int(body[0])])), 1+int(body[0])
		} else {
			if len(body) < 4 {
				return nil, errShort
			}
			l := binary.BigEndian.Uint32(body)
			if uint64(l) > uint64(len(body)-4) {
				return nil, errShort
			}
			out, n = append(out, string(body[4:4+l])), 4+int(l)
		}
		body = body[n:]
	}
	return out, nil
}

// Value decodes a primitive or compound value into Go: nil, bool, the
// integer types, float32/64, string (strings and symbols), []byte,
// time.Time, []any for lists and arrays and map[any]any for maps. Described
// values decode to their value.
func Value(b []byte) (any, error) { return value(b, 0) }

func value(b []byte, depth int) (any, error) {
	if len(b) == 0 {
		return nil, errShort
	}
	if depth > maxDepth {
		return nil, errors.New("amqp: values nested too deep")
	}
	c := b[0]
	fixed := func(n int) ([]byte, error) {
		if len(b) < 1+n {
			return nil, errShort
		}
		return b[1 : 1+n], nil
	}
	switch c {
	case 0x00:
		_, v, err := described(b)
		if err != nil {
			return nil, err
		}
		return value(v, depth+1)
	case tNull:
		return nil, nil
	case tTrue:
		return true, nil
	case tFalse:
		return false, nil
	case tUint0:
		return uint32(0), nil
	case tUlong0:
		return uint64(0), nil
	case tList0:
		return []any{}, nil
	case tUbyte, tByte, tSmallUint, tSmallUlong, tSmallInt, tSmallLong, tBoolean:
		p, err := fixed(1)
		if err != nil {
			return nil, err
		}
		switch c {
		case tUbyte:
			return p[0], nil
		case tByte:
			return int8(p[0]), nil
		case tSmallUint:
			return uint32(p[0]), nil
		case tSmallUlong:
			return uint64(p[0]), nil
		case tSmallInt:
			return int32(int8(p[0])), nil
		case tSmallLong:
			return int64(int8(p[0])), nil
		}
		return p[0] != 0, nil
	case tUshort, tShort:
		p, err := fixed(2)
		if err != nil {
			return nil, err
		}
		if c == tUshort {
			return binary.BigEndian.Uint16(p), nil
		}
		return int16(binary.BigEndian.Uint16(p)), nil
	case tUint, tInt, tFloat, tChar, tDecimal32, tUlong, tLong, tDouble, tTimestamp, tDecimal64:
		// 0x7_: 4 bytes, 0x8_: 8 bytes, read into u alike.
		wide := c>>4 == 8
		if len(b) < 5 || wide && len(b) < 9 {
			return nil, errShort
		}
		u := uint64(binary.BigEndian.Uint32(b[1:5]))
		if wide {
			u = u<<32 | uint64(binary.BigEndian.Uint32(b[5:9]))
		}
		switch c {
		case tUint:
			return uint32(u), nil
		case tInt:
			return int32(u), nil
		case tFloat:
			return math.Float32frombits(uint32(u)), nil
		case tChar:
			return Char(u), nil
		case tUlong:
			return u, nil
		case tLong:
			return int64(u), nil
		case tDouble:
			return math.Float64frombits(u), nil
		case tTimestamp:
			return time.UnixMilli(int64(u)).UTC(), nil
		}
		return nil, errDecimal
	case tDecimal128:
		return nil, errDecimal
	case tUUID:
		p, err := fixed(16)
		if err != nil {
			return nil, err
		}
		return UUID(p), nil
	case tVbin8, tVbin32:
		s, err := stringAt(b)
		return []byte(s), err
	case tStr8, tStr32, tSym8, tSym32:
		return stringAt(b)
	case tList8, tList32, tMap8, tMap32:
		items, err := listItems(b, math.MaxInt, nil)
		if err != nil {
			return nil, err
		}
		vals := make([]any, len(items))
		for i, it := range items {
			if vals[i], err = value(it, depth+1); err != nil {
				return nil, err
			}
		}
		if c == tList8 || c == tList32 {
			return vals, nil
		}
		m := make(map[any]any, len(vals)/2)
		for i := 0; i+1 < len(vals); i += 2 {
			switch k := vals[i].(type) {
			case []any, map[any]any, []byte:
				continue // not hashable (or not a useful key)
			default:
				m[k] = vals[i+1]
			}
		}
		return m, nil
	case tArray8, tArray32:
		return arrayValue(b, depth)
	}
	return nil, fmt.Errorf("amqp: unknown type constructor %#02x", c)
}

// UUID is an AMQP uuid value.
type UUID [16]byte

// Char is an AMQP char value: a UTF-32 code point.
type Char rune

// errDecimal: the decimal types have no Go form here (no JMS client sends
// them).
var errDecimal = errors.New("amqp: decimal values are not supported")

// arrayValue decodes an array into []any: one constructor (with its
// descriptor, for described elements) shared by every element.
func arrayValue(b []byte, depth int) (any, error) {
	count, body, err := compoundBody(b)
	if err != nil {
		return nil, err
	}
	if count == 0 {
		return []any{}, nil
	}
	// The constructor: a type code, or 0x00, a descriptor and a type code.
	cl := 1
	if len(body) > 0 && body[0] == 0x00 {
		dl, err := valueLen(body[1:], depth+1)
		if err != nil {
			return nil, err
		}
		cl = 2 + dl
	}
	if len(body) < cl {
		return nil, errShort
	}
	ctor, elems := body[:cl], body[cl:]
	code := ctor[cl-1]
	// Every element takes at least a byte, but for the empty-width types
	// (null, true, uint0, ...), whose count alone is bounded.
	if w := fixedWidth(code); (w == 0 && count > 1<<16) || (w != 0 && count > len(elems)) {
		return nil, errShort
	}
	out := make([]any, 0, count)
	buf := make([]byte, 0, 64)
	for range count {
		// An element is the constructor's type code followed by its bytes.
		buf = append(buf[:0], code)
		n, err := elemLen(code, elems)
		if err != nil {
			return nil, err
		}
		buf = append(buf, elems[:n]...)
		elems = elems[n:]
		v, err := value(buf, depth+1)
		if err != nil {
			return nil, err
		}
		if bs, ok := v.([]byte); ok {
			v = append([]byte(nil), bs...)
		}
		out = append(out, v)
	}
	return out, nil
}

// fixedWidth is the encoded width (after the constructor) of a fixed-width
// type code, -1 for a variable one and 0 for an empty one.
func fixedWidth(code byte) int {
	switch code >> 4 {
	case 0x4:
		return 0
	case 0x5:
		return 1
	case 0x6:
		return 2
	case 0x7:
		return 4
	case 0x8:
		return 8
	case 0x9:
		return 16
	}
	return -1
}

// elemLen is the length of one array element of type code at b (without
// the constructor).
func elemLen(code byte, b []byte) (int, error) {
	if w := fixedWidth(code); w >= 0 {
		if len(b) < w {
			return 0, errShort
		}
		return w, nil
	}
	switch code >> 4 {
	case 0xa, 0xc, 0xe:
		if len(b) < 1 || len(b) < 1+int(b[0]) {
			return 0, errShort
		}
		return 1 + int(b[0]), nil
	case 0xb, 0xd, 0xf:
		if len(b) < 4 {
			return 0, errShort
		}
		n := binary.BigEndian.Uint32(b)
		if uint64(n) > uint64(len(b)-4) {
			return 0, errShort
		}
		return 4 + int(n), nil
	}
	return 0, fmt.Errorf("amqp: unknown type constructor %#02x", code)
}

// StringMap decodes a map with string or symbol keys (connection properties).
func StringMap(b []byte) (map[string]any, error) {
	if b == nil {
		return nil, nil
	}
	v, err := Value(b)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[any]any)
	if !ok {
		if v == nil {
			return nil, nil
		}
		return nil, errors.New("amqp: expected a map")
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		if s, ok := k.(string); ok {
			out[s] = v
		}
	}
	return out, nil
}
