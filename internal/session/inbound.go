package session

/*
#include <stdint.h>
#include <stddef.h>
#include <string.h>

// Prototypes from CCSMP's solClient.h / solClientMsg.h, declared here because
// the Go client keeps its headers in an internal package. The symbols come
// from the static libsolclient that solace.dev/go/messaging links into every
// binary. With SOLCLIENT_PSPLUS_GO (how the Go client builds CCSMP) message
// and container handles are uintptr_t.
typedef struct { int destType; const char *dest; } cs_destination_t;
extern int solClient_msg_getTimeToLive(uintptr_t msg_p, int64_t *ttl_p);
extern int solClient_msg_getDeliveryCount(uintptr_t msg_p, int32_t *count_p);
extern int solClient_msg_getReplyTo(uintptr_t msg_p, cs_destination_t *dest_p, size_t destSize);
extern int solClient_msg_getDestination(uintptr_t msg_p, cs_destination_t *dest_p, size_t destSize);
extern int solClient_msg_getApplicationMessageId(uintptr_t msg_p, const char **v);
extern int solClient_msg_getApplicationMsgType(uintptr_t msg_p, const char **v);
extern int solClient_msg_getCorrelationId(uintptr_t msg_p, const char **v);
extern int solClient_msg_getSenderId(uintptr_t msg_p, const char **v);
extern int solClient_msg_getHttpContentType(uintptr_t msg_p, const char **v);
extern int solClient_msg_getHttpContentEncoding(uintptr_t msg_p, const char **v);
extern int solClient_msg_getExpiration(uintptr_t msg_p, int64_t *v);
extern int solClient_msg_getSenderTimestamp(uintptr_t msg_p, int64_t *v);
extern int solClient_msg_getRcvTimestamp(uintptr_t msg_p, int64_t *v);
extern int solClient_msg_getSequenceNumber(uintptr_t msg_p, int64_t *v);
extern int solClient_msg_getPriority(uintptr_t msg_p, int32_t *v);
extern int solClient_msg_getClassOfService(uintptr_t msg_p, uint32_t *v);
extern unsigned char solClient_msg_isRedelivered(uintptr_t msg_p);
extern int solClient_msg_getBinaryAttachmentPtr(uintptr_t msg_p, void **buf, uint32_t *size);
extern int solClient_msg_getUserPropertyMap(uintptr_t msg_p, uintptr_t *map_p);
extern int solClient_container_closeMapStream(uintptr_t *map_p);
typedef struct { char id[16]; } cs_rgmid_t;
extern int solClient_msg_getReplicationGroupMessageId(uintptr_t msg_p, cs_rgmid_t *rgmid_p, size_t size);
extern int solClient_replicationGroupMessageId_toString(cs_rgmid_t *rgmid_p, size_t size, char *str, size_t strSize);

// Presence bits of cs_attrs_t.has.
enum {
	CS_EXP = 1 << 6, CS_SENDTS = 1 << 7,
	CS_RCVTS = 1 << 8, CS_SEQ = 1 << 9, CS_PRIO = 1 << 10, CS_PROPS = 1 << 11,
	CS_PAYLOAD = 1 << 12, CS_RGMID = 1 << 13, CS_RGMIDSTR = 1 << 14,
	CS_TTL = 1 << 16, CS_DCOUNT = 1 << 17
};

// Indexes of the string attributes in cs_attrs_t.str and .len; a NULL
// pointer means absent.
enum {
	CS_S_APPID, CS_S_APPTYPE, CS_S_CORR, CS_S_SENDER, CS_S_HTTPTYPE, CS_S_HTTPENC,
	CS_S_DEST, CS_S_REPLYTO, CS_S_N
};

typedef struct {
	uint32_t has;
	const char *str[CS_S_N];
	uint32_t len[CS_S_N];
	uint32_t strTotal; // sum of len
	int destType;
	int64_t exp, sendTS, rcvTS, seq, ttl;
	int32_t prio, dcount;
	uint32_t cos;
	unsigned char redelivered;
	void *payload;
	uint32_t payloadLen;
	cs_rgmid_t rgmidRaw;
	char rgmid[48];
} cs_attrs_t;

static void cs_str(cs_attrs_t *a, int i, const char *p) {
	if (p == NULL) return;
	a->str[i] = p;
	a->len[i] = (uint32_t)strlen(p);
	a->strTotal += a->len[i];
}

// cs_read_attrs reads every attribute of a received message in one cgo
// call; the Go API needs one or two cgo calls (plus allocations) per
// attribute, which showed up as the input's main overhead per message.
// String and payload pointers point into the message and stay valid until it
// is freed; the Go side copies them at once. The replication group message id
// is returned raw (the Go side formats it); with rgmidStr set it is also
// formatted by CCSMP, which the Go side uses to check its own formatting.
static void cs_read_attrs(uintptr_t m, cs_attrs_t *a, int rgmidStr) {
	memset(a, 0, sizeof(*a));
	const char *p;
	if (solClient_msg_getApplicationMessageId(m, &p) == 0) cs_str(a, CS_S_APPID, p);
	if (solClient_msg_getApplicationMsgType(m, &p) == 0) cs_str(a, CS_S_APPTYPE, p);
	if (solClient_msg_getCorrelationId(m, &p) == 0) cs_str(a, CS_S_CORR, p);
	if (solClient_msg_getSenderId(m, &p) == 0) cs_str(a, CS_S_SENDER, p);
	if (solClient_msg_getHttpContentType(m, &p) == 0) cs_str(a, CS_S_HTTPTYPE, p);
	if (solClient_msg_getHttpContentEncoding(m, &p) == 0) cs_str(a, CS_S_HTTPENC, p);
	if (solClient_msg_getExpiration(m, &a->exp) == 0) a->has |= CS_EXP;
	if (solClient_msg_getSenderTimestamp(m, &a->sendTS) == 0) a->has |= CS_SENDTS;
	if (solClient_msg_getRcvTimestamp(m, &a->rcvTS) == 0) a->has |= CS_RCVTS;
	if (solClient_msg_getSequenceNumber(m, &a->seq) == 0) a->has |= CS_SEQ;
	if (solClient_msg_getPriority(m, &a->prio) == 0 && a->prio != -1) a->has |= CS_PRIO;
	if (solClient_msg_getTimeToLive(m, &a->ttl) == 0) a->has |= CS_TTL;
	if (solClient_msg_getDeliveryCount(m, &a->dcount) == 0) a->has |= CS_DCOUNT;
	solClient_msg_getClassOfService(m, &a->cos);
	a->redelivered = solClient_msg_isRedelivered(m);
	if (solClient_msg_getBinaryAttachmentPtr(m, &a->payload, &a->payloadLen) == 0) a->has |= CS_PAYLOAD;
	uintptr_t props = 0;
	if (solClient_msg_getUserPropertyMap(m, &props) == 0) {
		a->has |= CS_PROPS;
		solClient_container_closeMapStream(&props);
	}
	cs_destination_t d;
	memset(&d, 0, sizeof(d));
	if (solClient_msg_getDestination(m, &d, sizeof(d)) == 0 && d.dest != NULL) {
		cs_str(a, CS_S_DEST, d.dest);
		a->destType = d.destType;
	}
	memset(&d, 0, sizeof(d));
	if (solClient_msg_getReplyTo(m, &d, sizeof(d)) == 0 && d.dest != NULL) {
		cs_str(a, CS_S_REPLYTO, d.dest);
	}
	if (solClient_msg_getReplicationGroupMessageId(m, &a->rgmidRaw, sizeof(a->rgmidRaw)) == 0) {
		a->has |= CS_RGMID;
		if (rgmidStr && solClient_replicationGroupMessageId_toString(&a->rgmidRaw, sizeof(a->rgmidRaw), a->rgmid, sizeof(a->rgmid)) == 0) {
			a->has |= CS_RGMIDSTR;
		}
	}
}

// cs_rgmid_string formats a raw replication group message id through CCSMP.
static int cs_rgmid_string(cs_rgmid_t *r, char *out, size_t size) {
	return solClient_replicationGroupMessageId_toString(r, sizeof(*r), out, size);
}
*/
import "C"

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"solace.dev/go/messaging/pkg/solace/message"
	"solace.dev/go/messaging/pkg/solace/message/sdt"
	"solace.dev/go/messaging/pkg/solace/resource"
)

