package session

// The native read path: received messages are converted by reading their
// attributes straight from CCSMP, the C library inside the Go client, in one
// cgo call. It is the input's fast path, and the only route to the
// attributes the Go API does not expose (TTL, delivery count, reply-to and
// the destination type). It depends on two things outside the Go client's
// API, both checked before use:
//   - the CCSMP prototypes below, declared by hand because the client keeps
//     its headers in an internal package;
//   - the client's private message layout: the native handle is the first
//     word of the message (field messagePointer in v1.10.1), read through
//     reflect and unsafe.
// probeNative checks the client version and reads a message it built through
// this path at start-up; when either check fails the receiver converts
// through the Go API alone (inbound.go) and says so (see Receiver).

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
extern int solClient_msg_getBinaryAttachmentString(uintptr_t msg_p, const char **buf);
extern int solClient_msg_getBinaryAttachmentMap(uintptr_t msg_p, uintptr_t *map_p);
extern int solClient_msg_getBinaryAttachmentStream(uintptr_t msg_p, uintptr_t *stream_p);
extern int solClient_msg_getUserPropertyMap(uintptr_t msg_p, uintptr_t *map_p);
extern int solClient_container_closeMapStream(uintptr_t *map_p);
extern int solClient_msg_getMsgId(uintptr_t msg_p, uint64_t *msgId_p);
extern int solClient_msg_free(uintptr_t *msg_p);
extern int solClient_flow_getDestination(uintptr_t flow_p, cs_destination_t *dest_p, size_t destSize);
extern int solClient_flow_settleMsg(uintptr_t flow_p, uint64_t msgId, int outcome);
typedef struct { int subCode; uint32_t responseCode; char errorStr[256]; } cs_errorInfo_t;
extern cs_errorInfo_t *solClient_getLastErrorInfo(void);
typedef struct { char id[16]; } cs_rgmid_t;
extern int solClient_msg_getReplicationGroupMessageId(uintptr_t msg_p, cs_rgmid_t *rgmid_p, size_t size);
extern int solClient_replicationGroupMessageId_toString(cs_rgmid_t *rgmid_p, size_t size, char *str, size_t strSize);

// Presence bits of cs_attrs_t.has.
enum {
	CS_EXP = 1 << 6, CS_SENDTS = 1 << 7,
	CS_RCVTS = 1 << 8, CS_SEQ = 1 << 9, CS_PRIO = 1 << 10, CS_PROPS = 1 << 11,
	CS_PAYLOAD = 1 << 12, CS_RGMID = 1 << 13, CS_RGMIDSTR = 1 << 14,
	CS_TTL = 1 << 16, CS_DCOUNT = 1 << 17, CS_MSGID = 1 << 18
};

// SDT types of a structured payload (the first byte's tag >> 2).
enum { CS_SDT_STRING = 7, CS_SDT_MAP = 10, CS_SDT_STREAM = 11 };

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
	uint64_t msgId;
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
	if (solClient_msg_getMsgId(m, &a->msgId) == 0) a->has |= CS_MSGID;
	solClient_msg_getClassOfService(m, &a->cos);
	a->redelivered = solClient_msg_isRedelivered(m);
	if (solClient_msg_getBinaryAttachmentPtr(m, &a->payload, &a->payloadLen) == 0) {
		a->has |= CS_PAYLOAD;
		// A structured payload is not its bytes: an SDT string gives its
		// text; a map or stream is left to the Go side (payloadOf). The
		// SDT tag (type << 2) of the first byte tells which to ask CCSMP
		// about, so a plain payload costs no further call.
		int sdtType = a->payloadLen > 0 ? ((const unsigned char *)a->payload)[0] >> 2 : -1;
		const char *text = NULL;
		uintptr_t c = 0;
		if (sdtType == CS_SDT_STRING && solClient_msg_getBinaryAttachmentString(m, &text) == 0 && text != NULL) {
			a->payload = (void *)text;
			a->payloadLen = (uint32_t)strlen(text);
		} else if ((sdtType == CS_SDT_MAP && solClient_msg_getBinaryAttachmentMap(m, &c) == 0) ||
		           (sdtType == CS_SDT_STREAM && solClient_msg_getBinaryAttachmentStream(m, &c) == 0)) {
			solClient_container_closeMapStream(&c);
			a->has &= ~CS_PAYLOAD;
		}
	}
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

