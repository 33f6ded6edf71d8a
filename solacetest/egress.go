package solacetest

// This file is what consumers see when a queue's egress is switched off and
// on: a real broker keeps their flows bound but makes them inactive, and
// tells clients that asked for flow-change updates (the Go client's
// activation/passivation listener) both ways.

// passivateFlows makes q's active flows inactive and tells them so.
func (b *Broker) passivateFlows(q *queue) {
	for _, f := range q.flows {
		if !f.active {
			continue
		}
		f.active = false
		if f.wantUpdates && f.c != nil {
			b.log.Info("consumer flow became inactive", "queue", q.cfg.Name, "flow", f.id)
			f.c.sendFlowUpdate(f)
		}
	}
}

// sendFlowUpdate tells the client whether its consumer flow f is now the
// active one (AssuredCtrl FlowUpdate), for flows whose client asked for
// flow-change updates.
func (c *conn) sendFlowUpdate(f *flow) {
	c.sendAdCtrl(nil, 200, "OK", adFlowUpdate, []adParam{
		{Type: apFlowID, Value: u32(f.id)},
		{Type: apActiveFlow, Value: u8(boolByte(f.active))},
	})
}
