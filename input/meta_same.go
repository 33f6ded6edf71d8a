package input

import (
	"math"
	"time"
)

// sameMetaValue reports whether two metadata values are identical, so that
// leaving a template's value in place changes nothing: the same type and the
// same value as == sees it (a float bit for bit, a time.Time also in its
// location and monotonic reading). It is false for types without a cheap
// equality (byte slices, maps, lists), so those are always set. The solace
// and jms inputs' metadata templates both use it.
func sameMetaValue(a, b any) bool {
	switch av := a.(type) {
	case string:
		bv, ok := b.(string)
		return ok && av == bv
	case int64:
		bv, ok := b.(int64)
		return ok && av == bv
	case bool:
		bv, ok := b.(bool)
		return ok && av == bv
	case int32:
		bv, ok := b.(int32)
		return ok && av == bv
	case int8:
		bv, ok := b.(int8)
		return ok && av == bv
	case int16:
		bv, ok := b.(int16)
		return ok && av == bv
	case uint8:
		bv, ok := b.(uint8)
		return ok && av == bv
	case uint16:
		bv, ok := b.(uint16)
		return ok && av == bv
	case uint32:
		bv, ok := b.(uint32)
		return ok && av == bv
	case uint64:
		bv, ok := b.(uint64)
		return ok && av == bv
	case float32:
		// Bitwise, so -0 and 0 (equal as numbers) stay apart.
		bv, ok := b.(float32)
		return ok && math.Float32bits(av) == math.Float32bits(bv)
	case float64:
		bv, ok := b.(float64)
		return ok && math.Float64bits(av) == math.Float64bits(bv)
	case time.Time:
		bv, ok := b.(time.Time)
		return ok && av == bv
	case nil:
		return b == nil
	}
	return false
}