// Destination types as reported in solace_destination_type.
const (
	DestinationTopic     = "topic"
	DestinationQueue     = "queue"
	DestinationTempTopic = "temporary_topic"
	DestinationTempQueue = "temporary_queue"
)

// Inbound is one guaranteed message taken from a queue, converted to plain Go
// values while its native handle is still valid. It stays tied to the flow
// that delivered it so that it can be settled there.
type Inbound struct {
	// Payload is the binary (or XML) attachment; string, map and stream
	// payloads are converted to bytes (maps and streams as JSON).
	Payload []byte
	// Meta holds the solace_* attributes that are present, with typed values
	// (int64, bool, string, time.Time); user properties are kept apart.
	Meta []MetaField
	// Properties are the user properties, converted to JSON-friendly values.
	Properties map[string]any

	// SenderTimestamp is zero when the publisher did not set one.
	SenderTimestamp time.Time
	// ReceiveTimestamp is when the API received the message, or when it was
	// converted if the API gave none.
	ReceiveTimestamp time.Time
	// Redelivered is the broker's redelivery flag.
	Redelivered bool
	// appID (when hasAppID) and rgmid make up DedupKey, which is built
	// only when asked for: most pipelines never de-duplicate.
	appID    string
	hasAppID bool
	rgmid    string

	msg  message.InboundMessage
	flow *flow
	gen  uint64
	// metaBuf backs Meta, so that a message's metadata costs no allocation
	// of its own (unless it has more fields than a message usually has).
	metaBuf [12]MetaField
	// strBuf backs the string attributes and the formatted replication
	// group message id when they fit, sparing them an allocation.
	strBuf [64]byte
}

