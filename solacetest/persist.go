package solacetest

// This file is persistence (Config.DataDir): what the broker writes to its
// data directory's log (solacetest/internal/store) as its state changes, and
// how it rebuilds that state at start. Every hook here is a method of a nil-
// safe *persister, so the spool and session layers call it unconditionally
// and a broker without a data directory pays one nil check.
//
// What is kept: durable queues' messages (content and attributes once per
// message, then per queue its spool position, expiry and delivery count),
// settlements, publisher flows' last message ids and remembered rejections,
// the replay log's entries, and the configuration (VPNs, queues and their
// subscriptions, client profiles, ACL profiles, client usernames, replay
// log, certificate authorities, OAuth profiles) as a snapshot whenever it
// changes. What is not: temporary queues and their messages, sessions,
// direct subscriptions, consumer flows (clients re-bind), partition
// assignments (recomputed when consumers bind).
//
// Durability: a publisher's ack leaves only once its message is fsynced
// (store.Log.AfterSync, group commit), and a publisher flow's last id is
// written after the records of the message it names, so that a log cut
// short by a crash never claims a message it lacks (the client resends
// what follows the last id it is told); a delivery leaves only once its
// delivery count is written to the operating system (store.Log.WriteBarrier
// in the connection's writer), so that a killed broker's successor flags it
// redelivered. A settlement is written lazily: losing one redelivers a
// message, it never loses one.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/connect-solace/connect-solace/solacetest/internal/store"
)

// Record types of the broker's log.
const (
	recMeta        byte = 1 + iota // spooler id
	recConfig                      // configSnap as JSON
	recMsg                         // a message's content, once
	recSpool                       // a message spooled to a durable queue
	recRemove                      // a spooled message left its queue
	recDelivered                   // a spooled message's delivery count
	recPurgeQueue                  // a queue was deleted with its messages
	recPubFlow                     // a publisher flow's last id (and a rejection)
	recReplay                      // a message entered a VPN's replay log
	recPurgeReplay                 // a VPN's replay log was deleted
)

// persister writes the broker's state changes to its log. All methods run
// with Broker.mu held and do nothing on a nil persister.
type persister struct {
	b          *Broker
	log        *store.Log
	nextPID    uint64
	lastConfig []byte
	configAt   time.Time
}

// openPersister opens cfg.DataDir (waiting for its lock as a standby),
// rebuilds the broker's state from it and compacts it.
func (b *Broker) openPersister(ctx context.Context) error {
	dir := b.cfg.DataDir
	if b.cfg.Standby {
		b.log.Info("standby: waiting for the data directory's lock", "data_dir", dir)
	}
	l, err := store.Open(ctx, dir, store.Options{Wait: b.cfg.Standby, SegmentLimit: b.cfg.dataSegmentLimit,
		OnError: func(err error) {
			b.log.Error("data directory write failed; publishes are no longer confirmed", "data_dir", dir, "error", err)
		}})
	if err != nil {
		return err
	}
	p := &persister{b: b, log: l}
	r := newRecovery()
	damage, err := l.Replay(r.apply)
	if err != nil {
		_ = l.Close()
		return err
	}
	for _, d := range damage {
		b.log.Error("data directory damaged: dropped what could not be read", "data_dir", dir, "segment", d.Segment, "problem", d.Problem)
	}
	b.damage = damage
	b.mu.Lock()
	defer b.mu.Unlock()
	stats := r.restore(b)
	p.nextPID = r.maxPID
	b.st = p
	for _, v := range b.vpns {
		v.st = p
	}
	if err := l.Compact(p.snapshot); err != nil {
		_ = l.Close()
		return err
	}
	b.log.Info("data directory recovered", "data_dir", dir, "queues", stats.queues, "messages", stats.messages,
		"delivered_unacked", stats.redelivered, "publisher_flows", stats.pubFlows, "damaged", len(damage))
	return nil
}

// DataDirDamage lists what the broker could not read from its data
// directory at start (empty when it read everything).
func (b *Broker) DataDirDamage() []string {
	out := make([]string, 0, len(b.damage))
	for _, d := range b.damage {
		out = append(out, d.String())
	}
	return out
}

func (p *persister) close() error {
	if p == nil {
		return nil
	}
	return p.log.Close()
}

// ---- hooks ----

// spooled records qm, just spooled to q.
func (p *persister) spooled(q *queue, qm *qmsg) {
	if p == nil || !q.cfg.Durable {
		return
	}
	p.persistMsg(qm.m)
	p.log.Append(recSpool, func(d []byte) []byte {
		d = appendStr(d, q.vpn.name)
		d = appendStr(d, q.cfg.Name)
		d = binary.AppendUvarint(d, qm.seq)
		d = binary.AppendUvarint(d, qm.m.pid)
		d = binary.AppendVarint(d, unixNano(qm.expiry))
		return binary.AppendUvarint(d, uint64(qm.deliveries))
	})
}

