package redact

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestURL(t *testing.T) {
	tests := []struct {
		name, in, want string
		userinfo       bool
	}{
		{name: "no userinfo", in: "amqp://broker:5672", want: "amqp://broker:5672"},
		{name: "no scheme no userinfo", in: "broker:5672", want: "broker:5672"},
		{name: "user only", in: "amqp://app@broker:5672", want: "amqp://app@broker:5672", userinfo: true},
		{name: "user and password", in: "amqp://app:s3cret@broker:5672/vhost", want: "amqp://app:xxxxx@broker:5672/vhost", userinfo: true},
		{name: "empty password", in: "tcp://app:@broker", want: "tcp://app:xxxxx@broker", userinfo: true},
		{name: "at sign in password", in: "amqp://app:p@ss@broker", want: "amqp://app:xxxxx@broker", userinfo: true},
		{name: "slash in password", in: "amqp://app:pa/ss@broker", want: "amqp://app:xxxxx@broker", userinfo: true},
		{name: "unparsable", in: "amqp://app:s3cret@bro ker:1", want: "amqp://app:xxxxx@bro ker:1", userinfo: true},
		{name: "no scheme", in: "app:s3cret@broker:55555", want: "app:xxxxx@broker:55555", userinfo: true},
		{name: "at sign only before scheme", in: "a@b://c", want: "a@b://c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, URL(tt.in))
			require.Equal(t, tt.userinfo, HasUserinfo(tt.in))
		})
	}
	require.Equal(t, []string{"tcp://a:xxxxx@h", "tcp://h"}, URLs([]string{"tcp://a:b@h", "tcp://h"}))
}

// TestURLAgreesWithNetURL checks that for well-formed URLs the result is what
// net/url's Redacted gives, so logs read the same as Benthos's own.
func TestURLAgreesWithNetURL(t *testing.T) {
	for _, in := range []string{
		"amqps://user:secret@broker.example.com:5671",
		"http://admin:admin@127.0.0.1:8080/SEMP/v2",
		"tcp://broker:55555",
		"tcp://user@broker:55555",
	} {
		u, err := url.Parse(in)
		require.NoError(t, err)
		require.Equal(t, u.Redacted(), URL(in), in)
	}
}

// FuzzURL checks that URL never panics and that redacting twice changes
// nothing more, so an already-redacted URL logs as it is.
func FuzzURL(f *testing.F) {
	f.Add("amqp://user:secret@host:1")
	f.Add("tcp://@")
	f.Add("://:@")
	f.Fuzz(func(t *testing.T, in string) {
		once := URL(in)
		require.Equal(t, once, URL(once))
		require.Equal(t, HasUserinfo(in), HasUserinfo(once))
	})
}