// destCache remembers the last destination a flow delivered from, with its
// boxed metadata value: messages on a queue mostly share a few destinations,
// so a repeated one costs neither a copy nor an allocation. It belongs to one
// flow's dispatch goroutine.
type destCache struct {
	name  string
	boxed any
}

// attrsPool recycles what the native read fills in: it is needed only while
// a message is converted. (It cannot live inside Inbound: cgo's pointer
// check looks at the whole Go object an argument points into.)
var attrsPool = sync.Pool{New: func() any { return new(C.cs_attrs_t) }}

// newInboundFor starts the conversion of msg.
func newInboundFor(msg message.InboundMessage) *Inbound {
	in := &Inbound{msg: msg}
	in.Meta = in.metaBuf[:0]
	return in
}

// boxedDestType returns t as an interface value without allocating for the
// known destination types.
func boxedDestType(t string) any {
	switch t {
	case DestinationTopic:
		return boxedTopic
	case DestinationQueue:
		return boxedQueue
	}
	return t
}

var boxedTopic, boxedQueue any = DestinationTopic, DestinationQueue

// newInbound converts msg. It reads everything it needs from the native
// message, so the caller may dispose of msg once the message is settled.
func newInbound(msg message.InboundMessage, dc *destCache) *Inbound {
	if h, ok := handleOf(msg); ok {
		return newInboundNative(msg, h, dc)
	}
	return newInboundAPI(msg)
}

