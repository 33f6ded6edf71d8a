package jms

import (
	"net"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDialErrorsRedactURLPassword checks that a password written into a
// broker URL never reaches Dial's errors, for URLs that do not parse as for
// brokers that cannot be reached.
func TestDialErrorsRedactURLPassword(t *testing.T) {
	const secret = "s3cret-in-url"
	// A closed port on loopback: listen, note the address, close.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := ln.Addr().String()
	require.NoError(t, ln.Close())

	tests := []struct{ name, url string }{
		{name: "unparsable", url: "amqp://app:" + secret + "@bro ker:5672"},
		{name: "bad scheme", url: "http://app:" + secret + "@127.0.0.1:5672"},
		{name: "unreachable", url: "amqp://app:" + secret + "@" + closed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Dial(t.Context(), DialConfig{}, tt.url)
			require.Error(t, err)
			require.NotContains(t, err.Error(), secret)
			require.Contains(t, err.Error(), "app:xxxxx@", "the error should still say which URL failed")
		})
	}
}
