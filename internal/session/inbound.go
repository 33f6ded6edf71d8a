package session

/*
#include <stdint.h>
#include <stddef.h>

// Prototypes from CCSMP's solClientMsg.h, declared here because the Go client
// keeps its headers in an internal package. The symbols come from the static
// libsolclient that solace.dev/go/messaging links into every binary. With
// SOLCLIENT_PSPLUS_GO (how the Go client builds CCSMP) a message handle is a
// uintptr_t.
typedef struct { int destType; const char *dest; } cs_destination_t;
extern int solClient_msg_getTimeToLive(uintptr_t msg_p, int64_t *ttl_p);
extern int solClient_msg_getDeliveryCount(uintptr_t msg_p, int32_t *count_p);
extern int solClient_msg_getReplyTo(uintptr_t msg_p, cs_destination_t *dest_p, size_t destSize);
extern int solClient_msg_getDestination(uintptr_t msg_p, cs_destination_t *dest_p, size_t destSize);
*/
import "C"

import (
	"container/list"
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"time"
	"unsafe"

	"solace.dev/go/messaging/pkg/solace/message"
	"solace.dev/go/messaging/pkg/solace/message/sdt"
	"solace.dev/go/messaging/pkg/solace/resource"
)

// Metadata keys the solace input sets on every message (when the attribute is
// present). They are shared here so the output can map the same names back
// onto outgoing messages.
const (
	MetaDestination            = "solace_destination"
	MetaDestinationType        = "solace_destination_type"
	MetaApplicationMessageID   = "solace_application_message_id"
	MetaApplicationMessageType = "solace_application_message_type"
	MetaCorrelationID          = "solace_correlation_id"
	MetaPriority               = "solace_priority"
	MetaRedelivered            = "solace_redelivered"
	MetaDeliveryCount          = "solace_delivery_count"
	MetaExpiration             = "solace_expiration"
	MetaTimeToLive             = "solace_time_to_live"
	MetaReplyTo                = "solace_reply_to"
	MetaSenderTimestamp        = "solace_sender_timestamp"
	MetaReceiveTimestamp       = "solace_receive_timestamp"
	MetaSequenceNumber         = "solace_sequence_number"
	MetaReplicationGroupMsgID  = "solace_replication_group_message_id"
	MetaSenderID               = "solace_sender_id"
	MetaClassOfService         = "solace_class_of_service"
	MetaHTTPContentType        = "solace_http_content_type"
	MetaHTTPContentEncoding    = "solace_http_content_encoding"
	// MetaTimestamp is set by the input itself: the event time it chose.
	MetaTimestamp = "solace_timestamp"
)

// Destination types as reported in solace_destination_type.
const (
	DestinationTopic     = "topic"
	DestinationQueue     = "queue"
	DestinationTempTopic = "temporary_topic"
	DestinationTempQueue = "temporary_queue"
)

// MetaField is one metadata key and its typed value.
type MetaField struct {
	Key   string
	Value any
}

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
	// DedupKey is the application message id or, without one, the
	// replication group message id; "" when the message has neither.
	DedupKey string

	msg  message.InboundMessage
	flow *flow
	gen  uint64
}

// newInbound converts msg. It reads everything it needs from the native
// message, so the caller may dispose of msg once the message is settled.
func newInbound(msg message.InboundMessage) *Inbound {
	in := &Inbound{msg: msg, Meta: make([]MetaField, 0, 16)}
	in.Payload = payloadOf(msg)

	add := func(k string, v any) { in.Meta = append(in.Meta, MetaField{Key: k, Value: v}) }

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
	if exp := msg.GetExpiration(); !exp.IsZero() && exp.UnixNano() > 0 {
		add(MetaExpiration, exp)
	}
	if extOK && ext.ttl > 0 {
		add(MetaTimeToLive, ext.ttl)
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

	switch {
	case hasAppID && appID != "":
		in.DedupKey = "app:" + appID
	case rgmidStr != "":
		in.DedupKey = "rgmid:" + rgmidStr
	}

	if props := msg.GetProperties(); len(props) > 0 {
		in.Properties = make(map[string]any, len(props))
		for k, v := range props {
			in.Properties[k] = convertSDT(v)
		}
	}
	return in
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

// DedupWindow remembers keys of messages the pipeline has processed, bounded
// by count and/or age, so that redeliveries and republished copies can be
// recognised. It is safe for concurrent use.
type DedupWindow struct {
	size int
	age  time.Duration

	mu    sync.Mutex
	order *list.List // of *dedupEntry, oldest first
	index map[string]*list.Element
}

type dedupEntry struct {
	key  string
	seen time.Time
}

// NewDedupWindow returns a window holding at most size keys (0 = no count
// bound) for at most age (0 = no age bound). At least one bound should be
// set; the input's lint rules enforce that.
func NewDedupWindow(size int, age time.Duration) *DedupWindow {
	return &DedupWindow{size: size, age: age, order: list.New(), index: map[string]*list.Element{}}
}

// Seen reports whether key was added within the window as of now.
func (w *DedupWindow) Seen(key string, now time.Time) bool {
	if key == "" {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.expire(now)
	_, ok := w.index[key]
	return ok
}

// Add records key as processed at now; re-adding a key refreshes it.
func (w *DedupWindow) Add(key string, now time.Time) {
	if key == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if el, ok := w.index[key]; ok {
		el.Value.(*dedupEntry).seen = now
		w.order.MoveToBack(el)
	} else {
		w.index[key] = w.order.PushBack(&dedupEntry{key: key, seen: now})
	}
	w.expire(now)
}

// Len is the number of keys currently held.
func (w *DedupWindow) Len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.order.Len()
}

func (w *DedupWindow) expire(now time.Time) {
	for w.order.Len() > 0 {
		front := w.order.Front()
		e := front.Value.(*dedupEntry)
		tooMany := w.size > 0 && w.order.Len() > w.size
		tooOld := w.age > 0 && now.Sub(e.seen) >= w.age
		if !tooMany && !tooOld {
			return
		}
		w.order.Remove(front)
		delete(w.index, e.key)
	}
}