// persistMsg writes m's content once.
func (p *persister) persistMsg(m *storedMsg) {
	if m.pid != 0 {
		return
	}
	p.nextPID++
	m.pid = p.nextPID
	p.log.Append(recMsg, func(d []byte) []byte { return appendMsg(d, m) })
}

// removed records that qm left q (settled, discarded, moved to the DMQ).
func (p *persister) removed(q *queue, qm *qmsg) {
	if p == nil || !q.cfg.Durable {
		return
	}
	p.log.Append(recRemove, func(d []byte) []byte { return binary.AppendUvarint(d, qm.seq) })
}

// delivered records qm's delivery count, before the delivery is sent.
func (p *persister) delivered(q *queue, qm *qmsg) {
	if p == nil || !q.cfg.Durable {
		return
	}
	p.log.Append(recDelivered, func(d []byte) []byte {
		return binary.AppendUvarint(binary.AppendUvarint(d, qm.seq), uint64(qm.deliveries))
	})
}

// purged records the deletion of q and its messages.
func (p *persister) purged(q *queue) {
	if p == nil || !q.cfg.Durable {
		return
	}
	p.log.Append(recPurgeQueue, func(d []byte) []byte { return appendStr(appendStr(d, q.vpn.name), q.cfg.Name) })
	p.configChanged()
}

// pubFlowAdvanced records pf's last id, and the rejection of that id when
// nack is set.
func (p *persister) pubFlowAdvanced(v *vpnState, pf *pubFlow, nack *rejection) {
	if p == nil {
		return
	}
	p.log.Append(recPubFlow, func(d []byte) []byte { return appendPubFlow(d, v.name, pf, nack) })
}

// replayLogged records m's entry into v's replay log.
func (p *persister) replayLogged(v *vpnState, m *storedMsg) {
	if p == nil {
		return
	}
	p.persistMsg(m)
	p.log.Append(recReplay, func(d []byte) []byte { return binary.AppendUvarint(appendStr(d, v.name), m.pid) })
}

// replayDeleted records the deletion of v's replay log.
func (p *persister) replayDeleted(v *vpnState) {
	if p == nil {
		return
	}
	p.log.Append(recPurgeReplay, func(d []byte) []byte { return appendStr(d, v.name) })
	p.configChanged()
}

// configChanged writes a configuration snapshot when the configuration
// differs from the last one written.
func (p *persister) configChanged() {
	if p == nil {
		return
	}
	snap, err := json.Marshal(p.b.configSnapshot())
	if err != nil {
		p.b.log.Error("encoding the configuration for the data directory", "error", err)
		return
	}
	p.configAt = time.Now()
	if bytes.Equal(snap, p.lastConfig) {
		return
	}
	p.lastConfig = snap
	p.log.Append(recConfig, func(d []byte) []byte { return append(d, snap...) })
}

// tick catches configuration changes made through the Go API, which has no
// hook of its own, once a second.
func (p *persister) tick(now time.Time) {
	if p != nil && now.Sub(p.configAt) >= time.Second {
		p.configChanged()
	}
}

// ackAfterSync sends a publisher ack on c once everything spooled before it
// is on disk.
func (p *persister) ackAfterSync(c *conn, frame []byte) {
	p.log.AfterSync(func() { c.send(frame) })
}

// writeBarrier makes the records behind frames about to be sent survive a
// crash of the broker process.
func (p *persister) writeBarrier() {
	if p != nil {
		p.log.WriteBarrier()
	}
}

