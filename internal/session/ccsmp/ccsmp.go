// Package ccsmp reads received messages and settles them through CCSMP, the C
// library inside the Solace Go client, in one cgo call each: the solace
// input's fast path, and the only route to the attributes the Go API does
// not expose (TTL, delivery count, reply-to and the destination type); and
// it sets the reply flag the API sets only through a Replier (reply.go). It is
// the one package to check at every client upgrade, for it depends on two
// things outside the client's API:
//   - the CCSMP prototypes below, declared by hand because the client keeps
//     its headers in an internal package;
//   - the client's private layout (layout.go): a message's native handle is
//     its first word (field messagePointer in v1.10.1), followed by its
//     disposed flag, and a receiver's flow handle sits three private fields
//     down, all read through reflect and unsafe.
//
// Probe (probe.go) checks the client version against VerifiedVersions and
// reads a message it built through this path; every layout step checks the
// type and field it expects. With any doubt the caller converts and settles
// through the Go API alone. The package speaks CCSMP in plain Go values and
// knows nothing of its callers (internal/session).
package ccsmp

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
// solClient_field_t: a type, a length and a union whose largest member is a
// solClient_destination_t.
typedef struct {
	int type;
	uint32_t length;
	union { uintptr_t container; cs_destination_t dest; } value;
} cs_field_t;
extern int solClient_msg_getBinaryAttachmentField(uintptr_t msg_p, cs_field_t *field_p, size_t fieldSize);
extern int solClient_msg_getUserPropertyMap(uintptr_t msg_p, uintptr_t *map_p);
extern int solClient_container_closeMapStream(uintptr_t *map_p);
extern int solClient_msg_getMsgId(uintptr_t msg_p, uint64_t *msgId_p);
extern int solClient_msg_getDeliveryMode(uintptr_t msg_p, uint32_t *mode_p);
extern int solClient_msg_free(uintptr_t *msg_p);
extern int solClient_flow_getDestination(uintptr_t flow_p, cs_destination_t *dest_p, size_t destSize);
extern int solClient_flow_settleMsg(uintptr_t flow_p, uint64_t msgId, int outcome);
extern int solClient_flow_getRxStat(uintptr_t flow_p, int rxStat, uint64_t *value_p);
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

// The field types of solClient_fieldType_t that are containers, and the
// SDT wire types that encode them.
enum { CS_FIELD_MAP = 14, CS_FIELD_STREAM = 15 };
enum { CS_SDT_MAP = 10, CS_SDT_STREAM = 11 };