// newInboundNative reads the attributes straight from CCSMP in one call.
// It yields exactly what newInboundAPI yields (a test holds them equal).
// The string attributes share one allocation, and the replication group
// message id is formatted here from its raw bytes (see rgmidLayout), so a
// message costs few allocations beyond its payload.
// dc may be nil.
func newInboundNative(msg message.InboundMessage, h uintptr, dc *destCache) *Inbound {
	in := newInboundFor(msg)
	a := attrsPool.Get().(*C.cs_attrs_t)
	defer attrsPool.Put(a)
	layout := rgmidLayout(rgmidLayoutState.Load())
	C.cs_read_attrs(C.uintptr_t(h), a, boolInt(layout == rgmidUnknown || layout == rgmidByCCSMP))
	has := func(bit C.uint32_t) bool { return a.has&bit != 0 }
	if has(C.CS_PAYLOAD) {
		in.Payload = make([]byte, int(a.payloadLen))
		copy(in.Payload, unsafe.Slice((*byte)(a.payload), int(a.payloadLen)))
	} else {
		in.Payload = payloadOf(msg)
	}
	if layout == rgmidUnknown && has(C.CS_RGMIDSTR) {
		layout = learnRGMIDLayout(rawRGMID(a), C.GoString(&a.rgmid[0]))
	}
	// One buffer for every string attribute and the formatted id.
	n := int(a.strTotal)
	if has(C.CS_RGMID) {
		n += rgmidStrLen
	}
	buf := in.strBuf[:0]
	if n > len(in.strBuf) {
		buf = make([]byte, 0, n)
	}
	str := func(i int) (string, bool) {
		p := a.str[i]
		if p == nil {
			return "", false
		}
		l := int(a.len[i])
		if l == 0 {
			return "", true
		}
		off := len(buf)
		buf = append(buf, unsafe.Slice((*byte)(unsafe.Pointer(p)), l)...)
		return unsafe.String(&buf[off], l), true
	}
	add := func(k Attr, v any) { in.Meta = append(in.Meta, MetaField{Key: k, Value: v}) }
	millis := func(ms C.int64_t) time.Time {
		v := int64(ms)
		return time.Unix(v/1e3, (v%1e3)*1e6)
	}

	if p := a.str[C.CS_S_DEST]; p != nil && dc != nil && dc.boxed != nil &&
		int(a.len[C.CS_S_DEST]) == len(dc.name) &&
		string(unsafe.Slice((*byte)(unsafe.Pointer(p)), len(dc.name))) == dc.name {
		// The comparison does not allocate: the compiler compares the
		// bytes in place.
		add(MetaDestination, dc.boxed)
		if t := nativeDestType(int(a.destType)); t != "" {
			add(MetaDestinationType, boxedDestType(t))
		} else {
			add(MetaDestinationType, boxedDestType(destinationTypeOf(dc.name)))
		}
	} else if dest, ok := str(C.CS_S_DEST); ok {
		var boxed any = dest
		if dc != nil {
			// A copy of its own, so the cache does not keep this
			// message's buffer alive.
			dc.name = strings.Clone(dest)
			dc.boxed = any(dc.name)
			boxed = dc.boxed
		}
		add(MetaDestination, boxed)
		if t := nativeDestType(int(a.destType)); t != "" {
			add(MetaDestinationType, boxedDestType(t))
		} else {
			add(MetaDestinationType, boxedDestType(destinationTypeOf(dest)))
		}
	}
	appID, hasAppID := str(C.CS_S_APPID)
	if hasAppID {
		add(MetaApplicationMessageID, appID)
	}
	if v, ok := str(C.CS_S_APPTYPE); ok {
		add(MetaApplicationMessageType, v)
	}
	if v, ok := str(C.CS_S_CORR); ok {
		add(MetaCorrelationID, v)
	}
	if has(C.CS_PRIO) {
		add(MetaPriority, int64(a.prio))
	}
	in.Redelivered = a.redelivered != 0
	add(MetaRedelivered, in.Redelivered)
	if has(C.CS_DCOUNT) && a.dcount > 0 {
		add(MetaDeliveryCount, int64(a.dcount))
	}
	var exp time.Time
	if has(C.CS_EXP) && a.exp > 0 {
		exp = millis(a.exp)
	}
	var ttl int64
	if has(C.CS_TTL) && a.ttl > 0 {
		ttl = int64(a.ttl)
	}
	if v, ok := str(C.CS_S_REPLYTO); ok && v != "" {
		add(MetaReplyTo, v)
	}
	if has(C.CS_SENDTS) && a.sendTS != 0 {
		in.SenderTimestamp = millis(a.sendTS)
		add(MetaSenderTimestamp, in.SenderTimestamp)
	}
	if has(C.CS_RCVTS) && a.rcvTS != 0 {
		in.ReceiveTimestamp = millis(a.rcvTS)
	} else {
		in.ReceiveTimestamp = time.Now()
	}
	add(MetaReceiveTimestamp, in.ReceiveTimestamp)
	addExpiry(add, exp, ttl, in.ReceiveTimestamp)
	if has(C.CS_SEQ) {
		add(MetaSequenceNumber, int64(a.seq))
	}
	var rgmidStr string
	if has(C.CS_RGMID) {
		switch {
		case layout == rgmidWordsLE || layout == rgmidBigEndian:
			off := len(buf)
			buf = appendRGMID(buf, orderRGMID(rawRGMID(a), layout))
			rgmidStr = unsafe.String(&buf[off], len(buf)-off)
		case has(C.CS_RGMIDSTR):
			rgmidStr = C.GoString(&a.rgmid[0])
		}
		if rgmidStr != "" {
			add(MetaReplicationGroupMsgID, rgmidStr)
		}
	}
	if v, ok := str(C.CS_S_SENDER); ok {
		add(MetaSenderID, v)
	}
	add(MetaClassOfService, int64(a.cos))
	if v, ok := str(C.CS_S_HTTPTYPE); ok {
		add(MetaHTTPContentType, v)
	}
	if v, ok := str(C.CS_S_HTTPENC); ok {
		add(MetaHTTPContentEncoding, v)
	}
	in.appID, in.hasAppID, in.rgmid = appID, hasAppID, rgmidStr
	if has(C.CS_PROPS) {
		in.Properties = propertiesOf(msg)
	}
	return in
}

