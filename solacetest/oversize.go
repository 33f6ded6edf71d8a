package solacetest

// This file is what happens to a message larger than the broker accepts
// (readFrame skips its payload): as on PubSub+, the connection stays up, a
// direct message is discarded, and a guaranteed one is rejected to its
// publisher with 400 "Document Is Too Large".

// handleOversize answers an oversized frame.
func (c *conn) handleOversize(f *frame) {
	b := c.b
	topicB, _ := f.param(pTopic)
	topic := trimNUL(topicB)
	if f.Proto != protoTrMsg || f.Flags&flagADF == 0 {
		b.log.Info("message above the maximum size discarded", "client", c.clientName, "topic", topic, "bytes", f.Oversize)
		return
	}
	idB, _ := f.param(pADMsgID)
	id := beUint(idB)
	b.mu.Lock()
	defer b.mu.Unlock()
	pf := c.pubFlow
	if pf == nil {
		return
	}
	if id > pf.lastID {
		pf.lastID = id
	}
	c.flushAck()
	b.log.Info("guaranteed message above the maximum size rejected", "client", c.clientName, "topic", topic, "bytes", f.Oversize)
	c.sendAdCtrl(nil, 400, "Document Is Too Large", adAck, []adParam{
		{Type: apLastMsgIDAcked, Value: u64(id)},
		{Type: apFlowID, Value: u32(pf.flowID)},
	})
}
