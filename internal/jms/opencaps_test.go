package jms

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"testing/iotest"

	"github.com/connect-solace/connect-solace/internal/amqpwire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// frame wraps body in an AMQP frame header of the given type (0 AMQP, 1 SASL).
func frame(ftype byte, body []byte) []byte {
	out := make([]byte, 8, 8+len(body))
	binary.BigEndian.PutUint32(out, uint32(8+len(body)))
	out[4], out[5] = 2, ftype
	return append(out, body...)
}

func sym8(s string) []byte { return append([]byte{0xa3, byte(len(s))}, s...) }

// symArray8 is an array8 of sym8 elements.
func symArray8(ss ...string) []byte {
	var elems []byte
	for _, s := range ss {
		elems = append(elems, byte(len(s)))
		elems = append(elems, s...)
	}
	payload := append([]byte{byte(len(ss)), 0xa3}, elems...)
	return append([]byte{0xe0, byte(len(payload))}, payload...)
}

// openBody encodes an open performative whose offered-capabilities field
// holds caps (nil: the list stops before it).
func openBody(caps []byte, extra ...[]byte) []byte {
	fields := [][]byte{
		append([]byte{0xa1, 1}, 'c'), // container-id
		{0x40},                       // hostname
		{0x70, 0, 0, 0x10, 0},        // max-frame-size uint
		{0x60, 0xff, 0xff},           // channel-max ushort
		{0x00, 0x53, 0x01, 0x43},     // a described value, to be skipped
		{0xe0, 4, 1, 0xa3, 1, 'x'},   // outgoing-locales
		{0xb1, 0, 0, 0, 2, 'e', 'n'}, // incoming-locales (str32, skipped)
	}
	if caps != nil {
		fields = append(fields, caps)
		fields = append(fields, extra...)
	}
	var list []byte
	for _, f := range fields {
		list = append(list, f...)
	}
	body := []byte{0x00, 0x53, 0x10, 0xd0}
	body = binary.BigEndian.AppendUint32(body, uint32(4+len(list)))
	body = binary.BigEndian.AppendUint32(body, uint32(len(fields)))
	return append(body, list...)
}

func brokerStream(open []byte) []byte {
	var b bytes.Buffer
	b.WriteString("AMQP\x03\x01\x00\x00")
	b.Write(frame(1, []byte{0x00, 0x53, 0x40, 0x45})) // sasl-mechanisms
	b.Write(frame(1, []byte{0x00, 0x53, 0x44, 0x45})) // sasl-outcome
	b.WriteString("AMQP\x00\x01\x00\x00")
	b.Write(frame(0, nil)) // an empty frame (heartbeat)
	b.Write(frame(0, open))
	b.Write(frame(0, []byte{0x00, 0x53, 0x11, 0x45})) // begin, after the open
	return b.Bytes()
}

type readerConn struct {
	net.Conn
	r io.Reader
}

func (c readerConn) Read(p []byte) (int, error) { return c.r.Read(p) }

func TestOpenSniffer(t *testing.T) {
	tests := []struct {
		name string
		open []byte
		want []string
	}{
		{"array of symbols", openBody(symArray8(CapAnonymousRelay, "DELAYED_DELIVERY")), []string{CapAnonymousRelay, "DELAYED_DELIVERY"}},
		{"single symbol", openBody(sym8(CapAnonymousRelay), []byte{0x40}, []byte{0xc1, 1, 0}), []string{CapAnonymousRelay}},
		{"null", openBody([]byte{0x40}), nil},
		{"list ends before the field", openBody(nil), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stream := brokerStream(tc.open)
			// One byte at a time: frames arrive split across reads.
			s := newOpenSniffer(readerConn{r: iotest.OneByteReader(bytes.NewReader(stream))})
			got, err := io.ReadAll(s)
			require.NoError(t, err)
			assert.Equal(t, stream, got, "the sniffer must pass bytes through unchanged")
			caps, ok := s.OfferedCapabilities()
			assert.True(t, ok)
			assert.Equal(t, tc.want, caps)
		})
	}
}

func TestOpenSnifferMalformed(t *testing.T) {
	stream := append([]byte("AMQP\x00\x01\x00\x00"), 0, 0, 0, 3, 2, 0, 0, 0)
	s := newOpenSniffer(readerConn{r: bytes.NewReader(stream)})
	got, err := io.ReadAll(s)
	require.NoError(t, err)
	assert.Equal(t, stream, got)
	_, ok := s.OfferedCapabilities()
	assert.False(t, ok)
}

func FuzzDecodeOpenCapabilities(f *testing.F) {
	f.Add(openBody(symArray8(CapAnonymousRelay)))
	f.Add(openBody(sym8("x")))
	f.Add([]byte{0x00, 0x53, 0x10, 0xc0, 0x01, 0x09})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = amqpwire.OpenCapabilities(b) // must not panic
	})
}