// cs_settle_n settles n messages, each by its id on its flow, in one cgo
// call, and frees those whose handle msg is set (to 0) as the Go API's
// Dispose would. A failure leaves its return code and subcode in the item
// and, for the first failure, CCSMP's error string (thread-local, so read in
// the same call) in errStr. The Go API's Settle makes three cgo calls per
// message, each pinning the goroutine to its thread, one of them to read the
// message id again, and Dispose a fourth.
typedef struct { uintptr_t flow; uint64_t msgId; uintptr_t msg; int32_t rc; int32_t subCode; } cs_settle_item_t;
static void cs_settle_n(cs_settle_item_t *it, int n, int outcome, char *errStr, size_t errSize) {
	for (int i = 0; i < n; i++) {
		it[i].rc = solClient_flow_settleMsg(it[i].flow, it[i].msgId, outcome);
		it[i].subCode = 0;
		if (it[i].rc != 0) {
			cs_errorInfo_t *e = solClient_getLastErrorInfo();
			if (e != NULL) {
				it[i].subCode = e->subCode;
				if (errStr[0] == 0) {
					strncpy(errStr, e->errorStr, errSize - 1);
					errStr[errSize - 1] = 0;
				}
			}
		}
		if (it[i].msg != 0) solClient_msg_free(&it[i].msg);
	}
}

// cs_flow_queue returns the name of the queue a flow is bound to, or NULL.
static const char *cs_flow_queue(uintptr_t flow) {
	cs_destination_t d;
	memset(&d, 0, sizeof(d));
	if (solClient_flow_getDestination(flow, &d, sizeof(d)) != 0) return NULL;
	return d.dest;
}

// cs_rgmid_string formats a raw replication group message id through CCSMP.
static int cs_rgmid_string(cs_rgmid_t *r, char *out, size_t size) {
	return solClient_replicationGroupMessageId_toString(r, sizeof(*r), out, size);
}
*/
import "C"

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/config"
	"solace.dev/go/messaging/pkg/solace/message"
)

// nativeReader converts received messages through CCSMP. read returns false
// when msg's native handle cannot be reached (the caller then uses the Go
// API).
type nativeReader interface {
	read(in *Inbound, dc *destCache) bool
}

// nativeVerifiedVersions are the Go client versions (as the client reports
// them, with its CCSMP version) whose message layout and CCSMP prototypes
// this file was checked against.
var nativeVerifiedVersions = []string{"solace-messaging-go-client 1.10.1 / ccsmp 7.33.2.3"}

// nativeOnlyMeta are the metadata keys only the native path can fill in.
// The expiration is among them because, without a TTL, the Go API reports
// none (see addExpiry).
var nativeOnlyMeta = []Attr{MetaTimeToLive, MetaExpiration, MetaDeliveryCount, MetaReplyTo}

// ccsmpReader is the nativeReader of the verified client versions.
type ccsmpReader struct{}

