package session

// This file is structured payloads on the way out: a message's payload sent
// as an SDT string, map or stream, which Solace JMS consumers read as a
// TextMessage, MapMessage or StreamMessage and the Go client through
// GetPayloadAsString, GetPayloadAsMap or GetPayloadAsStream.

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/connect-solace/connect-solace/internal/widen"
	"solace.dev/go/messaging/pkg/solace/message/sdt"
)

// PayloadType is the SDT form an Outbound's payload is sent in.
type PayloadType uint8

// Payload types.
const (
	// PayloadBytes sends Outbound.Payload as a binary attachment.
	PayloadBytes PayloadType = iota
	// PayloadString sends Outbound.Payload as an SDT string (UTF-8).
	PayloadString
	// PayloadMap sends Outbound.Body, a map[string]any, as an SDT map.
	PayloadMap
	// PayloadStream sends Outbound.Body, a []any, as an SDT stream.
	PayloadStream
)

// ToSDT converts a structured value (as Benthos or encoding/json make them)
// to SDT. The rule, which keeps the types JSON loses: integers (Go integer
// types, and json.Number or float64 values that are whole and fit) become
// int64, other numbers float64, strings, booleans and nil stay, []byte
// becomes a byte array, objects maps and arrays streams, recursively. Other
// values are an error naming their path.
func ToSDT(v any) (sdt.Data, error) { return toSDT(v, "") }

func toSDT(v any, path string) (sdt.Data, error) {
	switch t := v.(type) {
	case nil, bool, string, int64, []byte:
		return t, nil
	case int, int32, int16, int8, uint8, uint16, uint32:
		i, _ := widen.Int64(t)
		return i, nil
	case uint64:
		return t, nil
	case float32:
		return wholeOrFloat(float64(t)), nil
	case float64:
		return wholeOrFloat(t), nil
	case json.Number:
		n, err := widen.Number(t)
		if err != nil {
			return nil, fmt.Errorf("%s: number %q: %w", pathOr(path), t, err)
		}
		return n, nil
	case map[string]any:
		m := make(sdt.Map, len(t))
		for k, e := range t {
			c, err := toSDT(e, path+"."+k)
			if err != nil {
				return nil, err
			}
			m[k] = c
		}
		return m, nil
	case []any:
		s := make(sdt.Stream, len(t))
		for i, e := range t {
			c, err := toSDT(e, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			s[i] = c
		}
		return s, nil
	}
	return nil, fmt.Errorf("%s: a %T has no SDT form", pathOr(path), v)
}

// wholeOrFloat keeps an integer that JSON decoding made a float64 an
// integer.
func wholeOrFloat(f float64) any {
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return int64(f)
	}
	return f
}

func pathOr(p string) string {
	if p == "" {
		return "the payload"
	}
	return "the payload at " + p[min(1, len(p)):]
}
