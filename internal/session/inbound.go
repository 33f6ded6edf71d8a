package session

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"
	"unsafe"

	"github.com/connect-solace/connect-solace/internal/widen"
	"solace.dev/go/messaging/pkg/solace/message"
	"solace.dev/go/messaging/pkg/solace/message/sdt"
	"solace.dev/go/messaging/pkg/solace/resource"
)

// Destination types, the value of the MetaDestinationType attribute.
const (
	DestinationTopic     = "topic"
	DestinationQueue     = "queue"
	DestinationTempTopic = "temporary_topic"
	DestinationTempQueue = "temporary_queue"
)

// Inbound is one guaranteed message taken from a queue, converted to plain Go
// values by Read while its native handle is still valid. It stays tied to the
// flow that delivered it so that it can be settled there.
type Inbound struct {
	// Payload is the binary (or XML) attachment; string, map and stream
	// payloads are converted to bytes (maps and streams as JSON).
	Payload []byte
	// Meta holds the attributes that are present (see Attr), with typed
	// values (int64, bool, string, time.Time); user properties are kept
	// apart. Its storage is the one given to Read.
	Meta []MetaField
	// Properties are the user properties, converted to JSON-friendly values.
	Properties map[string]any

	// SenderTimestamp is zero when the publisher did not set one.
	SenderTimestamp time.Time
	// ReceiveTimestamp is when the API received the message or, if the API
	// gave none, when the receiver's handler took it.
	ReceiveTimestamp time.Time
	// Redelivered is the broker's redelivery flag.
	Redelivered bool
	// appID (when hasAppID) and rgmid make up DedupKey, which is built
	// only when asked for: most pipelines never de-duplicate. hasAppID
	// sits beside Redelivered so that both share one word: a Delivery of
	// 256 bytes fits its size class without waste.
	hasAppID bool
	// hasMsgID says msgID holds the message's id on its flow, read
	// natively, so that Settle can settle it through CCSMP directly.
	hasMsgID bool
	appID    string
	rgmid    string
	msgID    uint64

	msg  message.InboundMessage
	flow *flow
	// at is when onMessage took the message, as Receiver.since.
	at int64
	// strBuf backs the string attributes and the formatted replication
	// group message id when they fit, sparing them an allocation. (Its
	// size keeps a Delivery at 256 bytes, a size class of its own.)
	strBuf [64]byte
}

// destCache remembers the last destination a flow delivered from, with its
// boxed metadata value: messages on a queue mostly share a few destinations,
// so a repeated one costs neither a copy nor an allocation. It belongs to one
// flow and is used under converter.mu.
//
// It also remembers the last sender timestamp with its boxed value: CCSMP
// gives it in milliseconds, so at thousands of messages a second most
// messages repeat their predecessor's, and boxing a time.Time allocates.
type destCache struct {
	name  string
	boxed any

	sentMS    int64
	sentBoxed any
}

// metaCap is the room for attributes a message usually needs at most.
const metaCap = 12

// ownStrings reports whether a string attribute of in lives in in.strBuf.
func (in *Inbound) ownStrings() bool {
	lo := uintptr(unsafe.Pointer(&in.strBuf))
	hi := lo + uintptr(len(in.strBuf))
	for _, f := range in.Meta {
		if v, ok := f.Value.(string); ok && v != "" {
			if p := uintptr(unsafe.Pointer(unsafe.StringData(v))); p >= lo && p < hi {
				return true
			}
		}
	}
	return false
}

