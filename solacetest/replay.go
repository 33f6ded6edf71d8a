package solacetest

// This file is message replay: a VPN's replay log, which exists only once
// configured (CreateReplayLog, SEMP's msgVpns/{vpn}/replayLogs), records the
// guaranteed messages published while it exists; a consumer can ask, when
// it binds, to have them re-spooled to its queue from the beginning, from a
// time, or after a replication group message id, and SEMP's startReplay
// action does the same for a queue.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// ReplayLog is a VPN's replay log configuration.
type ReplayLog struct {
	Name string
	// IngressEnabled records new messages; EgressEnabled allows replays.
	IngressEnabled, EgressEnabled bool
	// MaxSpoolUsage is the quota in MB (SEMP's unit); the broker bounds the
	// log by replayLogLimit and replayLogBytes as well.
	MaxSpoolUsage int64
}

// CreateReplayLog creates the VPN's replay log; it records messages from now.
func (b *Broker) CreateReplayLog(vpn string, cfg ReplayLog) error {
	if cfg.Name == "" {
		return errors.New("creating replay log: empty name")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	v, err := b.vpnLocked(vpn)
	if err != nil {
		return err
	}
	if v.replayCfg != nil {
		return fmt.Errorf("%w: %q in VPN %q", ErrReplayLogExists, v.replayCfg.Name, vpn)
	}
	v.replayCfg = &cfg
	v.replay, v.replayHead, v.replayBytes = nil, 0, 0
	b.log.Info("replay log created", "vpn", vpn, "name", cfg.Name)
	return nil
}

// ReplayLogs lists the VPN's replay log (none or one).
func (b *Broker) ReplayLogs(vpn string) ([]ReplayLog, error) {
	return inVPN(b, vpn, func(v *vpnState) ([]ReplayLog, error) {
		if v.replayCfg == nil {
			return nil, nil
		}
		return []ReplayLog{*v.replayCfg}, nil
	})
}

// UpdateReplayLog changes the replay log's switches and quota.
func (b *Broker) UpdateReplayLog(vpn, name string, update func(*ReplayLog)) error {
	return changeInVPN(b, vpn, func(v *vpnState) error {
		if err := v.hasReplayLog(name); err != nil {
			return err
		}
		cfg := *v.replayCfg
		update(&cfg)
		cfg.Name = name
		*v.replayCfg = cfg
		return nil
	})
}

// DeleteReplayLog deletes the replay log and what it recorded.
func (b *Broker) DeleteReplayLog(vpn, name string) error {
	return changeInVPN(b, vpn, func(v *vpnState) error {
		if err := v.hasReplayLog(name); err != nil {
			return err
		}
		v.replayCfg, v.replay, v.replayHead, v.replayBytes = nil, nil, 0, 0
		b.st.replayDeleted(v)
		b.log.Info("replay log deleted", "vpn", vpn, "name", name)
		return nil
	})
}

// hasReplayLog refuses a replay log name the VPN has not configured.
func (v *vpnState) hasReplayLog(name string) error {
	if v.replayCfg == nil || v.replayCfg.Name != name {
		return fmt.Errorf("%w %q in VPN %q", ErrNoReplayLog, name, v.name)
	}
	return nil
}

// StartReplay replays the log into a queue, as SEMP's startReplay action
// does: from the beginning, or from a time, or after a replication group
// message id (rgmid, as the client API prints it). The queue is emptied
// first; its consumers receive the replayed messages.
func (b *Broker) StartReplay(vpn, queue, replayLog string, from time.Time, afterRGMID string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	v, err := b.vpnLocked(vpn)
	if err != nil {
		return err
	}
	if err := v.hasReplayLog(replayLog); err != nil {
		return err
	}
	q, err := namedIn(v.queues, queue, ErrUnknownQueue, vpn)
	if err != nil {
		return err
	}
	loc := []byte{replayFromBeginning}
	switch {
	case afterRGMID != "":
		spooler, id, ok := parseRGMID(afterRGMID)
		if !ok {
			return fmt.Errorf("replication group message id %q is not rmid1:xxxxx-xxxxxxxxxxx-xxxxxxxx-xxxxxxxx", afterRGMID)
		}
		loc = binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64([]byte{replayAfterRGMID}, spooler), id)
	case !from.IsZero():
		loc = binary.BigEndian.AppendUint64([]byte{replayFromTime}, uint64(from.UnixNano()))
	}
	if code, text := b.replayInto(q, loc); code != 200 {
		return fmt.Errorf("replay: %s", text)
	}
	return nil
}

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
	if v.replayCfg == nil || !v.replayCfg.IngressEnabled {
		return
	}
	v.replay = append(v.replay, m)
	v.st.replayLogged(v, m)
	v.replayBytes += m.size
	for len(v.replay)-v.replayHead > 1 && (len(v.replay)-v.replayHead > replayLogLimit || v.replayBytes > replayLogBytes) {
		v.replayBytes -= v.replay[v.replayHead].size
		v.replay[v.replayHead] = nil
		v.replayHead++
	}
	// Dropping advances replayHead instead of copying the log down on every
	// message (a full log's worth of copying per message once the log is
	// full); the dead prefix is reclaimed once it is half the slice.
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
	return b.replayInto(q, loc)
}

// replayInto re-spools the logged messages q subscribes to from loc.
func (b *Broker) replayInto(q *queue, loc []byte) (uint32, string) {
	if q.vpn.replayCfg == nil || !q.vpn.replayCfg.EgressEnabled {
		return 503, "Replay Disabled"
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
