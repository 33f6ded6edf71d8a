package output

import (
	"fmt"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connect-solace/connect-solace/internal/session"
)

// This file is payload_type: sending a message's payload as an SDT string,
// map or stream rather than bytes.

const soFieldPayloadType = "payload_type"

// soPayloadTypes are the values of payload_type, the first the default: the
// form each sends the payload in, and its docs.
var soPayloadTypes = []struct {
	name string
	typ  session.PayloadType
	doc  string
}{
	{"bytes", session.PayloadBytes, "The payload's bytes as a binary attachment (JMS `BytesMessage`)."},
	{"string", session.PayloadString, "The payload as an SDT string, which Solace JMS consumers read as a `TextMessage` and the Go client with `GetPayloadAsString`."},
	{"map", session.PayloadMap, "The payload, a JSON object, as an SDT map: a JMS `MapMessage`, the Go client's `GetPayloadAsMap`."},
	{"stream", session.PayloadStream, "The payload, a JSON array, as an SDT stream: a JMS `StreamMessage`, the Go client's `GetPayloadAsStream`."},
}

func soPayloadTypeField() *service.ConfigField {
	docs := map[string]string{}
	for _, p := range soPayloadTypes {
		docs[p.name] = p.doc
	}
	return service.NewStringAnnotatedEnumField(soFieldPayloadType, docs).
		Description("The form the payload is sent in. For `map` and `stream` the message must be structured (a JSON object or array, or the result of a mapping); values keep their types by this rule: whole numbers are sent as 64-bit integers (JSON's `3` stays an integer, not a double), other numbers as doubles, strings, booleans and null as such, bytes as byte arrays, objects as nested maps and arrays as nested streams. A message of another shape fails (and is nacked) naming the problem. The `solace` input reads string payloads back as their text and maps and streams as JSON.").
		Default(soPayloadTypes[0].name).Advanced()
}

// soPayloadType maps payload_type onto the session's form.
func soPayloadType(v string) session.PayloadType {
	for _, p := range soPayloadTypes {
		if p.name == v {
			return p.typ
		}
	}
	return session.PayloadBytes
}

// soPayloadName is the payload_type value of t.
func soPayloadName(t session.PayloadType) string {
	for _, p := range soPayloadTypes {
		if p.typ == t {
			return p.name
		}
	}
	return ""
}

// structuredPayload sets o.Body from msg for payload_type map or stream.
func structuredPayload(msg *service.Message, o *session.Outbound) error {
	v, err := msg.AsStructured()
	if err != nil {
		return fmt.Errorf("field %s: %s needs a structured (JSON) payload: %w", soFieldPayloadType, soPayloadName(o.PayloadType), err)
	}
	switch v.(type) {
	case map[string]any:
		if o.PayloadType != session.PayloadMap {
			return fmt.Errorf("field %s: stream needs a JSON array, got an object", soFieldPayloadType)
		}
	case []any:
		if o.PayloadType != session.PayloadStream {
			return fmt.Errorf("field %s: map needs a JSON object, got an array", soFieldPayloadType)
		}
	default:
		return fmt.Errorf("field %s: %s needs a JSON %s, got %T", soFieldPayloadType, soPayloadName(o.PayloadType),
			map[bool]string{true: "object", false: "array"}[o.PayloadType == session.PayloadMap], v)
	}
	if o.Body, err = session.ToSDT(v); err != nil {
		return fmt.Errorf("field %s: %w", soFieldPayloadType, err)
	}
	return nil
}
