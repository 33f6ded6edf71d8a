package solacetest

// This file is Broker.Publish: a message the broker publishes itself, as a
// client would, with the attributes a client can set, for tools that put a
// test message on the broker (the console's publish form). It goes the way a
// client's does (routing, quotas, spooling, the replay log, direct
// subscribers) but bypasses logins and ACLs: it comes from the operator.

import (
	"errors"
	"fmt"
	"time"
)

// Message is a message for Broker.Publish. Exactly one of Topic and Queue
// names its destination.
type Message struct {
	Topic string
	// Queue sends the message to one queue; such a message is always
	// guaranteed (persistent).
	Queue   string
	Payload []byte
	// Persistent makes a topic message guaranteed: it is spooled to the
	// subscribed queues and the call fails when one refuses it. A direct
	// one goes to direct subscribers, and to subscribed queues as direct
	// messages do.
	Persistent bool
	// Priority 1..255 is sent as the message's priority; 0 sends none.
	Priority int
	// TTL is the guaranteed message's time to live; 0 means none.
	TTL         time.Duration
	DMQEligible bool
	// CorrelationID, ApplicationMessageID and ApplicationMessageType are
	// the header fields of those names; UserProperties are string user
	// properties.
	CorrelationID, ApplicationMessageID, ApplicationMessageType string
	UserProperties                                              map[string]string
}

// ErrNotRouted is a guaranteed message that Publish could not spool.
var ErrNotRouted = errors.New("message not spooled")

// Publish publishes m in vpn as if a client had, and returns how many queues
// it was spooled to.
func (b *Broker) Publish(vpn string, m Message) (int, error) {
	topic := m.Topic
	switch {
	case (m.Topic == "") == (m.Queue == ""):
		return 0, errors.New("publish: set exactly one of topic and queue")
	case m.Priority < 0 || m.Priority > 255:
		return 0, fmt.Errorf("publish: priority %d: want 0 (none) to 255", m.Priority)
	case m.Queue != "":
		topic, m.Persistent = p2pQueuePrefix+m.Queue, true
	}
	f := publishFrame(topic, m)
	b.mu.Lock()
	defer b.mu.Unlock()
	v, err := b.vpnLocked(vpn)
	if err != nil {
		return 0, err
	}
	b.published[topic]++
	if !m.Persistent {
		b.fanoutDirect(v, topic, func() []byte { return f.rawBytes })
		var sm *storedMsg
		n := 0
		for _, q := range v.subscribedQueues(topic) {
			if !q.overQuota(len(f.Payload)) {
				if sm == nil {
					sm = b.storedFromFrame(f, topic)
					sm.kept = appendParam(sm.kept, param{Type: pDeliveryMode, Value: u8(0)})
				}
				b.spool(q, sm, 0)
				n++
			}
		}
		return n, nil
	}
	dests, rej := v.routeGuaranteed(topic, false)
	if rej == nil {
		for _, q := range dests {
			if q.overQuota(len(f.Payload)) {
				rej = &rejection{503, "Spool Over Quota"}
			}
		}
	}
	if rej != nil {
		return 0, fmt.Errorf("%w: %s (%d)", ErrNotRouted, rej.text, rej.code)
	}
	sm := b.storedFromFrame(f, topic)
	sm.queue = m.Queue
	for _, q := range dests {
		b.spool(q, sm, 0)
	}
	v.logForReplay(sm)
	b.fanoutDirect(v, topic, sm.directFrame)
	return len(dests), nil
}

// publishFrame encodes m as the Go client would publish it to topic: the
// attachment and, with header fields or properties, the binary metadata
// after it, described by the contents summary (P22).
func publishFrame(topic string, m Message) *frame {
	f := &frame{UH: 2, Proto: protoTrMsg, TTL: 255, Payload: m.Payload,
		Params: []param{{UH: 2, Type: pTopic, Value: cstr(topic)}}}
	headers := map[string]string{}
	for k, v := range map[string]string{"ci": m.CorrelationID, "mi": m.ApplicationMessageID, "mt": m.ApplicationMessageType} {
		if v != "" {
			headers[k] = v
		}
	}
	if meta := encodeBinaryMetadata(headers, m.UserProperties); meta != nil {
		summary := appendSection(nil, sectionBinary, len(m.Payload))
		summary = appendSection(summary, sectionBinaryMeta, len(meta))
		f.Params = append(f.Params, param{UH: 2, Type: pContentsSummary, Value: summary})
		f.Payload = append(append([]byte(nil), m.Payload...), meta...)
	}
	if m.Priority > 0 {
		f.Params = append(f.Params, param{Type: pPriority, Value: u8(byte(m.Priority))})
	}
	if m.DMQEligible {
		f.Flags |= flagDMQE
	}
	if m.Persistent {
		f.Flags |= flagADF
		f.Params = append(f.Params, param{UH: 2, Type: pDeliveryMode, Value: u8(1)})
		if m.TTL > 0 {
			f.Params = append(f.Params, param{Type: pADTTL, Value: u64(uint64(m.TTL.Milliseconds()))})
		}
	}
	f.rawBytes = f.encode(nil)
	return f
}

// appendSection appends one contents-summary element: the section type and
// the element's size in the first byte, then the length in as few bytes as
// it needs.
func appendSection(dst []byte, typ byte, n int) []byte {
	size := 2
	for size < 5 && n>>(8*(size-1)) != 0 {
		size++
	}
	dst = append(dst, typ<<4|byte(size))
	for i := size - 2; i >= 0; i-- {
		dst = append(dst, byte(n>>(8*i)))
	}
	return dst
}
