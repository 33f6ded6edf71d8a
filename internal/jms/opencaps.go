package jms

import (
	"encoding/binary"
	"errors"
	"net"
	"sync"

	"github.com/connect-solace/connect-solace/internal/amqpwire"
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
			if code, ok := amqpwire.SASLOutcomeCode(body); ok {
				s.saslCode = int(code)
			}
			continue
		}
		if len(body) == 0 {
			continue // heartbeat
		}
		caps, err := amqpwire.OpenCapabilities(body)
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

func (s *openSniffer) finish(caps []string, err error) {
	s.done, s.caps, s.err, s.buf = true, caps, err, nil
}
