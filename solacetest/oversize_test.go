package solacetest

import (
	"bufio"
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace/resource"
)

// TestOversizedDirectMessageKeepsConnection: a 40 MB direct message, above
// the advertised maximum, is discarded and the session goes on.
func TestOversizedDirectMessageKeepsConnection(t *testing.T) {
	b := NewTestBroker(t, Config{})
	svc := connect(t, b, nil)
	rcv, err := svc.CreateDirectMessageReceiverBuilder().WithSubscriptions(resource.TopicSubscriptionOf("big/>")).Build()
	require.NoError(t, err)
	require.NoError(t, rcv.Start())
	defer func() { _ = rcv.Terminate(time.Second) }()
	pub, err := svc.CreateDirectMessagePublisherBuilder().Build()
	require.NoError(t, err)
	require.NoError(t, pub.Start())
	defer func() { _ = pub.Terminate(time.Second) }()

	require.NoError(t, pub.PublishBytes(make([]byte, 40_000_000), resource.TopicOf("big/1")))
	require.NoError(t, pub.PublishString("small", resource.TopicOf("big/2")))
	msg, err := rcv.ReceiveMessage(10 * time.Second)
	require.NoError(t, err)
	got, _ := msg.GetPayloadAsString()
	assert.Equal(t, "small", got, "the oversized one is dropped, the next one delivered")
	assert.True(t, svc.IsConnected())
}

// TestOversizedGuaranteedMessageIsRejected drives raw SMF, since the client
// refuses to send guaranteed messages above the advertised maximum.
func TestOversizedGuaranteedMessageIsRejected(t *testing.T) {
	b := newBroker(t)
	c, flow, _, _ := dialPublisher(t, b, "raw-big", "big-flow")
	c.send(&frame{Flags: flagADF, UH: 2, Proto: protoTrMsg, TTL: 255, Params: []param{
		{UH: 2, Type: pTopic, Value: cstr("orders/big")},
		{Type: pADFlowID, Value: u32(flow)}, {Type: pADMsgID, Value: u64(1)},
	}, Payload: make([]byte, maxFrameSize+1)})
	f := c.readUntil(protoAssuredCtrl)
	code, text := c.status(f)
	assert.EqualValues(t, 400, code)
	assert.Equal(t, "Document Is Too Large", text)
	assert.EqualValues(t, 2, c.publish(flow, 2, "orders/small", "fits", 1), "the flow goes on")
	held, err := b.QueueMessages("default", "q1")
	require.NoError(t, err)
	assert.Equal(t, [][]byte{[]byte("fits")}, held)
}

func TestReadFrameSkipsOversizedPayload(t *testing.T) {
	big := (&frame{Proto: protoTrMsg, TTL: 1, Params: []param{{Type: pTopic, Value: cstr("t")}},
		Payload: make([]byte, maxFrameSize+10)}).encode(nil)
	next := (&frame{Proto: protoKeepAliveV2, TTL: 1}).encode(nil)
	r := bufio.NewReader(io.MultiReader(bytes.NewReader(big), bytes.NewReader(next)))
	f, err := readFrame(r)
	require.NoError(t, err)
	assert.Equal(t, maxFrameSize+10, f.Oversize)
	assert.Equal(t, len(big), f.Wire)
	topic, _ := f.param(pTopic)
	assert.Equal(t, "t", trimNUL(topic))
	f, err = readFrame(r)
	require.NoError(t, err, "the stream stays in step")
	assert.EqualValues(t, protoKeepAliveV2, f.Proto)

	// A header that claims more than any header may hold is malformed.
	bad := append([]byte(nil), big[:12]...)
	bad[4], bad[5], bad[6], bad[7] = 0x10, 0, 0, 0
	_, err = readFrame(bufio.NewReader(bytes.NewReader(bad)))
	require.ErrorIs(t, err, errBadFrame)
}
