package widen

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestInt64(t *testing.T) {
	type level uint8
	for _, tc := range []struct {
		in   any
		want int64
		ok   bool
	}{
		{int(-3), -3, true}, {int8(math.MinInt8), math.MinInt8, true}, {int16(-300), -300, true},
		{int32(math.MaxInt32), math.MaxInt32, true}, {int64(math.MinInt64), math.MinInt64, true},
		{uint(7), 7, true}, {uint8(255), 255, true}, {uint16(65535), 65535, true},
		{uint32(math.MaxUint32), math.MaxUint32, true}, {uint64(math.MaxInt64), math.MaxInt64, true},
		{level(4), 4, true},
		{uint64(math.MaxInt64 + 1), 0, false}, {1.0, 0, false}, {"1", 0, false}, {nil, 0, false}, {true, 0, false},
	} {
		got, ok := Int64(tc.in)
		assert.Equal(t, tc.ok, ok, "%T %v", tc.in, tc.in)
		assert.Equal(t, tc.want, got, "%T %v", tc.in, tc.in)
	}
}

func TestNumber(t *testing.T) {
	for _, tc := range []struct {
		in   json.Number
		want any
	}{
		{"42", int64(42)}, {"-7", int64(-7)}, {"1.5", 1.5}, {"1e3", 1000.0}, {"9223372036854775808", 9223372036854775808.0},
	} {
		got, err := Number(tc.in)
		assert.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
	_, err := Number("x")
	assert.Error(t, err)
}
