package solacetest

import (
	"bufio"
	"encoding/base64"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// rawClient speaks SMF with this package's codec, for protocol cases the Go
// client cannot be made to produce (resends of an already spooled message,
// non-persistent delivery mode).
type rawClient struct {
	t  *testing.T
	nc net.Conn
	r  *bufio.Reader
}

func dialRaw(t *testing.T, b *Broker) *rawClient {
	t.Helper()
	nc, err := net.Dial("tcp", strings.TrimPrefix(b.SMFURL(), "tcp://"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = nc.Close() })
	require.NoError(t, nc.SetDeadline(time.Now().Add(10*time.Second)))
	return &rawClient{t: t, nc: nc, r: bufio.NewReader(nc)}
}

func (c *rawClient) send(f *frame) {
	c.t.Helper()
	_, err := c.nc.Write(f.encode(nil))
	require.NoError(c.t, err)
}

func (c *rawClient) read() *frame {
	c.t.Helper()
	f, err := readFrame(c.r)
	require.NoError(c.t, err)
	return f
}

func (c *rawClient) status(f *frame) (uint32, string) {
	c.t.Helper()
	v, ok := f.param(pResponse)
	require.True(c.t, ok, "frame has a response")
	code, text, _ := parseResponse(v)
	return code, text
}

// dialPublisher connects a raw client as user default named clientName and
// opens the publisher flow flowName ("" for a new one): the client, the
// flow's id and name and the last message id the broker has of it.
func dialPublisher(t *testing.T, b *Broker, clientName, flowName string) (*rawClient, uint32, string, uint64) {
	t.Helper()
	c := dialRaw(t, b)
	c.login("default", "default", clientName)
	flowID, name, last := c.openPublisher(flowName)
	return c, flowID, name, last
}

func (c *rawClient) login(user, pass, clientName string, extra ...ccParam) {
	c.t.Helper()
	c.send(&frame{UH: 2, Proto: protoClientCtrl, TTL: 1,
		Params: []param{
			{Type: pUsername, Value: []byte(base64.StdEncoding.EncodeToString([]byte(user)))},
			{Type: pPassword, Value: []byte(base64.StdEncoding.EncodeToString([]byte(pass)))},
		},
		Payload: encodeClientCtrl(ccLogin, append([]ccParam{{ccClientName, cstr(clientName)}, {ccVPNName, cstr("default")}}, extra...)),
	})
	code, _ := c.status(c.read())
	require.EqualValues(c.t, 200, code)
}

// openPublisher opens a publisher flow and returns its flow id, name and
// the last message id the broker reports.
func (c *rawClient) openPublisher(name string) (uint32, string, uint64) {
	c.t.Helper()
	c.send(&frame{UH: 2, Proto: protoAssuredCtrl, TTL: 1, Payload: encodeAdCtrl(adOpenFlow, []adParam{
		{Type: apLastMsgIDAcked, Value: u64(0)}, {Type: apLastMsgIDSent, Value: u64(0)},
		{Type: apWindow, Value: u8(255)}, {Type: apFlowName, Value: cstr(name)},
	})})
	f := c.read()
	code, _ := c.status(f)
	require.EqualValues(c.t, 200, code)
	a, err := decodeAdCtrl(f.Payload)
	require.NoError(c.t, err)
	id, _ := a.uint(apFlowID)
	last, _ := a.uint(apLastMsgIDAcked)
	n, _ := a.get(apFlowName)
	return uint32(id), trimNUL(n), last
}

// publish sends a guaranteed message and returns the acked id.
func (c *rawClient) publish(flowID uint32, id uint64, topic, payload string, mode byte) uint64 {
	c.t.Helper()
	c.send(&frame{Flags: flagADF | flagDMQE, UH: 2, Proto: protoTrMsg, TTL: 255, Params: []param{
		{UH: 2, Type: pTopic, Value: cstr(topic)},
		{Type: pDeliveryMode, Value: u8(mode)},
		{Type: pADFlowID, Value: u32(flowID)},
		{Type: pADPrevMsgID, Value: u64(id - 1)},
		{Type: pADMsgID, Value: u64(id)},
	}, Payload: []byte(payload)})
	f := c.read()
	code, text := c.status(f)
	require.EqualValues(c.t, 200, code, text)
	a, err := decodeAdCtrl(f.Payload)
	require.NoError(c.t, err)
	acked, _ := a.uint(apLastMsgIDAcked)
	return acked
}

func TestResentPublishIsAckedNotSpooledTwice(t *testing.T) {
	b := newBroker(t)
	c, flowID, name, last := dialPublisher(t, b, "raw-1", "")
	require.Zero(t, last)
	require.EqualValues(t, 1, c.publish(flowID, 1, "orders/1", "one", 1))
	require.EqualValues(t, 2, c.publish(flowID, 2, "orders/2", "two", 0)) // non-persistent

	// A new connection resumes the flow by name and resends message 2.
	c2, flowID2, name2, last2 := dialPublisher(t, b, "raw-1", name)
	require.Equal(t, name, name2)
	require.EqualValues(t, 2, last2, "the broker reports what it already has")
	require.EqualValues(t, 2, c2.publish(flowID2, 2, "orders/2", "two", 0))
	require.EqualValues(t, 3, c2.publish(flowID2, 3, "orders/3", "three", 1))

	msgs, err := b.QueueMessages("default", "q1")
	require.NoError(t, err)
	require.Equal(t, [][]byte{[]byte("one"), []byte("two"), []byte("three")}, msgs)
	require.Equal(t, 1, b.PublishedCount("orders/2"))
	require.Equal(t, 1, b.ClientCount(), "the second login replaced the first session")
}

func TestFrameBeforeLoginClosesConnection(t *testing.T) {
	b := NewTestBroker(t, Config{})
	c := dialRaw(t, b)
	c.send(&frame{UH: 2, Proto: protoKeepAliveV2, TTL: 1})
	_, err := readFrame(c.r)
	require.Error(t, err)
}

// A client that announced 1 s keepalives and then falls silent is dropped
// after three intervals (its flows are then cleaned up as on any drop).
func TestSilentClientIsDropped(t *testing.T) {
	b := newBroker(t)
	c := dialRaw(t, b)
	c.login("default", "default", "silent", ccParam{ccKeepAlive, u32(1)})
	start := time.Now()
	_, err := readFrame(c.r)
	require.Error(t, err, "the broker closes the connection")
	require.GreaterOrEqual(t, time.Since(start), 2900*time.Millisecond)
	require.Eventually(t, func() bool { return b.ClientCount() == 0 }, 5*time.Second, 10*time.Millisecond)
}

// readUntil reads frames until one of protocol proto arrives.
func (c *rawClient) readUntil(proto byte) *frame {
	c.t.Helper()
	for {
		if f := c.read(); f.Proto == proto {
			return f
		}
	}
}

// TestReleasedSettlementRequeuesWithoutCounting settles with RELEASED, which
// the Go client cannot send: the message comes back neither flagged nor
// counted as a redelivery.
func TestReleasedSettlementRequeuesWithoutCounting(t *testing.T) {
	b := newBroker(t)
	c, pubFlow, _, _ := dialPublisher(t, b, "raw-released", "")
	require.EqualValues(t, 1, c.publish(pubFlow, 1, "orders/1", "rel", 1))

	c.send(&frame{UH: 2, Proto: protoAssuredCtrl, TTL: 1,
		Params: []param{{Light: true, Type: lightCorrelationTag, Value: []byte{0, 0, 1}}},
		Payload: encodeAdCtrl(adBind, []adParam{
			{Type: apQueueName, Value: cstr("q1")}, {Type: apWindow, Value: u8(10)}, {Type: apDurability, Value: u8(1)},
		})})
	resp := c.readUntil(protoAssuredCtrl)
	code, text := c.status(resp)
	require.EqualValues(t, 200, code, text)
	a, err := decodeAdCtrl(resp.Payload)
	require.NoError(t, err)
	flowID, ok := a.uint(apFlowID)
	require.True(t, ok)

	deliveryID := func(f *frame) (uint64, bool) {
		v, ok := f.param(pADMsgID)
		require.True(t, ok)
		_, redelivered := f.param(pADRedelivered)
		return beUint(v), redelivered
	}
	settle := func(id uint64, outcome byte) {
		ack := append(append(u64(id), u64(id)...), outcome)
		c.send(&frame{UH: 2, Proto: protoAssuredCtrl, TTL: 1, Payload: encodeAdCtrl(adAck, []adParam{
			{Type: apFlowID, Value: u32(uint32(flowID))}, {Type: apLastMsgIDAcked, Value: u64(id)},
			{Type: apWindow, Value: u8(10)}, {Type: apAppAck, Value: ack},
		})})
	}
	first := c.readUntil(protoTrMsg)
	require.Equal(t, "rel", string(first.Payload))
	id1, redelivered := deliveryID(first)
	require.False(t, redelivered)
	settle(id1, outcomeReleased)

	second := c.readUntil(protoTrMsg)
	id2, redelivered := deliveryID(second)
	require.Greater(t, id2, id1, "every send gets a new id")
	require.False(t, redelivered, "a released message is not a redelivery")
	_, st, err := b.Queue("default", "q1")
	require.NoError(t, err)
	require.Zero(t, st.Redelivered)
	settle(id2, outcomeAccepted)
	require.Eventually(t, func() bool {
		_, st, _ := b.Queue("default", "q1")
		return st.SpooledMsgCount == 0
	}, 5*time.Second, 10*time.Millisecond)
}