// SOLCLIENT_DELIVERY_MODE_DIRECT.
enum { CS_DELIVERY_MODE_DIRECT = 0x00 };

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
// attribute, the largest cost per message the input would otherwise pay.
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
	if (solClient_msg_getMsgId(m, &a->msgId) == 0) a->has |= CS_MSGID;
	// Only a guaranteed message has a delivery count. Asked of a direct
	// one, CCSMP logs and formats an error string, which costs more than
	// all the other attributes together.
	uint32_t mode = 0;
	if (solClient_msg_getDeliveryMode(m, &mode) == 0 && mode != CS_DELIVERY_MODE_DIRECT &&
	    solClient_msg_getDeliveryCount(m, &a->dcount) == 0) a->has |= CS_DCOUNT;
	solClient_msg_getClassOfService(m, &a->cos);
	a->redelivered = solClient_msg_isRedelivered(m);
	if (solClient_msg_getBinaryAttachmentPtr(m, &a->payload, &a->payloadLen) == 0) {
		a->has |= CS_PAYLOAD;
		// A map or stream is left to the Go side (no HasPayload), as the
		// client's own check of the attachment says, which logs nothing for
		// plain bytes; asking for a map or stream outright makes CCSMP log
		// "Bad Length in structured data TLV" for bytes that merely start
		// like one.
		// Only an attachment whose first byte is an SDT map or stream tag
		// (type << 2 | length bytes - 1) can be one: CCSMP's own check
		// decodes the attachment, costly for the plain bytes most are.
		const unsigned char *b = a->payload;
		int t = a->payloadLen > 0 ? b[0] >> 2 : 0;
		cs_field_t f;
		memset(&f, 0, sizeof(f));
		if ((t == CS_SDT_MAP || t == CS_SDT_STREAM) &&
		    solClient_msg_getBinaryAttachmentField(m, &f, sizeof(f)) == 0 &&
		    (f.type == CS_FIELD_MAP || f.type == CS_FIELD_STREAM)) {
			solClient_container_closeMapStream(&f.value.container);
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

// cs_flow_received returns, in *n, the data messages a flow received
// (SOLCLIENT_STATS_RX_PERSISTENT_MSGS and _NONPERSISTENT_MSGS: a queue also
// spools direct messages), or a non-zero code for a handle CCSMP refuses.
static int cs_flow_received(uintptr_t flow, uint64_t *n) {
	uint64_t p = 0, np = 0;
	int rc = solClient_flow_getRxStat(flow, 11, &p);
	if (rc == 0) rc = solClient_flow_getRxStat(flow, 13, &np);
	*n = p + np;
	return rc;
}

// cs_rgmid_string formats a raw replication group message id through CCSMP.
static int cs_rgmid_string(cs_rgmid_t *r, char *out, size_t size) {
	return solClient_replicationGroupMessageId_toString(r, sizeof(*r), out, size);
}
*/
import "C"

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"solace.dev/go/messaging/pkg/solace/message"
)

// Str names a string attribute of Message.
type Str int

// The string attributes, in the order of cs_attrs_t.str.
const (
	AppMessageID Str = iota
	AppMessageType
	CorrelationID
	SenderID
	HTTPContentType
	HTTPContentEncoding
	Destination
	ReplyTo
	numStr
)

// Has is a set of presence bits of Message.
type Has uint32

// The presence bits, those of cs_attrs_t.has.
const (
	HasExpiration       Has = C.CS_EXP
	HasSenderTimestamp  Has = C.CS_SENDTS
	HasReceiveTimestamp Has = C.CS_RCVTS
	HasSequenceNumber   Has = C.CS_SEQ
	HasPriority         Has = C.CS_PRIO
	HasProperties       Has = C.CS_PROPS
	HasPayload          Has = C.CS_PAYLOAD
	HasRGMID            Has = C.CS_RGMID
	HasTTL              Has = C.CS_TTL
	HasDeliveryCount    Has = C.CS_DCOUNT
	HasMsgID            Has = C.CS_MSGID
)

// Destination types, as CCSMP numbers them (Message.DestType).
const (
	DestTopic     = 0
	DestQueue     = 1
	DestTempTopic = 2
	DestTempQueue = 3
)

// Message is what Read reads of a received message, as plain Go values.
// Times are CCSMP's milliseconds since the Unix epoch.
type Message struct {
	Has Has
	// Payload is a copy of the binary attachment (HasPayload); a message
	// with another payload form is read through the Go API.
	Payload []byte
	str     [numStr]string
	hasStr  uint32
	// DestKnown says the destination equals Read's knownDest and was not
	// copied.
	DestKnown bool
	// Redelivered is the broker's redelivery flag.
	Redelivered bool
	DestType    int
	Expiration  int64
	// SenderTimestamp, ReceiveTimestamp, SequenceNumber and TTL are valid
	// with their Has bits.
	SenderTimestamp  int64
	ReceiveTimestamp int64
	SequenceNumber   int64
	TTL              int64
	// MsgID is the message's id on its flow, for Settle.
	MsgID         uint64
	Priority      int32
	DeliveryCount int32
	// ClassOfService is 0 to 2.
	ClassOfService uint32
	// RGMID is the replication group message id in its string form, ""
	// without one.
	RGMID string
}

// Str returns the string attribute i, and whether the message has it.
func (m *Message) Str(i Str) (string, bool) { return m.str[i], m.hasStr&(1<<i) != 0 }

// attrsPool recycles what cs_read_attrs fills in: it is needed only while a
// message is read. (It cannot live in Message: cgo's pointer check looks at
// the whole Go object an argument points into.)
var attrsPool = sync.Pool{New: func() any { return new(C.cs_attrs_t) }}

// Read reads every attribute of the message whose native handle is h (see
// HandleOf) into m, in one cgo call; the Go API needs one or two cgo calls
// (plus allocations) per attribute. The string attributes and the formatted
// replication group message id are copied into buf, appended, which is
// replaced by one allocation when they do not fit its capacity, so a message
// costs few allocations beyond its payload. A destination equal to
// knownDest (a caller's cache of the last one) is not copied: DestKnown is
// set and the destination is knownDest.
func Read(h uintptr, m *Message, buf []byte, knownDest string) {
	a := attrsPool.Get().(*C.cs_attrs_t)
	defer attrsPool.Put(a)
	layout := rgmidLayout(rgmidLayoutState.Load())
	C.cs_read_attrs(C.uintptr_t(h), a, boolInt(layout == rgmidUnknown || layout == rgmidByCCSMP))
	m.Has = Has(a.has) &^ Has(C.CS_RGMIDSTR)
	if m.Has&HasPayload != 0 {
		// append rather than make and copy: growing a slice writes the
		// new memory once, make zeroes it first.
		m.Payload = append([]byte{}, unsafe.Slice((*byte)(a.payload), int(a.payloadLen))...)
	} else {
		m.Payload = nil
	}
	if layout == rgmidUnknown && a.has&C.CS_RGMIDSTR != 0 {
		layout = learnRGMIDLayout(rawRGMID(a), C.GoString(&a.rgmid[0]))
	}
	p := a.str[C.CS_S_DEST]
	m.DestKnown = p != nil && knownDest != "" && int(a.len[C.CS_S_DEST]) == len(knownDest) &&
		string(unsafe.Slice((*byte)(unsafe.Pointer(p)), len(knownDest))) == knownDest
	// One buffer for every string attribute (but a known destination) and
	// the formatted id.
	n := int(a.strTotal)
	if m.DestKnown {
		n -= len(knownDest)
	}
	if a.has&C.CS_RGMID != 0 {
		n += rgmidStrLen
	}
	buf = buf[:0]
	if n > cap(buf) {
		buf = make([]byte, 0, n)
	}
	m.hasStr = 0
	for i := range numStr {
		p := a.str[i]
		switch {
		case p == nil:
			m.str[i] = ""
			continue
		case i == Destination && m.DestKnown:
			m.str[i] = knownDest
		case a.len[i] == 0:
			m.str[i] = ""
		default:
			l := int(a.len[i])
			off := len(buf)
			buf = append(buf, unsafe.Slice((*byte)(unsafe.Pointer(p)), l)...)
			m.str[i] = unsafe.String(&buf[off], l)
		}
		m.hasStr |= 1 << i
	}
	m.DestType = -1
	if m.hasStr&(1<<Destination) != 0 {
		m.DestType = int(a.destType)
	}
	m.Redelivered = a.redelivered != 0
	m.Expiration, m.SenderTimestamp, m.ReceiveTimestamp = int64(a.exp), int64(a.sendTS), int64(a.rcvTS)
	m.SequenceNumber, m.TTL, m.MsgID = int64(a.seq), int64(a.ttl), uint64(a.msgId)
	m.Priority, m.DeliveryCount, m.ClassOfService = int32(a.prio), int32(a.dcount), uint32(a.cos)
	m.RGMID = ""
	if a.has&C.CS_RGMID != 0 {
		switch {
		case layout == rgmidWordsLE || layout == rgmidBigEndian:
			off := len(buf)
			buf = appendRGMID(buf, orderRGMID(rawRGMID(a), layout))
			m.RGMID = unsafe.String(&buf[off], len(buf)-off)
		case a.has&C.CS_RGMIDSTR != 0:
			m.RGMID = C.GoString(&a.rgmid[0])
		}
	}
}

func boolInt(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

func rawRGMID(a *C.cs_attrs_t) [16]byte {
	var r [16]byte
	copy(r[:], unsafe.Slice((*byte)(unsafe.Pointer(&a.rgmidRaw.id[0])), 16))
	return r
}

// flowQueue returns the name of the queue the flow whose handle is h is
// bound to; CCSMP validates the handle, so a wrong word is refused, not
// followed.
func flowQueue(h uintptr) (string, bool) {
	p := C.cs_flow_queue(C.uintptr_t(h))
	if p == nil {
		return "", false
	}
	return C.GoString(p), true
}

// FlowReceived returns how many data messages the flow whose handle is h
// has received in CCSMP, counted before they are handed to the Go client (in
// one cgo call). A handle CCSMP refuses (a flow destroyed since) gives false.
func FlowReceived(h uintptr) (uint64, bool) {
	var n C.uint64_t
	if C.cs_flow_received(C.uintptr_t(h), &n) != 0 {
		return 0, false
	}
	return uint64(n), true
}

// SettleChunk is how many messages one Settle call settles at most.
const SettleChunk = 32

// Outcome is a settlement outcome, as CCSMP numbers them.
type Outcome C.int

// The settlement outcomes.
const (
	Accepted Outcome = 0 // SOLCLIENT_OUTCOME_ACCEPTED
	Failed   Outcome = 2 // SOLCLIENT_OUTCOME_FAILED
	Rejected Outcome = 3 // SOLCLIENT_OUTCOME_REJECTED
)

// SettleItem is one message to settle: its id on its flow (Message.MsgID),
// the flow's handle (FlowHandleOf) and the message, which Settle disposes of.
type SettleItem struct {
	Flow  uintptr
	MsgID uint64
	Msg   message.InboundMessage
}

// settleBuf is Settle's scratch memory.
type settleBuf struct {
	items  [SettleChunk]C.cs_settle_item_t
	how    [SettleChunk]uint8
	errStr [256]C.char
}

var settlePool = sync.Pool{New: func() any { return new(settleBuf) }}

// Settle settles items (at most SettleChunk) with outcome o and disposes of
// their messages, in one cgo call (cs_settle_n); the Go API's Settle makes
// three cgo calls per message and Dispose a fourth. errs[i] (errs is at
// least as long as items) is set to the failure of items[i], or left alone.
// Where a message's layout is the verified one (see FreesOnSettle) it claims
// the message's disposed flag as the API's Dispose does, the call frees the
// native message and the finalizer is dropped; otherwise the message is
// settled, then disposed of through the API.
func Settle(items []SettleItem, o Outcome, errs []error) {
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
	cs, how, errStr := &buf.items, &buf.how, &buf.errStr
	errStr[0] = 0
	for i := range items {
		in, it := &items[i], &cs[i]
		it.flow, it.msgId, it.msg = C.uintptr_t(in.Flow), C.uint64_t(in.MsgID), 0
		how[i] = freed
		off, ok := disposedOffset(in.Msg)
		if !ok {
			how[i] = disposeAfter
			continue
		}
		p := reflectPointer(in.Msg)
		if !atomic.CompareAndSwapInt32((*int32)(unsafe.Add(p, off)), 0, 1) {
			how[i] = disposedAlready
			continue
		}
		// The handle moves to the item, which the call frees; the message
		// is left without one, as the API's free leaves it.
		h := (*uintptr)(p)
		it.msg, *h = C.uintptr_t(*h), 0
	}
	C.cs_settle_n(&cs[0], C.int(len(items)), C.int(o), &errStr[0], C.size_t(len(errStr)))
	for i := range items {
		switch how[i] {
		case freed:
			runtime.SetFinalizer(items[i].Msg, nil)
		case disposeAfter:
			items[i].Msg.Dispose()
		}
		if it := &cs[i]; it.rc != 0 {
			errs[i] = fmt.Errorf("solClient_flow_settleMsg returned %d, subcode %d: %s",
				int(it.rc), int(it.subCode), C.GoString(&errStr[0]))
		}
	}
}

// readProbe reads the TTL and application message id of the message whose
// handle is h, for Probe.
func readProbe(h uintptr) (ttl int64, appID string, ok bool) {
	a := attrsPool.Get().(*C.cs_attrs_t)
	defer attrsPool.Put(a)
	C.cs_read_attrs(C.uintptr_t(h), a, 0)
	if a.has&C.CS_TTL == 0 || a.str[C.CS_S_APPID] == nil {
		return 0, "", false
	}
	return int64(a.ttl), C.GoString(a.str[C.CS_S_APPID]), true
}
