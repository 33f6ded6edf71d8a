// Package amqpwire is a lean AMQP 1.0 client: the type codec, the
// performatives of sender and receiver links, message sections, and a
// connection whose callers encode transfers, flows and dispositions
// straight into one buffered socket, with one reader goroutine settling
// sent deliveries and queueing received ones. go-amqp routes every transfer
// through three goroutines (caller, session mux, connection writer) and
// waits per frame in its session loop; here a transfer costs a copy under a
// mutex, a batch of settlements one wake-up of the batch's waiter, and a
// received delivery one copy of its bytes.
package amqpwire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"
	"unicode/utf8"
)

// AMQP 1.0 type constructors (types section 1.6).
const (
	tNull       = 0x40
	tTrue       = 0x41
	tFalse      = 0x42
	tUint0      = 0x43
	tUlong0     = 0x44
	tList0      = 0x45
	tUbyte      = 0x50
	tByte       = 0x51
	tSmallUint  = 0x52
	tSmallUlong = 0x53
	tSmallInt   = 0x54
	tSmallLong  = 0x55
	tBoolean    = 0x56
	tUshort     = 0x60
	tShort      = 0x61
	tUint       = 0x70
	tInt        = 0x71
	tFloat      = 0x72
	tChar       = 0x73
	tDecimal32  = 0x74
	tUlong      = 0x80
	tLong       = 0x81
	tDouble     = 0x82
	tTimestamp  = 0x83
	tDecimal64  = 0x84
	tDecimal128 = 0x94
	tUUID       = 0x98
	tVbin8      = 0xa0
	tStr8       = 0xa1
	tSym8       = 0xa3
	tVbin32     = 0xb0
	tStr32      = 0xb1
	tSym32      = 0xb3
	tList8      = 0xc0
	tMap8       = 0xc1
	tList32     = 0xd0
	tMap32      = 0xd1
	tArray8     = 0xe0
	tArray32    = 0xf0
)

// ErrInvalidUTF8 is a string value that AMQP cannot carry.
var ErrInvalidUTF8 = errors.New("not a valid UTF-8 string")

// The append functions choose the same encodings as go-amqp, so a message
// encoded here is byte-identical to go-amqp's for the same values.

// AppendUint appends a uint: uint0, smalluint or uint.
func AppendUint(b []byte, n uint32) []byte {
	if n > math.MaxUint8 {
		return binary.BigEndian.AppendUint32(append(b, tUint), n)
	}
	return appendSmallUnsigned(b, byte(n), tUint0, tSmallUint)
}

// AppendUlong appends a ulong: ulong0, smallulong or ulong.
func AppendUlong(b []byte, n uint64) []byte {
	if n > math.MaxUint8 {
		return binary.BigEndian.AppendUint64(append(b, tUlong), n)
	}
	return appendSmallUnsigned(b, byte(n), tUlong0, tSmallUlong)
}

// appendSmallUnsigned appends n, a uint or ulong under 256, in the short
// forms both types have: the zero constructor alone, or the small one and
// the byte.
func appendSmallUnsigned(b []byte, n, zero, small byte) []byte {
	if n == 0 {
		return append(b, zero)
	}
	return append(b, small, n)
}

// AppendBool appends a boolean as true or false.
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, tTrue)
	}
	return append(b, tFalse)
}

// AppendString appends a str8 or str32; a string that is not UTF-8 fails.
func AppendString(b []byte, s string) ([]byte, error) {
	if !utf8.ValidString(s) {
		return b, ErrInvalidUTF8
	}
	return appendVar(b, tStr8, tStr32, s), nil
}

// AppendSymbol appends a sym8 or sym32.
func AppendSymbol(b []byte, s string) []byte { return appendVar(b, tSym8, tSym32, s) }

// AppendBinary appends a vbin8 or vbin32.
func AppendBinary(b []byte, p []byte) []byte {
	if len(p) < 256 {
		return append(append(b, tVbin8, byte(len(p))), p...)
	}
	return append(binary.BigEndian.AppendUint32(append(b, tVbin32), uint32(len(p))), p...)
}

func appendVar(b []byte, short, long byte, s string) []byte {
	if len(s) < 256 {
		return append(append(b, short, byte(len(s))), s...)
	}
	return append(binary.BigEndian.AppendUint32(append(b, long), uint32(len(s))), s...)
}

// AppendTimestamp appends a timestamp, in milliseconds since the epoch.
func AppendTimestamp(b []byte, t time.Time) []byte {
	return binary.BigEndian.AppendUint64(append(b, tTimestamp), uint64(t.UnixMilli()))
}

// AppendValue appends a Go value of one of the types AMQP messages built
// here carry: nil, bool, int8/16/32/64, int, uint8/16/32/64, float32/64,
// string, []byte, time.Time, Symbol, []string (an array of symbols) and
// map[string]any (a map with string keys).
func AppendValue(b []byte, v any) ([]byte, error) {
	switch t := v.(type) {
	case nil:
		return append(b, tNull), nil
	case bool:
		return AppendBool(b, t), nil
	case int8:
		return append(b, tByte, byte(t)), nil
	case int16:
		return binary.BigEndian.AppendUint16(append(b, tShort), uint16(t)), nil
	case int32:
		if t >= -128 && t < 128 {
			return append(b, tSmallInt, byte(t)), nil
		}
		return binary.BigEndian.AppendUint32(append(b, tInt), uint32(t)), nil
	case int64:
		return appendLong(b, t), nil
	case int:
		return appendLong(b, int64(t)), nil
	case uint8:
		return append(b, tUbyte, t), nil
	case uint16:
		return binary.BigEndian.AppendUint16(append(b, tUshort), t), nil
	case uint32:
		return AppendUint(b, t), nil
	case uint64:
		return AppendUlong(b, t), nil
	case float32:
		return binary.BigEndian.AppendUint32(append(b, tFloat), math.Float32bits(t)), nil
	case float64:
		return binary.BigEndian.AppendUint64(append(b, tDouble), math.Float64bits(t)), nil
	case string:
		return AppendString(b, t)
	case Symbol:
		return AppendSymbol(b, string(t)), nil
	case []byte:
		return AppendBinary(b, t), nil
	case time.Time:
		return AppendTimestamp(b, t), nil
	case []string:
		return AppendSymbolArray(b, t), nil
	case map[string]any:
		return AppendStringMap(b, t)
	}
	return b, fmt.Errorf("cannot encode a value of type %T in AMQP", v)
}