func boolInt(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// rgmidLayout is how CCSMP lays out the 16 opaque bytes of a replication
// group message id. Its string form ("rmid1:" and 32 hex digits in groups of
// 5, 11, 8 and 8) is the 128-bit value of the spooler id and the message id;
// formatting it here costs a fraction of CCSMP's toString. The layout is
// learnt from the first id CCSMP formats, and a layout that does not
// reproduce CCSMP's string exactly keeps CCSMP formatting every id.
type rgmidLayout int32

const (
	rgmidUnknown   rgmidLayout = iota
	rgmidWordsLE               // two little-endian 64-bit words, high first
	rgmidBigEndian             // one big-endian 128-bit value
	rgmidByCCSMP               // unrecognised: CCSMP formats every id
)

var rgmidLayoutState atomic.Int32

const rgmidStrLen = len("rmid1:") + 32 + 3

func rawRGMID(a *C.cs_attrs_t) [16]byte {
	var r [16]byte
	copy(r[:], unsafe.Slice((*byte)(unsafe.Pointer(&a.rgmidRaw.id[0])), 16))
	return r
}

// orderRGMID returns raw as the big-endian 128-bit value.
func orderRGMID(raw [16]byte, l rgmidLayout) [16]byte {
	if l == rgmidWordsLE {
		var v [16]byte
		binary.BigEndian.PutUint64(v[:8], binary.LittleEndian.Uint64(raw[:8]))
		binary.BigEndian.PutUint64(v[8:], binary.LittleEndian.Uint64(raw[8:]))
		return v
	}
	return raw
}

// appendRGMID appends the string form of the big-endian value v.
func appendRGMID(dst []byte, v [16]byte) []byte {
	var h [32]byte
	hex.Encode(h[:], v[:])
	dst = append(dst, "rmid1:"...)
	dst = append(dst, h[:5]...)
	dst = append(dst, '-')
	dst = append(dst, h[5:16]...)
	dst = append(dst, '-')
	dst = append(dst, h[16:24]...)
	dst = append(dst, '-')
	return append(dst, h[24:]...)
}

// learnRGMIDLayout finds the layout under which raw formats as want, CCSMP's
// string for it, and records it for every later message.
func learnRGMIDLayout(raw [16]byte, want string) rgmidLayout {
	l := rgmidByCCSMP
	for _, c := range []rgmidLayout{rgmidWordsLE, rgmidBigEndian} {
		if string(appendRGMID(nil, orderRGMID(raw, c))) == want {
			l = c
			break
		}
	}
	rgmidLayoutState.CompareAndSwap(int32(rgmidUnknown), int32(l))
	return rgmidLayout(rgmidLayoutState.Load())
}

// newInboundAPI converts msg through the Go API's getters only; used when
// the native handle cannot be reached.
func newInboundAPI(msg message.InboundMessage) *Inbound {
	in := newInboundFor(msg)
	in.Payload = payloadOf(msg)

	add := func(k Attr, v any) { in.Meta = append(in.Meta, MetaField{Key: k, Value: v}) }

	dest := msg.GetDestinationName()
	ext, extOK := readExtended(msg)
	if dest != "" {
		add(MetaDestination, dest)
	} else if extOK && ext.dest != "" {
		dest = ext.dest
		add(MetaDestination, dest)
	}
	if extOK && ext.destType != "" {
		add(MetaDestinationType, ext.destType)
	} else if dest != "" {
		add(MetaDestinationType, destinationTypeOf(dest))
	}
	appID, hasAppID := msg.GetApplicationMessageID()
	if hasAppID {
		add(MetaApplicationMessageID, appID)
	}
	if v, ok := msg.GetApplicationMessageType(); ok {
		add(MetaApplicationMessageType, v)
	}
	if v, ok := msg.GetCorrelationID(); ok {
		add(MetaCorrelationID, v)
	}
	if v, ok := msg.GetPriority(); ok {
		add(MetaPriority, int64(v))
	}
	in.Redelivered = msg.IsRedelivered()
	add(MetaRedelivered, in.Redelivered)
	if extOK && ext.deliveryCount > 0 {
		add(MetaDeliveryCount, int64(ext.deliveryCount))
	}
	// The API reports "no expiration" as the Unix epoch, not as a zero time.
	var exp time.Time
	if e := msg.GetExpiration(); !e.IsZero() && e.UnixNano() > 0 {
		exp = e
	}
	var ttl int64
	if extOK && ext.ttl > 0 {
		ttl = ext.ttl
	}
	if extOK && ext.replyTo != "" {
		add(MetaReplyTo, ext.replyTo)
	}
	if ts, ok := msg.GetSenderTimestamp(); ok && !ts.IsZero() {
		in.SenderTimestamp = ts
		add(MetaSenderTimestamp, ts)
	}
	if ts, ok := msg.GetTimeStamp(); ok && !ts.IsZero() {
		in.ReceiveTimestamp = ts
	} else {
		in.ReceiveTimestamp = time.Now()
	}
	add(MetaReceiveTimestamp, in.ReceiveTimestamp)
	addExpiry(add, exp, ttl, in.ReceiveTimestamp)
	if v, ok := msg.GetSequenceNumber(); ok {
		add(MetaSequenceNumber, v)
	}
	var rgmidStr string
	if id, ok := msg.GetReplicationGroupMessageID(); ok && id != nil {
		rgmidStr = id.String()
		add(MetaReplicationGroupMsgID, rgmidStr)
	}
	if v, ok := msg.GetSenderID(); ok {
		add(MetaSenderID, v)
	}
	add(MetaClassOfService, int64(msg.GetClassOfService()))
	if v, ok := msg.GetHTTPContentType(); ok {
		add(MetaHTTPContentType, v)
	}
	if v, ok := msg.GetHTTPContentEncoding(); ok {
		add(MetaHTTPContentEncoding, v)
	}

	in.appID, in.hasAppID, in.rgmid = appID, hasAppID, rgmidStr
	in.Properties = propertiesOf(msg)
	return in
}

// addExpiry sets the time to live and the expiration. The expiration is not
// carried on the wire: CCSMP computes it from the TTL only when the session
// property CALCULATE_MESSAGE_EXPIRATION is on, which the Go client never
// sets. We compute it the same way, receive time plus TTL.
func addExpiry(add func(Attr, any), exp time.Time, ttl int64, received time.Time) {
	if ttl > 0 {
		add(MetaTimeToLive, ttl)
		if exp.IsZero() {
			exp = received.Add(time.Duration(ttl) * time.Millisecond)
		}
	}
	if !exp.IsZero() {
		add(MetaExpiration, exp)
	}
}

// DedupKey is the application message id or, without one, the replication
// group message id, prefixed by which it is; "" when the message has neither.
func (in *Inbound) DedupKey() string {
	switch {
	case in.hasAppID && in.appID != "":
		return "app:" + in.appID
	case in.rgmid != "":
		return "rgmid:" + in.rgmid
	}
	return ""
}

func propertiesOf(msg message.InboundMessage) map[string]any {
	props := msg.GetProperties()
	if len(props) == 0 {
		return nil
	}
	out := make(map[string]any, len(props))
	for k, v := range props {
		out[k] = convertSDT(v)
	}
	return out
}

// payloadOf returns the message body as bytes whatever its SDT form.
func payloadOf(msg message.InboundMessage) []byte {
	if b, ok := msg.GetPayloadAsBytes(); ok {
		return b
	}
	if s, ok := msg.GetPayloadAsString(); ok {
		return []byte(s)
	}
	if m, ok := msg.GetPayloadAsMap(); ok {
		b, _ := json.Marshal(convertSDT(m))
		return b
	}
	if s, ok := msg.GetPayloadAsStream(); ok {
		b, _ := json.Marshal(convertSDT(s))
		return b
	}
	return nil
}

// convertSDT maps structured data values onto types Benthos and Bloblang
// handle natively: integers become int64 (uint64 stays uint64 when it does not
// fit), floats float64, maps map[string]any, streams []any and destinations
// their names.
func convertSDT(v sdt.Data) any {
	switch t := v.(type) {
	case nil, bool, string, int64, float64, uint64:
		return t
	case []byte:
		return t
	case int8:
		return int64(t)
	case int16:
		return int64(t)
	case int32:
		return int64(t)
	case int:
		return int64(t)
	case uint8:
		return int64(t)
	case uint16:
		return int64(t)
	case uint32:
		return int64(t)
	case uint:
		return uint64(t)
	case float32:
		return float64(t)
	case sdt.WChar:
		return string(rune(t))
	case sdt.Map:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[k] = convertSDT(e)
		}
		return m
	case sdt.Stream:
		s := make([]any, len(t))
		for i, e := range t {
			s[i] = convertSDT(e)
		}
		return s
	case resource.Destination:
		return t.GetName()
	default:
		// Unknown field types arrive as raw bytes in the API; anything else
		// is kept printable rather than dropped.
		if b, ok := t.([]byte); ok {
			return base64.StdEncoding.EncodeToString(b)
		}
		return t
	}
}

