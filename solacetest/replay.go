package solacetest

// This file is message replay: a per-VPN log of guaranteed messages that a
// consumer can ask, when it binds, to have re-spooled to its queue from the
// beginning, from a time, or after a replication group message id.

import (
	"encoding/binary"
	"time"
)

// The replay log is bounded by count and payload bytes; older messages fall
// out of it, as they do from a real broker's replay-log quota.
const (
	replayLogLimit = 100_000
	replayLogBytes = 64 << 20
)

// Replay start-location types (bind p51, first byte).
const (
	replayFromBeginning = 0
	replayFromTime      = 1
	replayAfterRGMID    = 2
)

func (v *vpnState) logForReplay(m *storedMsg) {
	v.replay = append(v.replay, m)
	v.replayBytes += m.size
	for len(v.replay)-v.replayHead > 1 && (len(v.replay)-v.replayHead > replayLogLimit || v.replayBytes > replayLogBytes) {
		v.replayBytes -= v.replay[v.replayHead].size
		v.replay[v.replayHead] = nil
		v.replayHead++
	}
	// Dropping advances replayHead instead of copying the log down on every
	// message (which cost a full log's worth of copying per message once the
	// log was full); the dead prefix is reclaimed once it is half the slice.
	if v.replayHead > 0 && v.replayHead >= len(v.replay)/2 {
		n := copy(v.replay, v.replay[v.replayHead:])
		clear(v.replay[n:])
		v.replay = v.replay[:n]
		v.replayHead = 0
	}
}

// replayLog is the logged messages, oldest first.
func (v *vpnState) replayLog() []*storedMsg { return v.replay[v.replayHead:] }

// startReplay checks a client-initiated replay request for flow f, then
// replaces the queue's messages with the logged messages it subscribes to
// from the requested start. It returns a status code and text for the bind
// response; 200 means go ahead.
func (b *Broker) startReplay(f *flow, loc []byte) (uint32, string) {
	q := f.q
	switch {
	case !q.cfg.Durable:
		return 403, "Replay Not Supported on Temporary Queue"
	case q.cfg.AccessType == AccessNonExclusive:
		return 403, "Client Initiated Replay Not Allowed on Non-Exclusive Queue"
	case !f.active:
		return 403, "Client Initiated Replay from Inactive Flow Not Allowed"
	case len(loc) < 1:
		return 400, "Replay Failed"
	}
	log := q.vpn.replayLog()
	start := 0
	switch loc[0] {
	case replayFromBeginning:
	case replayFromTime:
		// Nanoseconds since the epoch; the Go client sends whole seconds.
		if len(loc) < 9 {
			return 400, "Replay Failed"
		}
		t := time.Unix(0, int64(binary.BigEndian.Uint64(loc[1:9])))
		for start < len(log) && log[start].at.Before(t) {
			start++
		}
	case replayAfterRGMID:
		if len(loc) < 17 {
			return 400, "Replay Failed"
		}
		spooler, id := binary.BigEndian.Uint64(loc[1:9]), binary.BigEndian.Uint64(loc[9:17])
		start = -1
		for i, m := range log {
			if m.id == id {
				start = i + 1
				break
			}
		}
		if spooler != b.spoolerID || start < 0 {
			return 403, "Replay Start Message Unavailable"
		}
	default:
		return 400, "Replay Failed"
	}
	// A replay first empties the queue, then re-spools what it subscribes to.
	for _, qm := range q.allMessages() {
		q.remove(qm)
	}
	n := 0
	for _, m := range log[start:] {
		if m.queue == q.cfg.Name || (m.queue == "" && q.matches(m.topic)) {
			b.spool(q, m, 0)
			n++
		}
	}
	b.log.Info("replay started", "queue", q.cfg.Name, "messages", n)
	return 200, "OK"
}
