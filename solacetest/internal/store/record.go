package store

// This file is the record format: how one record is framed on disk and
// checked when read back.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// A record on disk is
//
//	length  uint32 big-endian: bytes of type and body
//	crc     uint32 big-endian: CRC-32C (Castagnoli) of type and body
//	type    byte
//	body    length-1 bytes
//
// The checksum covers the type and body, so a torn write (a record cut
// short by a crash) and a flipped bit are both caught; the length is
// bounded by MaxRecord, so a damaged length cannot make the reader allocate
// or skip gigabytes.
const headerSize = 8

// MaxRecord bounds a record's type and body: a message and its attributes
// (PubSub+'s largest guaranteed message is 30 MB).
const MaxRecord = 64 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Errors DecodeRecord reports.
var (
	// ErrTruncated: the bytes end inside a record (a torn tail).
	ErrTruncated = errors.New("record truncated")
	// ErrChecksum: the record's checksum does not match its bytes.
	ErrChecksum = errors.New("record checksum mismatch")
	// ErrLength: the record's length field is 0 or over MaxRecord.
	ErrLength = errors.New("record length out of range")
)

// AppendRecord appends one framed record to dst.
func AppendRecord(dst []byte, typ byte, body []byte) []byte {
	start := len(dst)
	dst = append(dst, make([]byte, headerSize)...)
	dst = append(dst, typ)
	dst = append(dst, body...)
	return sealRecord(dst, start)
}

// sealRecord fills in the header of the record that starts at dst[start]
// and runs to the end of dst.
func sealRecord(dst []byte, start int) []byte {
	payload := dst[start+headerSize:]
	binary.BigEndian.PutUint32(dst[start:], uint32(len(payload)))
	binary.BigEndian.PutUint32(dst[start+4:], crc32.Checksum(payload, castagnoli))
	return dst
}

// DecodeRecord reads the record at the start of b. It returns the record's
// type, its body (aliasing b) and the bytes it took, or an error saying why
// the bytes are not a whole, intact record.
func DecodeRecord(b []byte) (typ byte, body []byte, n int, err error) {
	if len(b) < headerSize {
		return 0, nil, 0, fmt.Errorf("%w: %d header bytes of %d", ErrTruncated, len(b), headerSize)
	}
	size := binary.BigEndian.Uint32(b)
	if size == 0 || size > MaxRecord {
		return 0, nil, 0, fmt.Errorf("%w: %d", ErrLength, size)
	}
	if uint64(len(b)-headerSize) < uint64(size) {
		return 0, nil, 0, fmt.Errorf("%w: %d of %d bytes", ErrTruncated, len(b)-headerSize, size)
	}
	payload := b[headerSize : headerSize+int(size)]
	if crc32.Checksum(payload, castagnoli) != binary.BigEndian.Uint32(b[4:]) {
		return 0, nil, 0, ErrChecksum
	}
	return payload[0], payload[1:], headerSize + int(size), nil
}
