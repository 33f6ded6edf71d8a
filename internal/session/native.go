package session

// The native read path: received messages are converted by reading their
// attributes straight from CCSMP, the C library inside the Go client, in one
// cgo call, and settled the same way. It is the input's fast path, and the
// only route to the attributes the Go API does not expose (TTL, delivery
// count, reply-to and the destination type). The unsafe part, which depends
// on the client's private layout and hand-declared CCSMP prototypes, is
// package ccsmp; this file maps what it reads onto Inbound. probeNative
// checks the client at start-up; when the check fails the receiver converts
// through the Go API alone (inbound.go) and says so (see Receiver).

import (
	"strings"
	"sync"
	"time"

	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/message"

	"github.com/connect-solace/connect-solace/internal/session/ccsmp"
)

// nativeReader converts received messages through CCSMP. read returns false
// when msg's native handle cannot be reached (the caller then uses the Go
// API).
type nativeReader interface {
	read(in *Inbound, dc *destCache) bool
}

// nativeOnlyMeta are the metadata keys only the native path can fill in.
// The expiration is among them because, without a TTL, the Go API reports
// none (see addExpiry).
var nativeOnlyMeta = []Attr{MetaTimeToLive, MetaExpiration, MetaDeliveryCount, MetaReplyTo}

// ccsmpReader is the nativeReader of the verified client versions.
type ccsmpReader struct{}

func (ccsmpReader) read(in *Inbound, dc *destCache) bool {
	h, ok := ccsmp.HandleOf(in.msg)
	if !ok {
		return false
	}
	readNative(in, h, dc)
	return true
}

var (
	probeOnce   sync.Once
	probeReader nativeReader
	probeErr    error
)

// probeNative returns the native reader, or why it cannot be used with this
// client (ccsmp.Probe). It is checked once per process: the client is linked
// in.
func probeNative(svc solace.MessagingService) (nativeReader, error) {
	probeOnce.Do(func() {
		if probeErr = ccsmp.Probe(svc); probeErr == nil {
			probeReader = ccsmpReader{}
		}
	})
	return probeReader, probeErr
}

// NativeErr reports why the native path (package ccsmp) cannot be used
// with s's client, or nil when it can: reading every attribute, settling
// natively and setting the reply flag (Outbound.Reply) need it.
func (s *Session) NativeErr() error {
	_, err := probeNative(s.svc)
	return err
}

// newInboundNative reads the attributes straight from CCSMP in one call.
// It yields what newInboundAPI yields plus the attributes the Go API hides
// (nativeOnlyMeta; a test holds the rest equal).
// dc may be nil.
func newInboundNative(msg message.InboundMessage, h uintptr, dc *destCache) *Inbound {
	return readNative(&Inbound{msg: msg}, h, dc)
}

