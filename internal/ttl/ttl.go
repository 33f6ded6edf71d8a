// Package ttl reads the time to live of an outgoing message as the solace and
// jms outputs take it (an interpolated string), so both accept and refuse the
// same values with the same words.
package ttl

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Parse reads a time to live: a duration such as 30s, or milliseconds.
// Empty or 0 means none (never expire); a negative value is an error.
func Parse(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		if ms < 0 {
			return 0, negative(s)
		}
		if ms > int64(time.Duration(1<<63-1)/time.Millisecond) {
			return 0, fmt.Errorf("ttl %q milliseconds is too large", s)
		}
		return time.Duration(ms) * time.Millisecond, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("ttl must be a duration such as 30s or a number of milliseconds; %q is neither a duration nor milliseconds", s)
	}
	if d < 0 {
		return 0, negative(s)
	}
	return d, nil
}

func negative(s string) error {
	return fmt.Errorf("ttl cannot be negative, got %q: use 0 or more (0 or empty for no expiry), as a duration such as 30s or milliseconds", s)
}
