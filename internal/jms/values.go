package jms

import (
	"fmt"
	"strconv"
	"strings"
)

// Parsers for the header values a component takes as (interpolated) strings,
// shared so a static value is checked at start-up by the same code that
// checks a dynamic one per message.

// ParsePriority reads a JMSPriority, 0 to 9.
func ParsePriority(s string) (uint8, error) {
	p, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || p < 0 || p > 9 {
		return 0, fmt.Errorf("JMS priority must be an integer from 0 to 9, got %q", s)
	}
	return uint8(p), nil
}

// ParseGroupSequence reads a JMSXGroupSeq, an unsigned 32-bit integer; empty
// means not set.
func ParseGroupSequence(s string) (*uint32, error) {
	if s == "" {
		return nil, nil
	}
	n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 32)
	if err != nil {
		return nil, fmt.Errorf("group_sequence must be an unsigned 32-bit integer, got %q", s)
	}
	seq := uint32(n)
	return &seq, nil
}