// readNative converts in.msg, whose native handle is h, into in as
// newInboundNative does, and returns in. The string attributes share
// in.strBuf, or one allocation when they do not fit.
func readNative(in *Inbound, h uintptr, dc *destCache) *Inbound {
	msg := in.msg
	startConversion(in)
	var m ccsmp.Message
	known := ""
	if dc != nil && dc.boxed != nil {
		known = dc.name
	}
	ccsmp.Read(h, &m, in.strBuf[:0], known)
	has := func(b ccsmp.Has) bool { return m.Has&b != 0 }
	if has(ccsmp.HasPayload) {
		in.Payload = m.Payload
		if sdtKind(in.Payload) == sdtString {
			in.Payload = sdtStringText(in.Payload)
		}
	} else {
		in.Payload = payloadOf(msg)
	}
	add := func(k Attr, v any) { in.Meta = append(in.Meta, MetaField{Key: k, Value: v}) }
	millis := func(v int64) time.Time { return time.Unix(v/1e3, (v%1e3)*1e6) }

	// The destination usually repeats the flow's last one (see destCache).
	if dest, ok := m.Str(ccsmp.Destination); ok {
		// Boxed only when new: boxing a string allocates.
		var boxed any
		switch {
		case m.DestKnown:
			boxed = dc.boxed
		case dc != nil:
			// A copy of its own, so the cache does not keep this
			// message's buffer alive.
			dc.name = strings.Clone(dest)
			dc.boxed = any(dc.name)
			boxed = dc.boxed
		default:
			boxed = dest
		}
		add(MetaDestination, boxed)
		if t := nativeDestType(m.DestType); t != "" {
			add(MetaDestinationType, boxedDestType(t))
		} else {
			add(MetaDestinationType, boxedDestType(destinationTypeOf(dest)))
		}
	}
	appID, hasAppID := m.Str(ccsmp.AppMessageID)
	if hasAppID {
		add(MetaApplicationMessageID, appID)
	}
	if v, ok := m.Str(ccsmp.AppMessageType); ok {
		add(MetaApplicationMessageType, v)
	}
	if v, ok := m.Str(ccsmp.CorrelationID); ok {
		add(MetaCorrelationID, v)
	}
	if has(ccsmp.HasPriority) {
		add(MetaPriority, int64(m.Priority))
	}
	in.Redelivered = m.Redelivered
	add(MetaRedelivered, in.Redelivered)
	if has(ccsmp.HasDeliveryCount) && m.DeliveryCount > 0 {
		add(MetaDeliveryCount, int64(m.DeliveryCount))
	}
	var exp time.Time
	if has(ccsmp.HasExpiration) && m.Expiration > 0 {
		exp = millis(m.Expiration)
	}
	var ttl int64
	if has(ccsmp.HasTTL) && m.TTL > 0 {
		ttl = m.TTL
	}
	if v, ok := m.Str(ccsmp.ReplyTo); ok && v != "" {
		add(MetaReplyTo, v)
	}
	if has(ccsmp.HasSenderTimestamp) && m.SenderTimestamp != 0 {
		in.SenderTimestamp = millis(m.SenderTimestamp)
		switch {
		case dc == nil:
			add(MetaSenderTimestamp, in.SenderTimestamp)
		case dc.sentBoxed != nil && dc.sentMS == m.SenderTimestamp:
			add(MetaSenderTimestamp, dc.sentBoxed)
		default:
			dc.sentMS, dc.sentBoxed = m.SenderTimestamp, any(in.SenderTimestamp)
			add(MetaSenderTimestamp, dc.sentBoxed)
		}
	}
	if has(ccsmp.HasReceiveTimestamp) && m.ReceiveTimestamp != 0 {
		in.ReceiveTimestamp = millis(m.ReceiveTimestamp)
	} else if in.ReceiveTimestamp.IsZero() {
		in.ReceiveTimestamp = time.Now()
	}
	add(MetaReceiveTimestamp, in.ReceiveTimestamp)
	addExpiry(add, exp, ttl, in.ReceiveTimestamp)
	if has(ccsmp.HasSequenceNumber) {
		add(MetaSequenceNumber, m.SequenceNumber)
	}
	if m.RGMID != "" {
		add(MetaReplicationGroupMsgID, m.RGMID)
	}
	if v, ok := m.Str(ccsmp.SenderID); ok {
		add(MetaSenderID, v)
	}
	add(MetaClassOfService, int64(m.ClassOfService))
	if v, ok := m.Str(ccsmp.HTTPContentType); ok {
		add(MetaHTTPContentType, v)
	}
	if v, ok := m.Str(ccsmp.HTTPContentEncoding); ok {
		add(MetaHTTPContentEncoding, v)
	}
	in.appID, in.hasAppID, in.rgmid = appID, hasAppID, m.RGMID
	in.msgID, in.hasMsgID = m.MsgID, has(ccsmp.HasMsgID)
	if has(ccsmp.HasProperties) {
		in.Properties = propertiesOf(msg)
	}
	return in
}

func nativeDestType(t int) string {
	switch t {
	case ccsmp.DestTopic:
		return DestinationTopic
	case ccsmp.DestQueue:
		return DestinationQueue
	case ccsmp.DestTempTopic:
		return DestinationTempTopic
	case ccsmp.DestTempQueue:
		return DestinationTempQueue
	}
	return ""
}

// settleChunk is how many messages one native settlement takes at most.
const settleChunk = ccsmp.SettleChunk

// settleScratch is the working memory of one settlement (settle and
// settleNative), pooled rather than on the stack: a settlement runs on the
// goroutine Benthos starts for each batch's ack, whose stack starts small,
// and some 2 KB of arrays there made it grow (copy) its stack further. (It
// still grows once: Benthos's frames and the settlement's together pass the
// initial size.)
type settleScratch struct {
	native [settleChunk]*Inbound
	items  [settleChunk]ccsmp.SettleItem
	failed [settleChunk]error
}

var settleScratches = sync.Pool{New: func() any { return new(settleScratch) }}

// settleNative settles sc.native[:n] (each with its flow's native handle and
// its message id) with outcome o and disposes of them, in one cgo call
// (ccsmp.Settle), and appends a wrapped error (see settleErr) for each that
// failed to errs.
func (r *Receiver[T]) settleNative(sc *settleScratch, n int, o Outcome, errs []error) []error {
	ins, items, failed := sc.native[:n], sc.items[:n], sc.failed[:n]
	for i, in := range ins {
		items[i] = ccsmp.SettleItem{Flow: in.flow.handle.Load(), MsgID: in.msgID, Msg: in.msg}
	}
	ccsmp.Settle(items, o.ccsmp(), failed)
	for i, err := range failed {
		if err != nil {
			errs = append(errs, r.settleErr(ins[i], o, err))
		}
	}
	clear(items)
	clear(failed)
	return errs
}
