package amqpwire

import (
	"bufio"
	"bytes"
	"testing"
)

// FuzzReadFrame feeds arbitrary bytes to the frame reader and to the
// decoders of every performative the reader acts on: a hostile peer must
// get an error, never a panic.
func FuzzReadFrame(f *testing.F) {
	seeds := [][]byte{
		appendFlow(nil, 0, 1, 100, 0, 100, &linkFlow{handle: 1, deliveryCount: 2, credit: 3, drain: true}),
		appendDetach(nil, 1, 2, true),
		appendClose(nil, &Error{Condition: "amqp:internal-error", Description: "x"}),
		appendTransfer(nil, 0, 1, 2, true, true, []byte("abc")),
		appendBegin(nil, 0, 0, 10, 10, 10),
		heartbeat,
	}
	if b, err := appendOpen(nil, openParams{containerID: "c", maxFrameSize: 512, idleTimeout: 10}); err == nil {
		seeds = append(seeds, b)
	}
	if b, err := appendAttach(nil, 0, attachParams{name: "n", target: "t", capabilities: []string{"queue"}, properties: map[string]any{"k": "v"}}); err == nil {
		seeds = append(seeds, b)
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		br := bufio.NewReader(bytes.NewReader(data))
		var fr frame
		var buf []byte
		for range 8 {
			var err error
			if buf, err = readFrame(br, buf, &fr); err != nil {
				return
			}
			_, _ = decodeOpen(fr.fields)
			_, _ = decodeBegin(fr.fields)
			_, _ = decodeAttach(fr.fields)
			_, _ = decodeFlow(fr.fields)
			_, _ = decodeDisposition(fr.fields)
			_, _ = decodeDetach(fr.fields)
			_, _ = decodeEndOrClose(fr.fields)
			for i := range fr.fields {
				_, _ = Value(fr.fields[i])
				_, _ = fields(fr.fields).symbols(i)
			}
			_, _ = Value(fr.payload)
		}
	})
}
