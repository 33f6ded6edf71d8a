package jms

import (
	"encoding/binary"
	"errors"
	"net"
	"sync"
)

// go-amqp exposes the peer's open-frame properties but not its
// offered-capabilities, which is where a broker says it supports
// ANONYMOUS-RELAY. openSniffer sits between go-amqp and the network and
// decodes the broker's open frame as it passes by, then steps aside.

// CapAnonymousRelay is the connection capability for sender links without a
// target address whose messages carry their own `to`.
const CapAnonymousRelay = "ANONYMOUS-RELAY"

// maxSniff bounds what the sniffer buffers before giving up; SASL frames and
// an open frame are far smaller.
const maxSniff = 64 << 10

type openSniffer struct {
	net.Conn

	mu   sync.Mutex
	buf  []byte
	done bool
	caps []string
	err  error
	// saslCode is the code of the broker's sasl-outcome frame, -1 until one
	// is seen: go-amqp reports a refused login as plain text, so the code
	// read off the wire is what tells a wrong password from a dead broker.
	saslCode int
}

func newOpenSniffer(c net.Conn) *openSniffer { return &openSniffer{Conn: c, saslCode: -1} }

func (s *openSniffer) Read(p []byte) (int, error) {
	n, err := s.Conn.Read(p)
	if n > 0 {
		s.mu.Lock()
		if !s.done {
			s.buf = append(s.buf, p[:n]...)
			s.scan()
		}
		s.mu.Unlock()
	}
	return n, err
}

// OfferedCapabilities returns what the broker's open frame offered, and
// whether the open frame was seen and decoded.
func (s *openSniffer) OfferedCapabilities() ([]string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caps, s.done && s.err == nil
}

// scan consumes protocol headers and whole frames from buf until it finds
// the AMQP open frame.
func (s *openSniffer) scan() {
	for !s.done {
		if len(s.buf) >= 4 && string(s.buf[:4]) == "AMQP" {
			if len(s.buf) < 8 {
				return
			}
			s.buf = s.buf[8:]
			continue
		}
		if len(s.buf) < 8 {
			if len(s.buf) > maxSniff {
				s.finish(nil, errors.New("no open frame"))
			}
			return
		}
		size := binary.BigEndian.Uint32(s.buf)
		doff := int(s.buf[4]) * 4
		ftype := s.buf[5]
		if size < 8 || doff < 8 || uint32(doff) > size || size > maxSniff {
			s.finish(nil, errors.New("malformed frame header"))
			return
		}
		if uint32(len(s.buf)) < size {
			return
		}
		body := s.buf[doff:size]
		s.buf = s.buf[size:]
		if ftype == 1 {
			if code, ok := decodeSASLOutcome(body); ok {
				s.saslCode = code
			}
			continue
		}
		if len(body) == 0 {
			continue // heartbeat
		}
		caps, err := decodeOpenCapabilities(body)
		s.finish(caps, err)
	}
}

// SASLOutcome returns the code of the broker's sasl-outcome frame (0 ok,
// 1 auth, 2 sys, 3 sys-perm, 4 sys-temp) and whether one was seen.
func (s *openSniffer) SASLOutcome() (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.saslCode, s.saslCode >= 0
}

// decodeSASLOutcome reads the code of a sasl-outcome performative
// (descriptor 0x44, a list whose first field is a ubyte).
func decodeSASLOutcome(b []byte) (int, bool) {
	if len(b) < 3 || b[0] != 0x00 || b[1] != 0x53 || b[2] != 0x44 {
		return 0, false
	}
	b = b[3:]
	switch {
	case len(b) >= 5 && b[0] == 0xc0 && b[3] == 0x50:
		return int(b[4]), true
	case len(b) >= 11 && b[0] == 0xd0 && b[9] == 0x50:
		return int(b[10]), true
	}
	return 0, false
}

func (s *openSniffer) finish(caps []string, err error) {
	s.done, s.caps, s.err, s.buf = true, caps, err, nil
}

var errShort = errors.New("truncated AMQP value")