func (ccsmpReader) read(in *Inbound, dc *destCache) bool {
	h, ok := handleOf(in.msg)
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
// client. It is checked once per process (the client is linked in): the
// version the client reports must be a verified one, and a message built
// with known attributes must read back through the native path.
func probeNative(svc solace.MessagingService) (nativeReader, error) {
	probeOnce.Do(func() {
		probeReader, probeErr = probe(svc.Info().GetAPIVersion(), svc)
	})
	return probeReader, probeErr
}

func probe(version string, svc solace.MessagingService) (nativeReader, error) {
	if !slices.Contains(nativeVerifiedVersions, version) {
		return nil, fmt.Errorf("the Solace Go client reports version %q, not one the native read was verified with (%q)",
			version, strings.Join(nativeVerifiedVersions, `", "`))
	}
	const ttl, appID = 4321, "native-probe"
	msg, err := svc.MessageBuilder().
		WithApplicationMessageID(appID).
		WithProperty(config.MessagePropertyPersistentTimeToLive, ttl).
		BuildWithByteArrayPayload([]byte("probe"))
	if err != nil {
		return nil, fmt.Errorf("building the probe message: %w", err)
	}
	defer msg.Dispose()
	h, ok := handleOf(msg)
	if !ok {
		return nil, fmt.Errorf("the native handle of %T is not where version %s keeps it", msg, version)
	}
	a := attrsPool.Get().(*C.cs_attrs_t)
	defer attrsPool.Put(a)
	C.cs_read_attrs(C.uintptr_t(h), a, 0)
	if a.has&C.CS_TTL == 0 || int64(a.ttl) != ttl || a.str[C.CS_S_APPID] == nil ||
		C.GoString(a.str[C.CS_S_APPID]) != appID {
		return nil, errors.New("the probe message did not read back through CCSMP")
	}
	return ccsmpReader{}, nil
}

// attrsPool recycles what the native read fills in: it is needed only while
// a message is converted. (It cannot live inside Inbound: cgo's pointer
// check looks at the whole Go object an argument points into.)
var attrsPool = sync.Pool{New: func() any { return new(C.cs_attrs_t) }}

// newInboundNative reads the attributes straight from CCSMP in one call.
// It yields what newInboundAPI yields plus the attributes the Go API hides
// (nativeOnlyMeta; a test holds the rest equal).
// The string attributes share one allocation, and the replication group
// message id is formatted here from its raw bytes (see rgmidLayout), so a
// message costs few allocations beyond its payload.
// dc may be nil.
func newInboundNative(msg message.InboundMessage, h uintptr, dc *destCache) *Inbound {
	return readNative(&Inbound{msg: msg}, h, dc)
}

// readNative converts in.msg, whose native handle is h, into in as
// newInboundNative does, and returns in.
func readNative(in *Inbound, h uintptr, dc *destCache) *Inbound {
	msg := in.msg
	startConversion(in, dc)
	a := attrsPool.Get().(*C.cs_attrs_t)
	defer attrsPool.Put(a)
	layout := rgmidLayout(rgmidLayoutState.Load())
	C.cs_read_attrs(C.uintptr_t(h), a, boolInt(layout == rgmidUnknown || layout == rgmidByCCSMP))
	has := func(bit C.uint32_t) bool { return a.has&bit != 0 }
	if has(C.CS_PAYLOAD) {
		// append rather than make and copy: growing a slice writes the
		// new memory once, make zeroes it first.
		in.Payload = append([]byte{}, unsafe.Slice((*byte)(a.payload), int(a.payloadLen))...)
	} else {
		in.Payload = payloadOf(msg)
	}
	if layout == rgmidUnknown && has(C.CS_RGMIDSTR) {
		layout = learnRGMIDLayout(rawRGMID(a), C.GoString(&a.rgmid[0]))
	}
	// The destination usually repeats the flow's last one (see destCache).
	p := a.str[C.CS_S_DEST]
	destCached := p != nil && dc != nil && dc.boxed != nil &&
		int(a.len[C.CS_S_DEST]) == len(dc.name) &&
		string(unsafe.Slice((*byte)(unsafe.Pointer(p)), len(dc.name))) == dc.name
	// One buffer for every string attribute (but a cached destination) and
	// the formatted id.
	n := int(a.strTotal)
	if destCached {
		n -= len(dc.name)
	}
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

	if destCached {
		// The comparison above does not allocate: the compiler compares
		// the bytes in place.
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
		switch {
		case dc == nil:
			add(MetaSenderTimestamp, in.SenderTimestamp)
		case dc.sentBoxed != nil && dc.sentMS == int64(a.sendTS):
			add(MetaSenderTimestamp, dc.sentBoxed)
		default:
			dc.sentMS, dc.sentBoxed = int64(a.sendTS), any(in.SenderTimestamp)
			add(MetaSenderTimestamp, dc.sentBoxed)
		}
	}
	if has(C.CS_RCVTS) && a.rcvTS != 0 {
		in.ReceiveTimestamp = millis(a.rcvTS)
	} else if in.ReceiveTimestamp.IsZero() {
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
	in.msgID, in.hasMsgID = uint64(a.msgId), has(C.CS_MSGID)
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

// handleLayout records, per concrete message type, whether its first word is
// the native message handle, as it is in solace.dev/go/messaging v1.10.1
// (InboundMessageImpl embeds MessageImpl whose first field is
// messagePointer). Checked once per type through reflection, so a client
// upgrade that changes the layout turns the native read off (and the
// receiver counts the fallback) instead of reading garbage.
var handleLayout typeMemo[bool]

func handleOf(msg message.Message) (uintptr, bool) {
	if msg == nil {
		return 0, false
	}
	if !handleLayout.get(reflect.TypeOf(msg), layoutHoldsHandle) {
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

// flowHandleOf returns the CCSMP handle of the flow behind pr, read from the
// client's private fields as in v1.10.1 (persistentMessageReceiverImpl's
// internalFlow, a *core.ccsmpBackedPersistentReceiver whose flow, a
// *ccsmp.SolClientFlow, holds the handle as pointer). Every step checks the
// type and field it expects, and the handle must name a flow bound to queue
// (CCSMP validates handles, so a wrong word is refused, not followed): with
// any doubt it returns false and messages are settled through the Go API.
func flowHandleOf(pr solace.PersistentMessageReceiver, queue string) (uintptr, bool) {
	h, ok := flowHandleField(pr)
	if !ok || h == 0 {
		return 0, false
	}
	p := C.cs_flow_queue(C.uintptr_t(h))
	if p == nil || C.GoString(p) != queue {
		return 0, false
	}
	return h, true
}

func flowHandleField(pr solace.PersistentMessageReceiver) (h uintptr, ok bool) {
	defer func() {
		// reflect panics on a shape it does not expect; that only means
		// the layout is not the verified one.
		if recover() != nil {
			h, ok = 0, false
		}
	}()
	step := func(v reflect.Value, typ, field string) (reflect.Value, bool) {
		if v.Kind() != reflect.Pointer || v.IsNil() || v.Type().String() != typ || v.Elem().Kind() != reflect.Struct {
			return reflect.Value{}, false
		}
		f := v.Elem().FieldByName(field)
		return f, f.IsValid()
	}
	v, ok := step(reflect.ValueOf(pr), "*receiver.persistentMessageReceiverImpl", "internalFlow")
	if !ok || v.Kind() != reflect.Interface || v.IsNil() {
		return 0, false
	}
	if v, ok = step(v.Elem(), "*core.ccsmpBackedPersistentReceiver", "flow"); !ok {
		return 0, false
	}
	if v, ok = step(v, "*ccsmp.SolClientFlow", "pointer"); !ok {
		return 0, false
	}
	switch v.Kind() {
	case reflect.Uintptr, reflect.Uint64, reflect.Uint:
		if v.Type().Size() != unsafe.Sizeof(uintptr(0)) {
			return 0, false
		}
		return uintptr(v.Uint()), true
	}
	return 0, false
}

// settleChunk is how many messages one cgo call settles at most (the items
// live in a pooled settleBuf).
const settleChunk = 32

// settleBuf is settleNative's scratch memory.
type settleBuf struct {
	items  [settleChunk]C.cs_settle_item_t
	how    [settleChunk]uint8
	errStr [256]C.char
}

var settlePool = sync.Pool{New: func() any { return new(settleBuf) }}

// settleNative settles ins (at most settleChunk, each with its flow's native
// handle and its message id) with outcome o and disposes of them, in one cgo
// call (cs_settle_n), and appends a wrapped error (see settleErr) for each
// that failed to errs. Where a message's layout is the verified one (see
// disposedOffset) it claims the message's disposed flag as the API's Dispose
// does, the call frees the native message and the finalizer is dropped;
// otherwise the message is settled, then disposed of through the API.
func (r *Receiver) settleNative(ins []*Inbound, o Outcome, errs []error) []error {
	const (
		freed = iota
		disposeAfter
		disposedAlready
	)
	// The items live in pooled memory, not on the stack: cgo keeps a stack
	// object passed to C on the stack only for a function marked
	// nocallback, and CCSMP may call the Go client's log callback from
	// inside a settlement.
	buf := settlePool.Get().(*settleBuf)
	defer settlePool.Put(buf)
	items, how, errStr := &buf.items, &buf.how, &buf.errStr
	errStr[0] = 0
	for i, in := range ins {
		it := &items[i]
		it.flow, it.msgId, it.msg = C.uintptr_t(in.flow.handle), C.uint64_t(in.msgID), 0
		how[i] = freed
		off, ok := disposedOffset(in.msg)
		if !ok {
			how[i] = disposeAfter
			continue
		}
		p := reflect.ValueOf(in.msg).UnsafePointer()
		if !atomic.CompareAndSwapInt32((*int32)(unsafe.Add(p, off)), 0, 1) {
			how[i] = disposedAlready
			continue
		}
		// The handle moves to the item, which the call frees; the message
		// is left without one, as the API's free leaves it.
		h := (*uintptr)(p)
		it.msg, *h = C.uintptr_t(*h), 0
	}
	C.cs_settle_n(&items[0], C.int(len(ins)), outcomeC(o), &errStr[0], C.size_t(len(errStr)))
	for i, in := range ins {
		switch how[i] {
		case freed:
			runtime.SetFinalizer(in.msg, nil)
		case disposeAfter:
			in.msg.Dispose()
		}
		if it := &items[i]; it.rc != 0 {
			errs = append(errs, r.settleErr(in, o, fmt.Errorf("solClient_flow_settleMsg returned %d, subcode %d: %s",
				int(it.rc), int(it.subCode), C.GoString(&errStr[0]))))
		}
	}
	return errs
}

func outcomeC(o Outcome) C.int {
	switch o {
	case Failed:
		return 2 // SOLCLIENT_OUTCOME_FAILED
	case Rejected:
		return 3 // SOLCLIENT_OUTCOME_REJECTED
	}
	return 0 // SOLCLIENT_OUTCOME_ACCEPTED
}

// disposeLayout records, per concrete message type, the offset of the
// disposed flag (an int32 the API's Dispose sets by compare-and-swap) when
// the type is laid out as in v1.10.1: the handle first (layoutHoldsHandle),
// then disposed, in the embedded MessageImpl.
var disposeLayout typeMemo[int] // the offset, or -1 when not verified

func disposedOffset(msg message.InboundMessage) (uintptr, bool) {
	off := disposeLayout.get(reflect.TypeOf(msg), findDisposed)
	return uintptr(off), off >= 0
}

// typeMemo remembers what compute says of each concrete message type, with
// the last type asked about in front of the map: every message a client
// delivers is of one type, and hashing the type for a map lookup, twice per
// message (read and settle), cost more than the rest of a settlement's Go
// side.
type typeMemo[V any] struct {
	last atomic.Pointer[typeMemoEntry[V]]
	all  sync.Map // reflect.Type -> V
}

type typeMemoEntry[V any] struct {
	rt reflect.Type
	v  V
}

func (m *typeMemo[V]) get(rt reflect.Type, compute func(reflect.Type) V) V {
	if e := m.last.Load(); e != nil && e.rt == rt {
		return e.v
	}
	v, known := m.all.Load(rt)
	if !known {
		v, _ = m.all.LoadOrStore(rt, compute(rt))
	}
	m.last.Store(&typeMemoEntry[V]{rt: rt, v: v.(V)})
	return v.(V)
}

func findDisposed(rt reflect.Type) int {
	if !layoutHoldsHandle(rt) {
		return -1
	}
	st := rt.Elem()
	// Down the embedded first fields to the struct holding the handle.
	for st.Field(0).Anonymous && st.Field(0).Type.Kind() == reflect.Struct {
		st = st.Field(0).Type
	}
	if st.NumField() < 2 {
		return -1
	}
	f := st.Field(1)
	if f.Name != "disposed" || f.Type.Kind() != reflect.Int32 {
		return -1
	}
	// The embedded structs all sit at offset 0 (layoutHoldsHandle).
	return int(f.Offset)
}