// snapshot writes the whole state, for compaction.
func (p *persister) snapshot(add func(typ byte, body []byte)) {
	b := p.b
	add(recMeta, binary.BigEndian.AppendUint64(nil, b.spoolerID))
	snap, _ := json.Marshal(b.configSnapshot())
	p.lastConfig, p.configAt = snap, time.Now()
	add(recConfig, snap)
	written := map[uint64]bool{}
	msg := func(m *storedMsg) {
		if !written[m.pid] {
			written[m.pid] = true
			add(recMsg, appendMsg(nil, m))
		}
	}
	for _, vn := range slices.Sorted(maps.Keys(b.vpns)) {
		v := b.vpns[vn]
		for _, m := range v.replayLog() {
			msg(m)
			add(recReplay, binary.AppendUvarint(appendStr(nil, vn), m.pid))
		}
		for _, qn := range slices.Sorted(maps.Keys(v.queues)) {
			q := v.queues[qn]
			if !q.cfg.Durable {
				continue
			}
			for _, qm := range q.allMessages() {
				msg(qm.m)
				d := appendStr(appendStr(nil, vn), qn)
				d = binary.AppendUvarint(d, qm.seq)
				d = binary.AppendUvarint(d, qm.m.pid)
				d = binary.AppendVarint(d, unixNano(qm.expiry))
				add(recSpool, binary.AppendUvarint(d, uint64(qm.deliveries)))
			}
		}
		for _, pn := range slices.Sorted(maps.Keys(v.pubFlows)) {
			pf := v.pubFlows[pn]
			add(recPubFlow, appendPubFlow(nil, vn, pf, nil))
			for _, id := range slices.Sorted(maps.Keys(pf.nacked)) {
				r := pf.nacked[id]
				cp := *pf
				cp.lastID = id
				add(recPubFlow, appendPubFlow(nil, vn, &cp, &r))
			}
		}
	}
}

// ---- configuration snapshot ----

// configSnap is the broker's configuration as the data directory keeps it.
type configSnap struct {
	VPNs            []vpnSnap         `json:"vpns"`
	CertAuthorities map[string]string `json:"certAuthorities,omitempty"`
	OAuth           *oauthSnap        `json:"oauth,omitempty"`
}

type vpnSnap struct {
	Config    VPNConfig                 `json:"config"`
	Profiles  map[string]ClientProfile  `json:"clientProfiles"`
	ACLs      map[string]ACLProfile     `json:"aclProfiles"`
	Usernames map[string]ClientUsername `json:"clientUsernames"`
	Replay    *ReplayLog                `json:"replayLog,omitempty"`
	Queues    []queueSnap               `json:"queues"`
}

type queueSnap struct {
	Config     QueueConfig `json:"config"`
	ClientSubs []string    `json:"clientSubscriptions,omitempty"`
}

type oauthSnap struct {
	Profiles  map[string]map[string]OAuthProfile       `json:"profiles"`
	Groups    map[string]map[string]AuthorizationGroup `json:"groups"`
	DomainCAs map[string]string                        `json:"domainCertAuthorities"`
}

func (b *Broker) configSnapshot() configSnap {
	s := configSnap{CertAuthorities: b.certAuthorities}
	for _, vn := range slices.Sorted(maps.Keys(b.vpns)) {
		v := b.vpns[vn]
		vs := vpnSnap{Config: v.cfg, Profiles: map[string]ClientProfile{}, ACLs: map[string]ACLProfile{},
			Usernames: v.usernames, Replay: v.replayCfg}
		for n, cp := range v.profiles {
			vs.Profiles[n] = *cp
		}
		for n, a := range v.acls {
			vs.ACLs[n] = *a
		}
		for _, qn := range slices.Sorted(maps.Keys(v.queues)) {
			q := v.queues[qn]
			if q.cfg.Durable {
				vs.Queues = append(vs.Queues, queueSnap{Config: q.cfg, ClientSubs: slices.Sorted(maps.Keys(q.clientSubs))})
			}
		}
		s.VPNs = append(s.VPNs, vs)
	}
	if o := b.oauth; o != nil {
		s.OAuth = &oauthSnap{Profiles: o.profiles, Groups: o.groups, DomainCAs: o.domainCAs}
	}
	return s
}

// ---- recovery ----

type recEntry struct {
	vpn, queue string
	seq, pid   uint64
	expiry     int64
	deliveries int
}

type recFlow struct {
	lastID uint64
	nacked map[uint64]rejection
}

// recovery accumulates the log's records; restore then builds the broker's
// state from them.
type recovery struct {
	spoolerID uint64
	config    *configSnap
	msgs      map[uint64]*storedMsg
	entries   map[uint64]*recEntry
	flows     map[[2]string]*recFlow
	replay    map[string][]uint64
	maxPID    uint64
}

func newRecovery() *recovery {
	return &recovery{msgs: map[uint64]*storedMsg{}, entries: map[uint64]*recEntry{},
		flows: map[[2]string]*recFlow{}, replay: map[string][]uint64{}}
}

// errRecord is a record whose body does not decode.
var errRecord = errors.New("malformed record body")