// destinationTypeOf guesses the destination type from a name when the native
// handle is not readable: queue network topics start with #P2P/QUE/.
func destinationTypeOf(name string) string {
	switch {
	case strings.HasPrefix(name, "#P2P/QTMP/"):
		return DestinationTempQueue
	case strings.HasPrefix(name, "#P2P/QUE/"):
		return DestinationQueue
	case strings.HasPrefix(name, "#P2P/TTMP/"):
		return DestinationTempTopic
	default:
		return DestinationTopic
	}
}

// extended holds the attributes CCSMP has but the Go API does not expose.
type extended struct {
	ttl           int64 // milliseconds
	deliveryCount int32
	replyTo       string
	dest          string
	destType      string
}

// handleLayout records, per concrete message type, whether its first word is
// the native message handle, as it is in solace.dev/go/messaging v1.10.1
// (InboundMessageImpl embeds MessageImpl whose first field is
// messagePointer). Checked once per type through reflection, so a client
// upgrade that changes the layout turns the extended attributes off instead
// of reading garbage.
var handleLayout sync.Map // reflect.Type -> bool

func handleOf(msg message.Message) (uintptr, bool) {
	if msg == nil {
		return 0, false
	}
	rt := reflect.TypeOf(msg)
	okAny, known := handleLayout.Load(rt)
	if !known {
		okAny, _ = handleLayout.LoadOrStore(rt, layoutHoldsHandle(rt))
	}
	if !okAny.(bool) {
		return 0, false
	}
	if d, ok := msg.(interface{ IsDisposed() bool }); ok && d.IsDisposed() {
		return 0, false
	}
	p := reflect.ValueOf(msg).UnsafePointer()
	h := *(*uintptr)(p)
	return h, h != 0
}

