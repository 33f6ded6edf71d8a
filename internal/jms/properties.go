package jms

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/connect-solace/connect-solace/internal/widen"
)

// selectorReserved are the words a JMS message selector reserves; a property
// with one of these names could never be selected on (JMS 2.0, 3.8.1.1).
var selectorReserved = map[string]bool{
	"NULL": true, "TRUE": true, "FALSE": true, "NOT": true, "AND": true, "OR": true,
	"BETWEEN": true, "LIKE": true, "IN": true, "IS": true, "ESCAPE": true,
}

// ValidatePropertyName checks that name is a legal JMS property name: a Java
// identifier that is not a selector keyword and does not use the JMS-reserved
// "JMS" prefix (vendor "JMS_" properties are allowed). JMS consumers reject or
// silently drop properties with other names.
func ValidatePropertyName(name string) error {
	if name == "" {
		return fmt.Errorf("JMS property name is empty")
	}
	for i, r := range name {
		ok := r == '_' || r == '$' || unicode.IsLetter(r)
		if i > 0 {
			ok = ok || unicode.IsDigit(r)
		}
		if !ok {
			return fmt.Errorf("JMS property name %q is not a Java identifier (character %q at offset %d): use letters, digits, '_' and '$', not starting with a digit", name, r, i)
		}
	}
	if selectorReserved[strings.ToUpper(name)] {
		return fmt.Errorf("JMS property name %q is a reserved message selector word", name)
	}
	if strings.HasPrefix(name, "JMS") && !strings.HasPrefix(name, "JMS_") {
		return fmt.Errorf("JMS property name %q uses the prefix JMS, which the JMS specification reserves; set JMS headers through the output's fields (e.g. group_id for JMSXGroupID)", name)
	}
	return nil
}

// PropertyValue converts v to a type a JMS property can hold: string, bool,
// int8/16/32/64, float32/64 or nil. Brokers convert a message carrying an
// application property of any other AMQP type (timestamp, uuid, binary, list,
// map) into an opaque BytesMessage, so nothing else may reach the wire:
//   - unsigned integers widen to the next signed type (uint64 beyond int64
//     becomes its decimal string);
//   - time.Time becomes milliseconds since the epoch, as JMSTimestamp is;
//   - a 16-byte UUID and any fmt.Stringer become their string form;
//   - []byte must be UTF-8 and becomes a string;
//   - maps, slices and structs become their JSON text.
func PropertyValue(v any) (any, error) {
	if w, ok := javaInt(v); ok {
		return w, nil
	}
	switch t := v.(type) {
	case nil, string, bool, int8, int16, int32, int64, float32, float64:
		return t, nil
	case json.Number:
		if n, err := widen.Number(t); err == nil {
			return n, nil
		}
		return t.String(), nil
	case time.Time:
		return t.UnixMilli(), nil
	case *time.Time:
		if t == nil {
			return nil, nil
		}
		return t.UnixMilli(), nil
	case []byte:
		if !utf8.Valid(t) {
			return nil, fmt.Errorf("binary value is not UTF-8 text; JMS properties cannot carry bytes")
		}
		return string(t), nil
	case [16]byte:
		return uuidString(t), nil
	case fmt.Stringer:
		return t.String(), nil
	case error:
		return t.Error(), nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.String:
		return rv.String(), nil
	case reflect.Bool:
		return rv.Bool(), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int(), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return unsignedValue(rv.Uint()), nil
	case reflect.Float32, reflect.Float64:
		return rv.Float(), nil
	case reflect.Array:
		if rv.Len() == 16 && rv.Type().Elem().Kind() == reflect.Uint8 {
			var u [16]byte
			reflect.Copy(reflect.ValueOf(u[:]), rv)
			return uuidString(u), nil
		}
	case reflect.Pointer:
		if rv.IsNil() {
			return nil, nil
		}
		return PropertyValue(rv.Elem().Interface())
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("value of type %T cannot be carried as a JMS property: %w", v, err)
	}
	return string(b), nil
}