// Symbol is an AMQP symbol value.
type Symbol string

func appendLong(b []byte, n int64) []byte {
	if n >= -128 && n < 128 {
		return append(b, tSmallLong, byte(n))
	}
	return binary.BigEndian.AppendUint64(append(b, tLong), uint64(n))
}

// AppendStringMap appends a map32 with string keys, as go-amqp encodes
// application-properties and map bodies (in map iteration order).
func AppendStringMap(b []byte, m map[string]any) ([]byte, error) {
	b, start := beginMap(b)
	var err error
	for k, v := range m {
		if b, err = AppendString(b, k); err != nil {
			return b, fmt.Errorf("map key: %w", err)
		}
		if b, err = AppendValue(b, v); err != nil {
			return b, fmt.Errorf("map entry %q: %w", k, err)
		}
	}
	return endMap(b, start, 2*len(m)), nil
}

// beginMap writes a map32 constructor with placeholders for its size and
// count; endMap fills them in.
func beginMap(b []byte) ([]byte, int) {
	b = append(b, tMap32, 0, 0, 0, 0, 0, 0, 0, 0)
	return b, len(b) - 8
}

func endMap(b []byte, start, count int) []byte {
	binary.BigEndian.PutUint32(b[start:], uint32(len(b)-start-4))
	binary.BigEndian.PutUint32(b[start+4:], uint32(count))
	return b
}

// AppendSymbolArray appends an array of symbols (null when empty), as go-amqp
// encodes capabilities and mechanisms.
func AppendSymbolArray(b []byte, syms []string) []byte {
	if len(syms) == 0 {
		return append(b, tNull)
	}
	long := false
	size := 0
	for _, s := range syms {
		size += len(s)
		if len(s) > 255 {
			long = true
		}
	}
	elem, width := byte(tSym8), 1
	if long {
		elem, width = tSym32, 4
	}
	size += len(syms) * width
	if size+2 <= 255 {
		b = append(b, tArray8, byte(size+2), byte(len(syms)), elem)
	} else {
		b = binary.BigEndian.AppendUint32(append(b, tArray32), uint32(size+5))
		b = binary.BigEndian.AppendUint32(b, uint32(len(syms)))
		b = append(b, elem)
	}
	for _, s := range syms {
		if long {
			b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
		} else {
			b = append(b, byte(len(s)))
		}
		b = append(b, s...)
	}
	return b
}

// composite writes a described list the way go-amqp does: list32, omitted
// fields as null, trailing omitted fields left out, list0 when none is set.
type composite struct {
	b      []byte
	start  int // offset of the descriptor
	size   int // offset of the list's size field
	count  int
	nulls  int // omitted fields not written yet
	opened bool
}

func beginComposite(b []byte, code byte) composite {
	c := composite{b: b, start: len(b)}
	c.b = append(c.b, 0x00, tSmallUlong, code, tList32, 0, 0, 0, 0, 0, 0, 0, 0)
	c.size = c.start + 4
	return c
}

// omit records an absent field.
func (c *composite) omit() { c.nulls++ }

// field prepares for a present field, writing the nulls before it.
func (c *composite) field() {
	for ; c.nulls > 0; c.nulls-- {
		c.b = append(c.b, tNull)
		c.count++
	}
	c.count++
}

func (c *composite) uint(n uint32)   { c.field(); c.b = AppendUint(c.b, n) }
func (c *composite) ulong(n uint64)  { c.field(); c.b = AppendUlong(c.b, n) }
func (c *composite) bool(v bool)     { c.field(); c.b = AppendBool(c.b, v) }
func (c *composite) symbol(s string) { c.field(); c.b = AppendSymbol(c.b, s) }
func (c *composite) ubyte(v uint8)   { c.field(); c.b = append(c.b, tUbyte, v) }
func (c *composite) ushort(v uint16) {
	c.field()
	c.b = binary.BigEndian.AppendUint16(append(c.b, tUshort), v)
}
func (c *composite) binary(p []byte) { c.field(); c.b = AppendBinary(c.b, p) }
func (c *composite) symbols(s []string) {
	if len(s) == 0 {
		c.omit()
		return
	}
	c.field()
	c.b = AppendSymbolArray(c.b, s)
}

// str appends a string field; an invalid one is written as null and
// reported by the returned error.
func (c *composite) str(s string) error {
	c.field()
	var err error
	c.b, err = AppendString(c.b, s)
	return err
}

func (c *composite) optStr(s string) error {
	if s == "" {
		c.omit()
		return nil
	}
	return c.str(s)
}

// raw appends a field whose encoding the caller writes with fn.
func (c *composite) raw(fn func(b []byte) []byte) { c.field(); c.b = fn(c.b) }

func (c *composite) end() []byte {
	if c.count == 0 {
		c.b = append(c.b[:c.start+3], tList0)
		return c.b
	}
	binary.BigEndian.PutUint32(c.b[c.size:], uint32(len(c.b)-c.size-4))
	binary.BigEndian.PutUint32(c.b[c.size+4:], uint32(c.count))
	return c.b
}