// startConversion gives in, holding only its message, room for Meta: the
// storage Read was given, else its own.
func startConversion(in *Inbound) {
	if cap(in.Meta) == 0 {
		in.Meta = make([]MetaField, 0, metaCap)
	}
	in.Meta = in.Meta[:0]
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

// newInboundAPI converts msg through the Go API's getters only: the
// fallback when the native read (native.go) cannot be used. It lacks the
// attributes the API hides (nativeOnlyMeta), and guesses the destination
// type from the name.
func newInboundAPI(msg message.InboundMessage, dc *destCache) *Inbound {
	return readAPI(&Inbound{msg: msg}, dc)
}

// readAPI converts in.msg into in as newInboundAPI does, and returns in.
func readAPI(in *Inbound, dc *destCache) *Inbound {
	msg := in.msg
	startConversion(in)
	in.Payload = payloadOf(msg)

	add := func(k Attr, v any) { in.Meta = append(in.Meta, MetaField{Key: k, Value: v}) }

	if dest := msg.GetDestinationName(); dest != "" {
		add(MetaDestination, dest)
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
	// The API reports "no expiration" as the Unix epoch, not as a zero time.
	var exp time.Time
	if e := msg.GetExpiration(); !e.IsZero() && e.UnixNano() > 0 {
		exp = e
	}
	if ts, ok := msg.GetSenderTimestamp(); ok && !ts.IsZero() {
		in.SenderTimestamp = ts
		add(MetaSenderTimestamp, ts)
	}
	if ts, ok := msg.GetTimeStamp(); ok && !ts.IsZero() {
		in.ReceiveTimestamp = ts
	} else if in.ReceiveTimestamp.IsZero() {
		in.ReceiveTimestamp = time.Now()
	}
	add(MetaReceiveTimestamp, in.ReceiveTimestamp)
	addExpiry(add, exp, 0, in.ReceiveTimestamp)
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

// payloadOf returns the message body as bytes whatever its SDT form: a
// string as its text, a map or stream as JSON. Only an attachment that is
// one whole SDT item (sdtKind) is handed to the client as structured data:
// the client parses whatever it is asked to, and logs "Bad Length in
// structured data TLV" for plain bytes that merely start like an SDT tag.
func payloadOf(msg message.InboundMessage) []byte {
	b, ok := msg.GetPayloadAsBytes()
	if !ok {
		return nil
	}
	switch sdtKind(b) {
	case sdtString:
		return sdtStringText(b)
	case sdtMap:
		if m, ok := msg.GetPayloadAsMap(); ok {
			j, _ := json.Marshal(convertSDT(m))
			return j
		}
	case sdtStream:
		if s, ok := msg.GetPayloadAsStream(); ok {
			j, _ := json.Marshal(convertSDT(s))
			return j
		}
	}
	return b
}

// SDT types of a structured payload, its tag byte >> 2.
const (
	sdtString = 7
	sdtMap    = 10
	sdtStream = 11
)

// sdtKind returns the SDT type of b when b is exactly one SDT string, map
// or stream item, as the client reads one: the tag byte (type << 2 | the
// count of length bytes - 1), a big-endian length counting the whole item,
// and for a string a trailing NUL; otherwise 0. The client tells strings
// from bytes by this layout alone (a byte payload laid out so is read as a
// string by every Solace API), so it is the rule here too; it is what makes
// a plain payload that starts like a tag stay plain bytes.
func sdtKind(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	t, n := int(b[0]>>2), int(b[0]&3)+1
	if t != sdtString && t != sdtMap && t != sdtStream || len(b) < 1+n {
		return 0
	}
	var l uint64
	for _, c := range b[1 : 1+n] {
		l = l<<8 | uint64(c)
	}
	if l != uint64(len(b)) || t == sdtString && (len(b) == 1+n || b[len(b)-1] != 0) {
		return 0
	}
	return t
}

// sdtStringText returns the text of b, an SDT string item (sdtKind): up to
// its first NUL, as the client's string getter does.
func sdtStringText(b []byte) []byte {
	text := b[int(b[0]&3)+2:]
	if i := bytes.IndexByte(text, 0); i >= 0 {
		text = text[:i]
	}
	return text
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
	case int8, int16, int32, int, uint8, uint16, uint32:
		i, _ := widen.Int64(t)
		return i
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
// read is not used: queue network topics start with #P2P/QUE/.
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
