package amqpwire

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestValueFixedWidth decodes every fixed-width type, in each of its
// encodings, at the edges of its range: the Go type and value, and a
// truncated encoding is an error.
func TestValueFixedWidth(t *testing.T) {
	for _, tc := range []struct {
		enc  []byte
		want any
	}{
		{[]byte{tUbyte, 0xff}, uint8(255)},
		{[]byte{tByte, 0x80}, int8(-128)},
		{[]byte{tByte, 0x7f}, int8(127)},
		{[]byte{tBoolean, 0x01}, true},
		{[]byte{tBoolean, 0x00}, false},
		{[]byte{tUshort, 0xff, 0xfe}, uint16(0xfffe)},
		{[]byte{tShort, 0xff, 0xfe}, int16(-2)},
		{[]byte{tSmallUint, 0xff}, uint32(255)},
		{[]byte{tUint, 0xff, 0xff, 0xff, 0xff}, uint32(math.MaxUint32)},
		{[]byte{tSmallInt, 0xff}, int32(-1)},
		{[]byte{tSmallInt, 0x7f}, int32(127)},
		{[]byte{tInt, 0x80, 0, 0, 0}, int32(math.MinInt32)},
		{[]byte{tSmallUlong, 0xff}, uint64(255)},
		{[]byte{tUlong, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, uint64(math.MaxUint64)},
		{[]byte{tSmallLong, 0x80}, int64(-128)},
		{[]byte{tLong, 0x80, 0, 0, 0, 0, 0, 0, 0}, int64(math.MinInt64)},
		{[]byte{tLong, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe}, int64(-2)},
		{[]byte{tFloat, 0x3f, 0xc0, 0, 0}, float32(1.5)},
		{[]byte{tDouble, 0xc0, 0x04, 0, 0, 0, 0, 0, 0}, -2.5},
		{[]byte{tChar, 0, 0x01, 0xf6, 0x00}, Char('😀')},
		{[]byte{tTimestamp, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, time.UnixMilli(-1).UTC()},
		{[]byte{tTimestamp, 0, 0, 0x01, 0x8b, 0xcf, 0xe5, 0x68, 0x00}, time.UnixMilli(1700000000000).UTC()},
		{append([]byte{tUUID}, "0123456789abcdef"...), UUID([]byte("0123456789abcdef"))},
	} {
		t.Run(fmt.Sprintf("%#02x %v", tc.enc[0], tc.want), func(t *testing.T) {
			got, err := Value(tc.enc)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			_, err = Value(tc.enc[:len(tc.enc)-1])
			assert.ErrorIs(t, err, errShort)
		})
	}
	for _, enc := range [][]byte{{tDecimal32, 0, 0, 0, 0}, {tDecimal64, 0, 0, 0, 0, 0, 0, 0, 0}, {tDecimal128}} {
		_, err := Value(enc)
		assert.ErrorIs(t, err, errDecimal)
	}
	_, err := Value([]byte{tDecimal32, 0})
	assert.ErrorIs(t, err, errShort, "a truncated decimal32 is short before it is unsupported")
}
