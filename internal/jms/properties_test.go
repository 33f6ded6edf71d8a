package jms

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/Azure/go-amqp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValidatePropertyName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"orderId", true},
		{"_x", true},
		{"$cost", true},
		{"région2", true},
		{"JMS_IBM_Format", true},
		{"", false},
		{"2fast", false},
		{"has-dash", false},
		{"has.dot", false},
		{"with space", false},
		{"NULL", false},
		{"between", false},
		{"JMSType", false},
		{"JMSXGroupID", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidatePropertyName(tc.name)
			if tc.ok {
				assert.NoError(t, err)
			} else {
				require.Error(t, err)
				if tc.name != "" {
					assert.Contains(t, err.Error(), tc.name)
				}
			}
		})
	}
}

type stringer struct{}

func (stringer) String() string { return "stringer!" }

func TestPropertyValue(t *testing.T) {
	ts := time.UnixMilli(1700000000123)
	uuid := amqp.UUID{0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0}
	tests := []struct {
		name string
		in   any
		want any
	}{
		{"string", "s", "s"},
		{"bool", true, true},
		{"int", 5, int64(5)},
		{"int8", int8(-1), int8(-1)},
		{"int16", int16(-2), int16(-2)},
		{"int32", int32(-3), int32(-3)},
		{"int64", int64(-4), int64(-4)},
		{"uint8 widens", uint8(255), int16(255)},
		{"uint16 widens", uint16(65535), int32(65535)},
		{"uint32 widens", uint32(math.MaxUint32), int64(math.MaxUint32)},
		{"uint64 fits", uint64(7), int64(7)},
		{"uint64 too big", uint64(math.MaxUint64), "18446744073709551615"},
		{"float32", float32(0.5), float32(0.5)},
		{"float64", 0.25, 0.25},
		{"nil", nil, nil},
		{"json integer", json.Number("12"), int64(12)},
		{"json float", json.Number("1.5"), 1.5},
		{"timestamp as epoch ms", ts, int64(1700000000123)},
		{"uuid as text", uuid, "12345678-9abc-def0-1234-56789abcdef0"},
		{"raw 16 bytes as uuid text", [16]byte(uuid), "12345678-9abc-def0-1234-56789abcdef0"},
		{"utf8 bytes as string", []byte("hi"), "hi"},
		{"stringer", stringer{}, "stringer!"},
		{"duration is a stringer", 1500 * time.Millisecond, "1.5s"},
		{"error", errors.New("boom"), "boom"},
		{"nested map as JSON", map[string]any{"a": []any{1, "x"}}, `{"a":[1,"x"]}`},
		{"slice as JSON", []any{1, 2}, `[1,2]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PropertyValue(tc.in)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			// Whatever comes out must encode as an AMQP primitive that is a
			// JMS property type.
			switch got.(type) {
			case nil, string, bool, int8, int16, int32, int64, float32, float64:
			default:
				t.Fatalf("%T is not a JMS property type", got)
			}
		})
	}

	_, err := PropertyValue([]byte{0xff})
	assert.Error(t, err)
}

func TestProperties(t *testing.T) {
	got, err := Properties(map[string]any{"a": uint8(1), "when": time.UnixMilli(5)})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"a": int16(1), "when": int64(5)}, got)

	_, err = Properties(map[string]any{"bad-name": 1})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bad-name")

	_, err = Properties(map[string]any{"blob": []byte{0xff}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"blob"`)

	got, err = Properties(nil)
	require.NoError(t, err)
	assert.Nil(t, got)
}

func TestMapBody(t *testing.T) {
	var structured any
	require.NoError(t, func() error {
		d := json.NewDecoder(strings.NewReader(`{"s":"x","i":42,"f":1.5,"b":true,"n":null,"big":9007199254740993}`))
		d.UseNumber()
		return d.Decode(&structured)
	}())
	got, err := MapBody(structured)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{
		"s": "x", "i": int64(42), "f": 1.5, "b": true, "n": nil,
		"big": int64(9007199254740993), // exact: not rounded through float64
	}, got)

	tests := []struct {
		name string
		in   any
		want string
	}{
		{"array payload", []any{1}, "object payload"},
		{"string payload", "x", "object payload"},
		{"nested object", map[string]any{"o": map[string]any{}}, `map entry "o": a nested object`},
		{"array value", map[string]any{"l": []any{1}}, `map entry "l": an array`},
		{"uint64 too big", map[string]any{"u": uint64(math.MaxUint64)}, "Java long"},
		{"empty key", map[string]any{"": 1}, "cannot be empty"},
		{"unsupported", map[string]any{"c": make(chan int)}, "chan int"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := MapBody(tc.in)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