// decodeOpenCapabilities reads field 7 (offered-capabilities) of an open
// performative: descriptor 0x10, then a list.
func decodeOpenCapabilities(b []byte) ([]string, error) {
	if len(b) < 3 || b[0] != 0x00 {
		return nil, errors.New("not a described performative")
	}
	// Descriptor: smallulong 0x10 or ulong 0x10.
	switch {
	case b[1] == 0x53 && b[2] == 0x10:
		b = b[3:]
	case b[1] == 0x80 && len(b) >= 10 && binary.BigEndian.Uint64(b[2:10]) == 0x10:
		b = b[10:]
	default:
		return nil, errors.New("not an open performative")
	}
	if len(b) < 1 {
		return nil, errShort
	}
	var count int
	switch b[0] {
	case 0x45:
		return nil, nil
	case 0xc0:
		if len(b) < 3 {
			return nil, errShort
		}
		count, b = int(b[2]), b[3:]
	case 0xd0:
		if len(b) < 9 {
			return nil, errShort
		}
		count, b = int(binary.BigEndian.Uint32(b[5:9])), b[9:]
	default:
		return nil, errors.New("open performative is not a list")
	}
	const offeredCapabilities = 7
	for i := 0; i < count && i < offeredCapabilities; i++ {
		n, err := skipValue(b)
		if err != nil {
			return nil, err
		}
		b = b[n:]
	}
	if count <= offeredCapabilities {
		return nil, nil
	}
	return decodeSymbols(b)
}

// decodeSymbols reads a symbol, an array of symbols, or null.
func decodeSymbols(b []byte) ([]string, error) {
	if len(b) < 1 {
		return nil, errShort
	}
	switch b[0] {
	case 0x40:
		return nil, nil
	case 0xa3, 0xb3:
		s, _, err := readSym(b[0], b[1:])
		if err != nil {
			return nil, err
		}
		return []string{s}, nil
	case 0xe0, 0xf0:
		var count int
		if b[0] == 0xe0 {
			if len(b) < 3 {
				return nil, errShort
			}
			count, b = int(b[2]), b[3:]
		} else {
			if len(b) < 9 {
				return nil, errShort
			}
			count, b = int(binary.BigEndian.Uint32(b[5:9])), b[9:]
		}
		if count == 0 {
			return nil, nil
		}
		if len(b) < 1 {
			return nil, errShort
		}
		elem := b[0]
		if elem != 0xa3 && elem != 0xb3 {
			return nil, errors.New("capabilities array does not hold symbols")
		}
		b = b[1:]
		out := make([]string, 0, count)
		for range count {
			s, n, err := readSym(elem, b)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
			b = b[n:]
		}
		return out, nil
	}
	return nil, errors.New("capabilities are not symbols")
}

// readSym reads a symbol body (after its constructor) of width sym8 or sym32.
func readSym(code byte, b []byte) (string, int, error) {
	if code == 0xa3 {
		if len(b) < 1 || len(b) < 1+int(b[0]) {
			return "", 0, errShort
		}
		return string(b[1 : 1+int(b[0])]), 1 + int(b[0]), nil
	}
	if len(b) < 4 {
		return "", 0, errShort
	}
	l := int(binary.BigEndian.Uint32(b))
	if l < 0 || len(b) < 4+l {
		return "", 0, errShort
	}
	return string(b[4 : 4+l]), 4 + l, nil
}

// skipValue returns the encoded length of the AMQP value at the start of b.
// The constructor's high nibble gives the width class (AMQP types 1.6).
func skipValue(b []byte) (int, error) {
	if len(b) < 1 {
		return 0, errShort
	}
	if b[0] == 0x00 { // described: descriptor, then value
		d, err := skipValue(b[1:])
		if err != nil {
			return 0, err
		}
		v, err := skipValue(b[1+d:])
		if err != nil {
			return 0, err
		}
		return 1 + d + v, nil
	}
	var n int
	switch b[0] >> 4 {
	case 0x4:
		n = 1
	case 0x5:
		n = 2
	case 0x6:
		n = 3
	case 0x7:
		n = 5
	case 0x8:
		n = 9
	case 0x9:
		n = 17
	case 0xa, 0xc, 0xe:
		if len(b) < 2 {
			return 0, errShort
		}
		n = 2 + int(b[1])
	case 0xb, 0xd, 0xf:
		if len(b) < 5 {
			return 0, errShort
		}
		n = 5 + int(binary.BigEndian.Uint32(b[1:5]))
	default:
		return 0, errors.New("unknown AMQP type constructor")
	}
	if n < 0 || len(b) < n {
		return 0, errShort
	}
	return n, nil
}