// apply takes one record. A record that does not decode is an error (the
// store reports and drops it); records about messages the log no longer
// holds (after damage) are ignored.
func (r *recovery) apply(typ byte, body []byte) error {
	d := &decoder{b: body}
	switch typ {
	case recMeta:
		if len(body) != 8 {
			return errRecord
		}
		r.spoolerID = binary.BigEndian.Uint64(body)
		d.b = nil
	case recConfig:
		var s configSnap
		if err := json.Unmarshal(body, &s); err != nil {
			return fmt.Errorf("%w: configuration: %v", errRecord, err)
		}
		r.config = &s
		d.b = nil
	case recMsg:
		m := decodeMsg(d)
		if d.err != nil {
			return d.err
		}
		r.msgs[m.pid] = m
		r.maxPID = max(r.maxPID, m.pid)
	case recSpool:
		e := &recEntry{vpn: d.str(), queue: d.str(), seq: d.uvarint(), pid: d.uvarint(), expiry: d.varint(), deliveries: int(d.uvarint())}
		if d.err != nil {
			return d.err
		}
		r.entries[e.seq] = e
	case recRemove:
		seq := d.uvarint()
		if d.err != nil {
			return d.err
		}
		delete(r.entries, seq)
	case recDelivered:
		seq, n := d.uvarint(), d.uvarint()
		if d.err != nil {
			return d.err
		}
		if e := r.entries[seq]; e != nil {
			e.deliveries = int(n)
		}
	case recPurgeQueue:
		vpn, q := d.str(), d.str()
		if d.err != nil {
			return d.err
		}
		maps.DeleteFunc(r.entries, func(_ uint64, e *recEntry) bool { return e.vpn == vpn && e.queue == q })
	case recPubFlow:
		vpn, name, last, nackID, code, text := d.str(), d.str(), d.uvarint(), d.uvarint(), d.uvarint(), d.str()
		if d.err != nil {
			return d.err
		}
		f := r.flows[[2]string{vpn, name}]
		if f == nil {
			f = &recFlow{nacked: map[uint64]rejection{}}
			r.flows[[2]string{vpn, name}] = f
		}
		f.lastID = max(f.lastID, last)
		if nackID != 0 {
			f.nacked[nackID] = rejection{uint32(code), text}
		}
	case recReplay:
		vpn, pid := d.str(), d.uvarint()
		if d.err != nil {
			return d.err
		}
		r.replay[vpn] = append(r.replay[vpn], pid)
	case recPurgeReplay:
		vpn := d.str()
		if d.err != nil {
			return d.err
		}
		delete(r.replay, vpn)
	default:
		return fmt.Errorf("unknown record type %d", typ)
	}
	if len(d.b) != 0 {
		return fmt.Errorf("%w: %d trailing bytes", errRecord, len(d.b))
	}
	return nil
}

type restoreStats struct{ queues, messages, redelivered, pubFlows int }

// restore builds the broker's state (with Broker.mu held, before any
// listener is open).
func (r *recovery) restore(b *Broker) restoreStats {
	var st restoreStats
	if r.spoolerID != 0 {
		b.spoolerID = r.spoolerID
	}
	if c := r.config; c != nil {
		if c.CertAuthorities != nil {
			b.certAuthorities = c.CertAuthorities
		}
		if c.OAuth != nil {
			o := b.oauthLocked()
			o.profiles, o.groups, o.domainCAs = orEmpty(c.OAuth.Profiles), orEmpty(c.OAuth.Groups), orEmpty(c.OAuth.DomainCAs)
		}
		for _, vs := range c.VPNs {
			v := b.vpns[vs.Config.Name]
			if v == nil {
				b.log.Warn("data directory holds a VPN this broker does not serve; ignored", "vpn", vs.Config.Name)
				continue
			}
			v.cfg = vs.Config
			for n, cp := range vs.Profiles {
				v.profiles[n] = &cp
			}
			for n, a := range vs.ACLs {
				if a.Exceptions == nil {
					a.Exceptions = map[string][]string{}
				}
				v.acls[n] = &a
			}
			v.usernames = orEmpty(vs.Usernames)
			v.replayCfg = vs.Replay
			for _, qs := range vs.Queues {
				q := newQueue(v, qs.Config)
				for _, s := range qs.ClientSubs {
					if q.clientSubs == nil {
						q.clientSubs = map[string]bool{}
					}
					q.clientSubs[s] = true
				}
				v.queues[qs.Config.Name] = q
				st.queues++
			}
		}
	}
	for _, seq := range slices.Sorted(maps.Keys(r.entries)) {
		e := r.entries[seq]
		m := r.msgs[e.pid]
		v := b.vpns[e.vpn]
		if m == nil || v == nil || v.queues[e.queue] == nil {
			continue
		}
		q := v.queues[e.queue]
		qm := &qmsg{m: m, seq: seq, deliveries: e.deliveries, partition: -1}
		if e.expiry != 0 {
			qm.expiry = time.Unix(0, e.expiry)
			q.expiring++
		}
		q.ready.PushBack(qm)
		q.count++
		q.bytes += int64(m.size)
		b.nextSpool = max(b.nextSpool, seq)
		b.nextStored = max(b.nextStored, m.id)
		st.messages++
		if qm.deliveries > 0 {
			st.redelivered++
		}
	}
	for vn, pids := range r.replay {
		v := b.vpns[vn]
		if v == nil {
			continue
		}
		for _, pid := range pids {
			if m := r.msgs[pid]; m != nil {
				v.logForReplay(m)
				b.nextStored = max(b.nextStored, m.id)
			}
		}
	}
	for k, f := range r.flows {
		v := b.vpns[k[0]]
		if v == nil {
			continue
		}
		v.pubFlows[k[1]] = &pubFlow{name: k[1], lastID: f.lastID, nacked: f.nacked}
		st.pubFlows++
	}
	return st
}

