package jms

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/connect-solace/connect-solace/internal/ttl"
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

// ParseTTL reads a time to live: a duration such as 30s, or milliseconds.
// Empty or 0 means never expire; a negative value is an error. It is
// ttl.Parse, which the solace output shares.
func ParseTTL(s string) (time.Duration, error) { return ttl.Parse(s) }

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
