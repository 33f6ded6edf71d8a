package amqpwire

import (
	"fmt"
	"math"
)

// OpenCapabilities and SASLOutcomeCode read one performative of a
// connection this package does not run: the jms input's go-amqp connection,
// whose offered capabilities and SASL outcome go-amqp does not expose, is
// watched on the wire by internal/jms's open sniffer. They use this
// package's bounds-checked decoder, so there is one AMQP decoder in the
// project rather than a second, hand-written one for the sniffer.

// OpenCapabilities returns the offered-capabilities (field 7) of the open
// performative in body, a frame body (the bytes after the frame header).
func OpenCapabilities(body []byte) ([]string, error) {
	code, v, err := described(body)
	if err != nil {
		return nil, err
	}
	if code != codeOpen {
		return nil, fmt.Errorf("amqp: expected open, got performative %#x", code)
	}
	items, err := listItems(v, maxFields, nil)
	f := fields(items)
	if err != nil {
		return nil, err
	}
	return f.symbols(7)
}

// SASLOutcomeCode returns the code (0 ok, 1 auth, 2 sys, 3 sys-perm,
// 4 sys-temp) of the sasl-outcome performative in body, a SASL frame body,
// and whether body held one.
func SASLOutcomeCode(body []byte) (uint8, bool) {
	code, v, err := described(body)
	if err != nil || code != codeSASLOutcome {
		return 0, false
	}
	items, err := listItems(v, maxFields, nil)
	f := fields(items)
	if err != nil || f.get(0) == nil {
		return 0, false
	}
	c, err := f.uint(0, math.MaxUint32)
	if err != nil || c > math.MaxUint8 {
		return 0, false
	}
	return uint8(c), true
}