func orEmpty[M ~map[K]V, K comparable, V any](m M) M {
	if m == nil {
		return M{}
	}
	return m
}

// ---- record bodies ----

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func appendStr(d []byte, s string) []byte {
	return append(binary.AppendUvarint(d, uint64(len(s))), s...)
}

func appendBytes(d, b []byte) []byte {
	return append(binary.AppendUvarint(d, uint64(len(b))), b...)
}

func appendMsg(d []byte, m *storedMsg) []byte {
	d = binary.AppendUvarint(d, m.pid)
	d = binary.AppendUvarint(d, m.id)
	d = binary.AppendVarint(d, unixNano(m.at))
	d = appendStr(d, m.queue)
	d = appendStr(d, m.topic)
	d = append(d, m.flags, m.byte2, m.priority, boolByte(m.persistent))
	d = appendBytes(d, m.kept)
	d = binary.AppendUvarint(d, uint64(len(m.ext)))
	for _, e := range m.ext {
		d = appendBytes(binary.AppendUvarint(d, uint64(e.Type)), e.Value)
	}
	d = appendBytes(d, m.summary)
	d = binary.AppendVarint(d, int64(m.ttl))
	d = binary.AppendUvarint(d, uint64(m.size))
	return appendBytes(d, m.payload)
}

func decodeMsg(d *decoder) *storedMsg {
	m := &storedMsg{pid: d.uvarint(), id: d.uvarint()}
	if at := d.varint(); at != 0 {
		m.at = time.Unix(0, at)
	}
	m.queue, m.topic = d.str(), d.str()
	m.flags, m.byte2, m.priority, m.persistent = d.byte(), d.byte(), d.byte(), d.byte() != 0
	m.kept = d.bytes()
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail()
		return m
	}
	for range n {
		m.ext = append(m.ext, extParam{Type: uint16(d.uvarint()), Value: d.bytes()})
	}
	m.summary = d.bytes()
	m.ttl = time.Duration(d.varint())
	m.size = int(d.uvarint())
	m.payload = d.bytes()
	if m.pid == 0 {
		d.fail()
	}
	return m
}

func appendPubFlow(d []byte, vpn string, pf *pubFlow, nack *rejection) []byte {
	d = appendStr(appendStr(d, vpn), pf.name)
	d = binary.AppendUvarint(d, pf.lastID)
	if nack == nil {
		return appendStr(binary.AppendUvarint(binary.AppendUvarint(d, 0), 0), "")
	}
	d = binary.AppendUvarint(d, pf.lastID)
	return appendStr(binary.AppendUvarint(d, uint64(nack.code)), nack.text)
}

// decoder reads record bodies; the first overrun sets err and every later
// read returns zero values.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errRecord
	}
	d.b = nil
}

func (d *decoder) uvarint() uint64 { return readVarint(d, binary.Uvarint) }

func (d *decoder) varint() int64 { return readVarint(d, binary.Varint) }

// readVarint reads one varint with read (binary.Uvarint or binary.Varint),
// failing d when there is none.
func readVarint[T uint64 | int64](d *decoder, read func([]byte) (T, int)) T {
	v, n := read(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) byte() byte {
	if len(d.b) < 1 {
		d.fail()
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail()
		return nil
	}
	if n == 0 {
		return nil // a nil summary means none (applicationPayload)
	}
	v := bytes.Clone(d.b[:n])
	d.b = d.b[n:]
	return v
}

func (d *decoder) str() string { return string(d.bytes()) }

// persistConfigAfter writes a configuration snapshot after every SEMP
// request that may have changed the configuration.
func persistConfigAfter(b *Broker, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		if r.Method != http.MethodGet {
			b.mu.Lock()
			b.st.configChanged()
			b.mu.Unlock()
		}
	})
}
