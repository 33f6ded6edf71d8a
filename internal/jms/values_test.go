package jms

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseTTL(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr string
	}{
		{"", 0, ""},
		{"0", 0, ""},
		{"1500", 1500 * time.Millisecond, ""},
		{" 30s ", 30 * time.Second, ""},
		{"-5000", 0, "ttl cannot be negative"},
		{"-5s", 0, "ttl cannot be negative"},
		{"soon", 0, "ttl must be a duration"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseTTL(tc.in)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestMessageIDFormat(t *testing.T) {
	for range 100 {
		assert.Regexp(t, `^ID:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, NewMessageID())
	}
}