func layoutHoldsHandle(rt reflect.Type) bool {
	if rt.Kind() != reflect.Pointer || rt.Elem().Kind() != reflect.Struct {
		return false
	}
	st := rt.Elem()
	for st.Kind() == reflect.Struct && st.NumField() > 0 {
		f := st.Field(0)
		if f.Offset != 0 {
			return false
		}
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			st = f.Type
			continue
		}
		// cgo spells uintptr_t as a C unsigned long, so the field is a
		// uint64 (or uintptr) the size of a pointer.
		k := f.Type.Kind()
		return f.Name == "messagePointer" &&
			(k == reflect.Uintptr || k == reflect.Uint64 || k == reflect.Uint) &&
			f.Type.Size() == unsafe.Sizeof(uintptr(0))
	}
	return false
}

// readExtended reads TTL, delivery count, reply-to and the destination with
// its type straight from CCSMP. The Go API's only other route to them is the
// message dump, which costs about 140 µs for a 1 KiB message.
func readExtended(msg message.Message) (extended, bool) {
	var e extended
	h, ok := handleOf(msg)
	if !ok {
		return e, false
	}
	ch := C.uintptr_t(h)
	var ttl C.int64_t
	if C.solClient_msg_getTimeToLive(ch, &ttl) == 0 {
		e.ttl = int64(ttl)
	}
	var dc C.int32_t
	if C.solClient_msg_getDeliveryCount(ch, &dc) == 0 {
		e.deliveryCount = int32(dc)
	}
	var d C.cs_destination_t
	if C.solClient_msg_getReplyTo(ch, &d, C.size_t(unsafe.Sizeof(d))) == 0 && d.dest != nil {
		e.replyTo = C.GoString(d.dest)
	}
	d = C.cs_destination_t{}
	if C.solClient_msg_getDestination(ch, &d, C.size_t(unsafe.Sizeof(d))) == 0 && d.dest != nil {
		e.dest = C.GoString(d.dest)
		e.destType = nativeDestType(int(d.destType))
	}
	return e, true
}

func nativeDestType(t int) string {
	switch t {
	case 0:
		return DestinationTopic
	case 1:
		return DestinationQueue
	case 2:
		return DestinationTempTopic
	case 3:
		return DestinationTempQueue
	}
	return ""
}
