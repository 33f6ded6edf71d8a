package ttl

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr string
	}{
		{"", 0, ""},
		{"0", 0, ""},
		{"1500", 1500 * time.Millisecond, ""},
		{" 30s ", 30 * time.Second, ""},
		{" 1h ", time.Hour, ""},
		{"-5000", 0, "ttl cannot be negative"},
		{"-5s", 0, "0 or more"},
		{"-5s", 0, "ttl cannot be negative"},
		{"soon", 0, "neither a duration nor milliseconds"},
		{"soon", 0, "ttl must be a duration"},
		{"9223372036854775807", 0, "too large"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := Parse(tc.in)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}