// javaInt widens the Go integers Java has no type of the same width and
// sign for to the smallest Java type that holds them: int and uint32 to a
// long, uint8 to a short, uint16 to an int.
func javaInt(v any) (any, bool) {
	switch t := v.(type) {
	case int:
		return int64(t), true
	case uint8:
		return int16(t), true
	case uint16:
		return int32(t), true
	case uint32:
		return int64(t), true
	}
	return nil, false
}

func unsignedValue(u uint64) any {
	if u > math.MaxInt64 {
		return fmt.Sprint(u)
	}
	return int64(u)
}

func uuidString(u [16]byte) string {
	var buf [36]byte
	putUUID(buf[:], u)
	return string(buf[:])
}

// putUUID writes u's canonical 36-character text form into dst[:36], so a
// caller can build a longer string around it in one allocation.
func putUUID(dst []byte, u [16]byte) {
	hex.Encode(dst[0:8], u[0:4])
	dst[8] = '-'
	hex.Encode(dst[9:13], u[4:6])
	dst[13] = '-'
	hex.Encode(dst[14:18], u[6:8])
	dst[18] = '-'
	hex.Encode(dst[19:23], u[8:10])
	dst[23] = '-'
	hex.Encode(dst[24:36], u[10:])
}

// Properties validates names and converts values of a property set, naming
// the offending property in any error.
func Properties(in map[string]any) (map[string]any, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := make(map[string]any, len(in))
	for k, v := range in {
		if err := ValidatePropertyName(k); err != nil {
			return nil, err
		}
		cv, err := PropertyValue(v)
		if err != nil {
			return nil, fmt.Errorf("JMS property %q: %w", k, err)
		}
		if s, ok := cv.(string); ok && !utf8.ValidString(s) {
			return nil, fmt.Errorf("JMS property %q: value is not valid UTF-8, which AMQP strings must be: fix or drop the metadata value, or leave the key out of metadata", k)
		}
		out[k] = cv
	}
	return out, nil
}

// MapBody checks that v is an object whose entries a JMS MapMessage can carry
// and returns it in the form the encoder writes as an AMQP map with string keys:
// string, bool, signed integers, float32/64, []byte (byte[]) and nil. JSON
// numbers become int64 when integral, else float64. Nested objects and arrays
// have no MapMessage representation and are rejected with the entry's name.
func MapBody(v any) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("a JMS MapMessage needs an object payload, got %s", describe(v))
	}
	out := make(map[string]any, len(m))
	for k, ev := range m {
		if k == "" {
			return nil, fmt.Errorf("a JMS MapMessage entry name cannot be empty")
		}
		cv, err := mapValue(ev)
		if err != nil {
			return nil, fmt.Errorf("map entry %q: %w", k, err)
		}
		out[k] = cv
	}
	return out, nil
}

func mapValue(v any) (any, error) {
	if w, ok := javaInt(v); ok {
		return w, nil
	}
	switch t := v.(type) {
	case nil, string, bool, int8, int16, int32, int64, float32, float64, []byte:
		return t, nil
	case uint, uint64:
		u := reflect.ValueOf(t).Uint()
		if u > math.MaxInt64 {
			return nil, fmt.Errorf("%d does not fit a Java long", u)
		}
		return int64(u), nil
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i, nil
		}
		f, err := t.Float64()
		if err != nil {
			return nil, fmt.Errorf("number %s does not fit a Java long or double", t)
		}
		return f, nil
	case time.Time:
		return t.UnixMilli(), nil
	case map[string]any, []any:
		return nil, fmt.Errorf("%s cannot be carried by a JMS MapMessage, which holds only primitives, strings and byte arrays: flatten it, or send it as JSON with message_type: text", describe(v))
	}
	return nil, fmt.Errorf("%s cannot be carried by a JMS MapMessage", describe(v))
}

func describe(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "a nested object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number, float64, int64:
		return "a number"
	case bool:
		return "a boolean"
	}
	return fmt.Sprintf("a value of type %T", v)
}
