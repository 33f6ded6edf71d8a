package solacetest

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// sendGuaranteed sends a guaranteed message with explicit ids and reads
// nothing back.
func (c *rawClient) sendGuaranteed(flowID uint32, prev, id uint64, topic, payload string) {
	c.t.Helper()
	c.send(&frame{Flags: flagADF | flagDMQE, UH: 2, Proto: protoTrMsg, TTL: 255, Params: []param{
		{UH: 2, Type: pTopic, Value: cstr(topic)},
		{Type: pDeliveryMode, Value: u8(1)},
		{Type: pADFlowID, Value: u32(flowID)},
		{Type: pADPrevMsgID, Value: u64(prev)},
		{Type: pADMsgID, Value: u64(id)},
	}, Payload: []byte(payload)})
}

// readAck reads the next publisher ack or nack: its status and acked id.
func (c *rawClient) readAck() (uint32, uint64) {
	c.t.Helper()
	f := c.readUntil(protoAssuredCtrl)
	code, _ := c.status(f)
	a, err := decodeAdCtrl(f.Payload)
	require.NoError(c.t, err)
	id, _ := a.uint(apLastMsgIDAcked)
	return code, id
}

// TestOutOfOrderPublishIsNotAckedAsDuplicate is the loss of issue 11
// finding 1: after a reconnect the Go client sent its second unacknowledged
// message before resending the first. A broker that took "id <= last id" for
// a duplicate spooled message 3, then acknowledged the resent message 2
// without ever spooling it.
func TestOutOfOrderPublishIsNotAckedAsDuplicate(t *testing.T) {
	b := newBroker(t)
	c, flowID, name, _ := dialPublisher(t, b, "ooo", "")
	require.EqualValues(t, 1, c.publish(flowID, 1, "orders/1", "one", 1))

	c2, flowID2, _, last := dialPublisher(t, b, "ooo", name)
	require.EqualValues(t, 1, last)
	// Message 3 follows 2, which the broker has not seen: discarded,
	// unacknowledged.
	c2.sendGuaranteed(flowID2, 2, 3, "orders/3", "three")
	// The client then resends its window in order.
	c2.sendGuaranteed(flowID2, 1, 2, "orders/2", "two")
	code, acked := c2.readAck()
	require.EqualValues(t, 200, code)
	require.EqualValues(t, 2, acked, "the first ack covers message 2 only: 3 was out of order")
	require.EqualValues(t, 3, c2.publish(flowID2, 3, "orders/3", "three", 1))
	require.Equal(t, []string{"one", "two", "three"}, QueuePayloads(t, b, "default", "q1"))
}

// TestPublishFromReplacedConnectionIsDiscarded: a flow bound to a newer
// connection ignores what an older connection still delivers.
func TestPublishFromReplacedConnectionIsDiscarded(t *testing.T) {
	b := newBroker(t)
	old, flowID, name, _ := dialPublisher(t, b, "late-1", "")
	require.EqualValues(t, 1, old.publish(flowID, 1, "orders/1", "one", 1))

	// Another session takes the flow over while the old one is alive.
	c, flowID2, _, last := dialPublisher(t, b, "late-2", name)
	require.EqualValues(t, 1, last)
	old.sendGuaranteed(flowID, 1, 2, "orders/2", "late")
	require.EqualValues(t, 2, c.publish(flowID2, 2, "orders/2", "two", 1))
	require.Equal(t, []string{"one", "two"}, QueuePayloads(t, b, "default", "q1"))
}

// TestResendOfNackedPublishIsNackedAgain: a nack lost with its connection
// does not turn into an ack when the client resends the message.
func TestResendOfNackedPublishIsNackedAgain(t *testing.T) {
	b := newBroker(t)
	c, flowID, name, _ := dialPublisher(t, b, "nack", "")
	require.EqualValues(t, 1, c.publish(flowID, 1, "orders/1", "one", 1))
	b.Faults().NackNextPublishes(1, "Spool Over Quota")
	c.sendGuaranteed(flowID, 1, 2, "orders/2", "two")
	code, _ := c.readAck()
	require.EqualValues(t, 503, code)
	require.EqualValues(t, 3, c.publish(flowID, 3, "orders/3", "three", 1))

	// The client reconnects without having seen the nack (it reports
	// message 1 as its last ack): the broker reports 1 as its last id, and
	// the resend of 2 is nacked again while 3 is a duplicate.
	c2, flowID2, _, last := dialPublisher(t, b, "nack", name)
	require.EqualValues(t, 1, last)
	c2.sendGuaranteed(flowID2, 1, 2, "orders/2", "two")
	code, acked := c2.readAck()
	require.EqualValues(t, 503, code)
	require.EqualValues(t, 2, acked)
	c2.sendGuaranteed(flowID2, 2, 3, "orders/3", "three")
	code, acked = c2.readAck()
	require.EqualValues(t, 200, code)
	require.EqualValues(t, 3, acked)
	require.Equal(t, []string{"one", "three"}, QueuePayloads(t, b, "default", "q1"))
}
