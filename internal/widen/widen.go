// Package widen holds the rules by which the protocol layers widen numbers:
// a Go integer of any width to an int64 (internal/jms reads AMQP
// annotations with it, internal/session SDT values and user properties),
// and a JSON number to an int64 or a float64 (both layers' conversions of
// structured values). Neither layer may import the other, so the rules live
// here.
package widen

import (
	"encoding/json"
	"math"
	"reflect"
)

// Int64 returns v as an int64 when v is a Go integer (of any width or
// sign, named types included) whose value an int64 holds: every signed one,
// and an unsigned one up to math.MaxInt64.
func Int64(v any) (int64, bool) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int(), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if u := rv.Uint(); u <= math.MaxInt64 {
			return int64(u), true
		}
	}
	return 0, false
}

// Number returns a JSON number as an int64 when it is an integer that fits,
// else as a float64; the error is json.Number's own when it is neither.
func Number(n json.Number) (any, error) {
	if i, err := n.Int64(); err == nil {
		return i, nil
	}
	return n.Float64()
}
