package jms

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/connect-solace/connect-solace/internal/amqpwire"
	"github.com/connect-solace/connect-solace/internal/widen"
)

// Message types the decoder reports besides those the encoder produces.
const (
	BodyStream  BodyType = "stream"
	BodyObject  BodyType = "object"
	BodyMessage BodyType = "message" // a plain javax.jms.Message: no body
)

// Metadata keys a received message carries: the JMS headers, then what the
// body decoding learnt. Names follow the JMS header names (JMSMessageID is
// jms_message_id), so a jms → jms bridge maps them back one to one.
const (
	MetaMessageID       = "jms_message_id"
	MetaCorrelationID   = "jms_correlation_id"
	MetaType            = "jms_type"
	MetaDeliveryMode    = "jms_delivery_mode"
	MetaPriority        = "jms_priority"
	MetaTimestamp       = "jms_timestamp"
	MetaExpiration      = "jms_expiration"
	MetaRedelivered     = "jms_redelivered"
	MetaDeliveryCount   = "jms_delivery_count"
	MetaReplyTo         = "jms_reply_to"
	MetaReplyToType     = "jms_reply_to_type"
	MetaDestination     = "jms_destination"
	MetaDestinationType = "jms_destination_type"
	MetaGroupID         = "jms_group_id"
	MetaGroupSeq        = "jms_group_seq"
	MetaUserID          = "jms_user_id"
	MetaMessageType     = "jms_message_type"
	MetaContentType     = "jms_content_type"
	MetaMapTypes        = "jms_map_types"
	MetaStreamTypes     = "jms_stream_types"
	MetaDecodeError     = "jms_decode_error"
)

// Delivery mode values of MetaDeliveryMode, the same words as the jms
// output's delivery_mode field.
const (
	DeliveryPersistent    = "persistent"
	DeliveryNonPersistent = "non_persistent"
)

// ContentTypeSerializedObject marks a data section holding a serialized Java
// object (an ObjectMessage).
const ContentTypeSerializedObject = "application/x-java-serialized-object"

// MetaField is one metadata entry of a decoded message.
type MetaField struct {
	Key   string
	Value any
}

// Inbound is the JMS view of a received AMQP message, in Benthos terms.
type Inbound struct {
	Type BodyType
	// Body is the payload: text as UTF-8, bytes and object bodies raw, map
	// and stream bodies as JSON.
	Body []byte
	// Meta holds the application properties, then the JMS headers and the
	// decoding metadata, so a header wins over a property of the same name.
	Meta []MetaField
	// Err reports what could not be decoded as the JMS mapping says; the
	// message is still complete (Body holds its most faithful raw form) and
	// Err's text is also in Meta under MetaDecodeError.
	Err error
}

// DecodeOptions is what the decoder needs to know besides the message.
type DecodeOptions struct {
	// Addresser strips the broker's queue/topic prefixes from destination
	// and reply-to addresses, so names read back as they were configured.
	Addresser Addresser
	// Kind and Source describe the consumed destination, used when the
	// message carries no x-opt-jms-dest annotation or no `to`.
	Kind   DestKind
	Source string
	// MaxPropertyBytes bounds a string or binary property value; larger
	// values are left out and reported. 0 means no bound.
	MaxPropertyBytes int
	// FirstAcquirerMarksRedelivery takes first-acquirer=false as a
	// redelivery, for brokers that flag it only that way (RabbitMQ 3.x). It
	// is off by default because false is also the field's default value.
	FirstAcquirerMarksRedelivery bool
	// Arrival is the receive time, which JMSExpiration is computed from when
	// a message has a ttl but no absolute expiry time.
	Arrival time.Time

	// sourceName is the boxed JMS name of Source (of kind Kind), set by
	// Prepare: most messages name the consumed destination, and boxing a
	// string into metadata allocates.
	sourceName any
}

// Prepare caches what every message of the link shares (the consumed
// destination's name, boxed). Call it once the other fields are set; the
// options may then be copied freely.
func (o *DecodeOptions) Prepare() {
	o.sourceName = nil
	if o.Source != "" {
		o.sourceName = o.Addresser.NameOf(o.Kind, o.Source)
	}
}

// destName is the boxed name of address (of kind), from the cache when it
// is the consumed destination.
func (o *DecodeOptions) destName(kind DestKind, address string) any {
	if o.sourceName != nil && kind == o.Kind && address == o.Source {
		return o.sourceName
	}
	return o.Addresser.NameOf(kind, address)
}

// Decode maps payload, an encoded AMQP message, to its JMS message, the
// inverse of AppendEncoded: headers become jms_* metadata, application properties
// metadata of their own names with their types kept, and the body is chosen
// by x-opt-jms-msg-type and the body section (mapping section 3.2.5;
// without the annotation, inferred as Qpid JMS does). It never fails:
// anything that does not fit the mapping is reported in Inbound.Err and the
// body is passed on raw. The sections are read in place (a data body
// aliases payload), without building a message value.
func Decode(payload []byte, o *DecodeOptions) Inbound {
	return DecodeAppend(nil, payload, o)
}

// DecodeAppend is Decode with Inbound.Meta appended to dst[:0], so a caller
// that is done with one message's metadata can reuse its storage for the
// next.
func DecodeAppend(dst []MetaField, payload []byte, o *DecodeOptions) Inbound {
	var in Inbound
	var problems []string
	var m rawMessage
	if err := amqpwire.ParseMessage(payload, &m.Received); err != nil {
		// Not a message this decoder can split into sections: passed on
		// whole, as bytes, rather than lost.
		if cap(dst) < 4 {
			dst = make([]MetaField, 0, 4)
		}
		in.Meta = dst[:0]
		in.Type, in.Body = BodyBytes, payload
		msg := "the AMQP message cannot be decoded (" + err.Error() + "): passed on as its raw encoding"
		in.Meta = append(in.Meta, MetaField{MetaMessageType, in.Type.boxedName()}, MetaField{MetaDecodeError, msg})
		in.Err = fmt.Errorf("JMS decoding: %s", msg)
		return in
	}
	problems = m.prepare(problems)
	if want := len(m.props)/2 + 16; cap(dst) < want {
		dst = make([]MetaField, 0, want)
	}
	in.Meta = dst[:0]

	if len(m.props) > 0 {
		problems = in.decodeProperties(&m, o, problems)
	}
	problems = in.decodeHeaders(&m, o, problems)
	problems = in.decodeBody(&m, problems)
	in.Meta = append(in.Meta, MetaField{MetaMessageType, in.Type.boxedName()})
	if len(problems) > 0 {
		msg := strings.Join(problems, "; ")
		in.Err = fmt.Errorf("JMS decoding: %s", msg)
		in.Meta = append(in.Meta, MetaField{MetaDecodeError, msg})
	}
	return in
}

// rawMessage is a received message's sections and what Decode decoded of
// them up front: the annotation and property maps split into items, and
// the amqp-value and amqp-sequence bodies as Go values.
type rawMessage struct {
	amqpwire.Received
	props [][]byte // application properties: key, value, ...
	// value is the amqp-value body (nil for none, as for null); seq the
	// amqp-sequence sections' items.
	value any
	seq   [][]any
}

func (m *rawMessage) prepare(problems []string) []string {
	var err error
	if m.Annotations != nil {
		if _, _, err = amqpwire.MapLookup(m.Annotations, ""); err != nil {
			problems = append(problems, "message annotations left out: "+err.Error())
			m.Annotations = nil
		}
	}
	if m.ApplicationProperties != nil {
		if m.props, err = amqpwire.MapItems(m.ApplicationProperties, nil); err != nil {
			problems = append(problems, "application properties left out: "+err.Error())
			m.props = nil
		}
	}
	if m.Value != nil {
		if m.value, err = amqpwire.Value(m.Value); err != nil {
			// Passed on as its encoding, which a consumer can still read.
			problems = append(problems, "amqp-value body cannot be decoded ("+err.Error()+"): passed on as its raw encoding")
			m.value = append([]byte(nil), m.Value...)
		}
	}
	for _, sq := range m.Sequences {
		v, err := amqpwire.Value(sq)
		if err != nil {
			problems = append(problems, "amqp-sequence section cannot be decoded: "+err.Error())
			continue
		}
		l, ok := v.([]any)
		if !ok {
			problems = append(problems, fmt.Sprintf("amqp-sequence section holds %T, not a list", v))
			continue
		}
		m.seq = append(m.seq, l)
	}
	return problems
}

// decodeProperties adds the application properties, in name order.
func (in *Inbound) decodeProperties(m *rawMessage, o *DecodeOptions, problems []string) []string {
	type prop struct {
		name string
		raw  []byte
	}
	ps := make([]prop, 0, len(m.props)/2)
	for i := 0; i+1 < len(m.props); i += 2 {
		k, ok := amqpwire.BytesAt(m.props[i])
		if !ok || !amqpwire.IsString(m.props[i]) && !isSymbol(m.props[i]) {
			problems = append(problems, fmt.Sprintf("application property %d left out: its key is not a string", i/2))
			continue
		}
		ps = append(ps, prop{string(k), m.props[i+1]})
	}
	sort.Slice(ps, func(a, b int) bool { return ps[a].name < ps[b].name })
	for i, p := range ps {
		if i > 0 && ps[i-1].name == p.name {
			continue // a duplicate key: the first wins
		}
		v, err := amqpwire.Value(p.raw)
		if err == nil {
			v, err = propertyMeta(v, o.MaxPropertyBytes)
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("property %q left out: %v", p.name, err))
			continue
		}
		in.Meta = append(in.Meta, MetaField{p.name, v})
	}
	return problems
}

func isSymbol(b []byte) bool {
	c, ok := amqpwire.BytesAt(b)
	return ok && c != nil && !amqpwire.IsString(b) && !amqpwire.IsBinary(b)
}

func (in *Inbound) add(k string, v any) { in.Meta = append(in.Meta, MetaField{k, v}) }

// Metadata values that repeat on every message, boxed once: converting a
// string to an interface allocates, and these are set per message.
var (
	boxedPersistent    any = DeliveryPersistent
	boxedNonPersistent any = DeliveryNonPersistent
	boxedKinds             = map[DestKind]any{}
	boxedTypes             = map[BodyType]any{}
)

func init() {
	for _, k := range []DestKind{KindQueue, KindTopic, KindTempQueue, KindTempTopic} {
		boxedKinds[k] = k.String()
	}
	for _, t := range []BodyType{BodyText, BodyBytes, BodyMap, BodyStream, BodyObject, BodyMessage} {
		boxedTypes[t] = string(t)
	}
}

// Content types most messages carry, boxed once.
var (
	boxedOctetStream any = ContentTypeOctetStream
	boxedTextPlain   any = "text/plain"
	boxedSerialized  any = ContentTypeSerializedObject
)

// boxedContentType is ct as metadata, without an allocation for the
// content types JMS producers set.
func boxedContentType(ct []byte) any {
	switch string(ct) {
	case ContentTypeOctetStream:
		return boxedOctetStream
	case "text/plain":
		return boxedTextPlain
	case ContentTypeSerializedObject:
		return boxedSerialized
	}
	return string(ct)
}

func (k DestKind) boxedName() any {
	if v, ok := boxedKinds[k]; ok {
		return v
	}
	return k.String()
}

func (t BodyType) boxedName() any {
	if v, ok := boxedTypes[t]; ok {
		return v
	}
	return string(t)
}

// addID adds the id in raw (the encoded field named field, nil when the
// message has none) under key k as text read gives, or notes in problems
// why it cannot.
func (in *Inbound) addID(k, field string, raw []byte, read func([]byte) (string, error), problems []string) []string {
	if raw == nil {
		return problems
	}
	id, err := read(raw)
	if err != nil {
		return append(problems, field+": "+err.Error())
	}
	in.add(k, id)
	return problems
}

func (in *Inbound) decodeHeaders(m *rawMessage, o *DecodeOptions, problems []string) []string {
	priority, persistent, deliveries := int64(DefaultPriority), false, int64(0)
	var ttl time.Duration
	if m.HasHeader {
		priority, persistent, deliveries = int64(m.Priority), m.Durable, int64(m.DeliveryCount)
		ttl = time.Duration(m.TTL) * time.Millisecond
		if deliveries == 0 && !m.FirstAcquirer && o.FirstAcquirerMarksRedelivery {
			deliveries = 1
		}
	}
	mode := boxedNonPersistent
	if persistent {
		mode = boxedPersistent
	}
	in.add(MetaDeliveryMode, mode)
	in.add(MetaPriority, priority)
	in.add(MetaRedelivered, deliveries > 0)
	// JMSXDeliveryCount counts this delivery; AMQP counts the earlier ones.
	in.add(MetaDeliveryCount, deliveries+1)

	destKind, destOK := m.annotationKind(AnnDest)
	if !destOK {
		destKind = o.Kind
	}
	dest := o.Source
	var timestamp, expiration int64
	if m.HasProperties {
		problems = in.addID(MetaMessageID, "message-id", m.MessageID, messageIDString, problems)
		problems = in.addID(MetaCorrelationID, "correlation-id", m.CorrelationID, correlationIDString, problems)
		if m.Subject != nil {
			in.add(MetaType, string(m.Subject))
		}
		if len(m.To) > 0 && string(m.To) != dest {
			dest = string(m.To)
		}
		if m.ReplyTo != nil {
			replyTo := string(m.ReplyTo)
			kind, ok := m.annotationKind(AnnReplyType)
			if !ok {
				kind = o.Addresser.KindOf(replyTo, KindQueue)
			}
			in.add(MetaReplyTo, o.Addresser.NameOf(kind, replyTo))
			in.add(MetaReplyToType, kind.boxedName())
		}
		if m.GroupID != nil {
			in.add(MetaGroupID, string(m.GroupID))
		}
		if m.HasGSeq {
			in.add(MetaGroupSeq, int64(m.GroupSequence))
		}
		if len(m.UserID) > 0 {
			in.add(MetaUserID, string(m.UserID))
		}
		if m.ContentType != nil {
			in.add(MetaContentType, boxedContentType(m.ContentType))
		}
		if m.HasCreationTime && m.CreationTime != 0 {
			timestamp = m.CreationTime
		}
		if m.HasAbsoluteExpiryTime && m.AbsoluteExpiryTime != 0 {
			expiration = m.AbsoluteExpiryTime
		}
	}
	if expiration == 0 && ttl > 0 {
		arrival := o.Arrival
		if arrival.IsZero() {
			arrival = time.Now()
		}
		expiration = arrival.Add(ttl).UnixMilli()
	}
	in.add(MetaTimestamp, timestamp)
	in.add(MetaExpiration, expiration)
	if dest != "" {
		in.add(MetaDestination, o.destName(destKind, dest))
		in.add(MetaDestinationType, destKind.boxedName())
	}
	return problems
}

// annotationKind reads a destination-type annotation (a signed byte, though
// some peers send another integer type).
func (m *rawMessage) annotationKind(key string) (DestKind, bool) {
	v, ok := m.annotation(key)
	if !ok {
		return 0, false
	}
	n, ok := widen.Int64(v)
	if !ok || n < int64(KindQueue) || n > int64(KindTempTopic) {
		return 0, false
	}
	return DestKind(n), true
}

// annotation looks key up among the message annotations (keyed by symbol,
// or by string from some peers), reading the map in place. A value that
// cannot be decoded counts as absent.
func (m *rawMessage) annotation(key string) (any, bool) {
	raw, ok, err := amqpwire.MapLookup(m.Annotations, key)
	if !ok || err != nil {
		return nil, false
	}
	v, err := amqpwire.Value(raw)
	return v, err == nil
}

// Prefixes the JMS mapping (and Qpid JMS) use to carry non-string AMQP
// message and correlation ids in a JMS string.
const (
	idPrefix       = "ID:"
	idNoPrefix     = "AMQP_NO_PREFIX:"
	idUUIDPrefix   = "AMQP_UUID:"
	idULongPrefix  = "AMQP_ULONG:"
	idBinaryPrefix = "AMQP_BINARY:"
)

// messageIDString renders an encoded message-id as JMSMessageID.
func messageIDString(raw []byte) (string, error) {
	if amqpwire.IsString(raw) {
		s, _ := amqpwire.BytesAt(raw)
		if len(s) >= len(idPrefix) && string(s[:len(idPrefix)]) == idPrefix {
			return string(s), nil
		}
		return idPrefix + idNoPrefix + string(s), nil
	}
	s, err := typedIDString(raw)
	if err != nil {
		return "", err
	}
	return idPrefix + s, nil
}

// correlationIDString follows what a JMS consumer sees: a string verbatim,
// other id types with their AMQP_ type prefix.
func correlationIDString(raw []byte) (string, error) {
	if amqpwire.IsString(raw) {
		s, _ := amqpwire.BytesAt(raw)
		return string(s), nil
	}
	return typedIDString(raw)
}

// typedIDString renders an encoded id of a type other than string (a
// symbol is not a legal id).
func typedIDString(raw []byte) (string, error) {
	v, err := amqpwire.Value(raw)
	if err != nil {
		return "", err
	}
	if _, ok := v.(string); ok {
		return "", errors.New("value of type symbol is not a legal AMQP message id")
	}
	return typedIDValueString(v)
}

func typedIDValueString(v any) (string, error) {
	switch t := v.(type) {
	case amqpwire.UUID:
		return idUUIDPrefix + uuidString(t), nil
	case uint64:
		return fmt.Sprintf("%s%d", idULongPrefix, t), nil
	case []byte:
		return idBinaryPrefix + strings.ToUpper(fmt.Sprintf("%x", t)), nil
	}
	return "", fmt.Errorf("value of type %T is not a legal AMQP message id", v)
}

// propertyMeta turns an application property value into metadata. JMS
// types keep their Go type (int32 stays an int32), so the jms output sends
// them back with the same AMQP type; AMQP-only types become their nearest
// Benthos form (a UUID its string, a timestamp a time.Time).
func propertyMeta(v any, maxBytes int) (any, error) {
	switch t := v.(type) {
	case nil, bool, int8, int16, int32, int64, float32, float64, uint8, uint16, uint32, uint64, time.Time:
		return t, nil
	case string:
		if maxBytes > 0 && len(t) > maxBytes {
			return nil, fmt.Errorf("%d bytes is more than max_property_bytes (%d)", len(t), maxBytes)
		}
		return t, nil
	case []byte:
		if maxBytes > 0 && len(t) > maxBytes {
			return nil, fmt.Errorf("%d bytes is more than max_property_bytes (%d)", len(t), maxBytes)
		}
		return t, nil
	case amqpwire.UUID:
		return uuidString(t), nil
	case amqpwire.Char:
		return string(rune(t)), nil
	}
	// Not a type AMQP allows in application-properties (lists, maps,
	// described values): keep it in its JSON form.
	jv, _, err := jsonValue(v, 0)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(jv)
	if err != nil {
		return nil, fmt.Errorf("value of type %T: %w", v, err)
	}
	if maxBytes > 0 && len(b) > maxBytes {
		return nil, fmt.Errorf("%d bytes is more than max_property_bytes (%d)", len(b), maxBytes)
	}
	return string(b), nil
}

// msgTypeName names an x-opt-jms-msg-type code in messages.
var msgTypeName = map[int8]string{
	MsgTypeMessage: "Message", MsgTypeObject: "ObjectMessage", MsgTypeMap: "MapMessage",
	MsgTypeBytes: "BytesMessage", MsgTypeStream: "StreamMessage", MsgTypeText: "TextMessage",
}

func (in *Inbound) decodeBody(m *rawMessage, problems []string) []string {
	code, hasCode := int8(-1), false
	if v, ok := m.annotation(AnnMsgType); ok {
		if n, ok := widen.Int64(v); ok && n >= math.MinInt8 && n <= math.MaxInt8 {
			code, hasCode = int8(n), true
		} else {
			problems = append(problems, fmt.Sprintf("%s is %v (%T), not a byte: type inferred from the body", AnnMsgType, v, v))
		}
	}
	if hasCode {
		if _, known := msgTypeName[code]; !known {
			problems = append(problems, fmt.Sprintf("unknown %s %d: type inferred from the body", AnnMsgType, code))
			hasCode = false
		}
	}
	inferred := inferType(m)
	if !hasCode {
		return in.setBody(m, inferred, problems)
	}
	want := codeType(code)
	if !bodyFits(m, want) {
		problems = append(problems, fmt.Sprintf("%s %d (%s) does not match a %s body: decoded as %s", AnnMsgType, code, msgTypeName[code], sectionName(m), inferred))
		return in.setBody(m, inferred, problems)
	}
	return in.setBody(m, want, problems)
}

func codeType(code int8) BodyType {
	switch code {
	case MsgTypeObject:
		return BodyObject
	case MsgTypeMap:
		return BodyMap
	case MsgTypeBytes:
		return BodyBytes
	case MsgTypeStream:
		return BodyStream
	case MsgTypeText:
		return BodyText
	}
	return BodyMessage
}

func sectionName(m *rawMessage) string {
	switch {
	case m.HasData:
		return "data"
	case len(m.seq) > 0:
		return "amqp-sequence"
	case m.value != nil:
		return fmt.Sprintf("amqp-value %s", describeAMQP(m.value))
	}
	return "missing"
}

func describeAMQP(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case []byte:
		return "binary"
	case map[string]any, map[any]any:
		return "map"
	case []any:
		return "list"
	}
	return fmt.Sprintf("%T", v)
}

// inferType is the JMS class of a message without (or with an unusable)
// x-opt-jms-msg-type, as Qpid JMS infers it (mapping section 3.2.5.2).
func inferType(m *rawMessage) BodyType {
	switch {
	case m.HasData:
		ct := ""
		if m.ContentType != nil {
			ct = strings.ToLower(string(m.ContentType))
		}
		switch {
		case ct == ContentTypeSerializedObject:
			return BodyObject
		case isTextContentType(ct):
			return BodyText
		}
		return BodyBytes
	case len(m.seq) > 0:
		return BodyStream
	case m.value != nil:
		switch m.value.(type) {
		case string:
			return BodyText
		case []byte:
			return BodyBytes
		case map[string]any, map[any]any:
			return BodyMap
		case []any:
			return BodyStream
		}
		return BodyObject
	}
	return BodyMessage
}

// isTextContentType: text/*, and the JSON and XML types Qpid JMS reads as
// text.
func isTextContentType(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	mt = strings.TrimSpace(mt)
	return strings.HasPrefix(mt, "text/") || mt == "application/json" || mt == "application/xml" ||
		strings.HasSuffix(mt, "+json") || strings.HasSuffix(mt, "+xml") || strings.Contains(ct, "charset=")
}

// bodyFits reports whether the body section can carry the class t.
func bodyFits(m *rawMessage, t BodyType) bool {
	hasData, hasSeq := m.HasData, len(m.seq) > 0
	switch t {
	case BodyText:
		if hasData {
			return true
		}
		_, ok := m.value.(string)
		return ok || (!hasSeq && m.value == nil)
	case BodyBytes:
		if hasData {
			return true
		}
		_, ok := m.value.([]byte)
		return ok || (!hasSeq && m.value == nil)
	case BodyMap:
		switch m.value.(type) {
		case map[string]any, map[any]any:
			return true
		}
		return !hasData && !hasSeq && m.value == nil
	case BodyStream:
		_, ok := m.value.([]any)
		return ok || hasSeq || (!hasData && m.value == nil)
	case BodyObject:
		return hasData || m.value != nil
	case BodyMessage:
		return !hasData && !hasSeq && m.value == nil
	}
	return false
}

func (in *Inbound) setBody(m *rawMessage, t BodyType, problems []string) []string {
	in.Type = t
	switch t {
	case BodyText:
		if s, ok := m.value.(string); ok {
			in.Body = []byte(s)
			return problems
		}
		in.Body = m.Body()
		if !utf8.Valid(in.Body) {
			problems = append(problems, "TextMessage body is not valid UTF-8: passed on as raw bytes")
		}
	case BodyBytes, BodyObject:
		if b, ok := m.value.([]byte); ok {
			in.Body = b
			return problems
		}
		if m.HasData || m.value == nil {
			in.Body = m.Body()
			return problems
		}
		// An AMQP-typed ObjectMessage (amqp-value of another type): its JSON.
		problems = in.setJSON(m.value, "", problems)
	case BodyMap:
		if m.value == nil {
			in.Body = []byte("{}")
			return problems
		}
		problems = in.setJSON(m.value, MetaMapTypes, problems)
	case BodyStream:
		var items []any
		switch {
		case len(m.seq) > 0:
			for _, s := range m.seq {
				items = append(items, s...)
			}
		case m.value != nil:
			items, _ = m.value.([]any)
		}
		if items == nil {
			items = []any{}
		}
		problems = in.setJSON(items, MetaStreamTypes, problems)
	case BodyMessage:
		in.Body = nil
	}
	return problems
}

// setJSON sets the body to v's JSON and, under typesKey, the AMQP type of
// each entry (for maps an object of entry name to type, for streams an
// array), since JSON alone cannot tell an int from a long, a float from a
// double or bytes (base64) from a string.
func (in *Inbound) setJSON(v any, typesKey string, problems []string) []string {
	jv, types, err := jsonValue(v, 0)
	if err == nil {
		var b []byte
		if b, err = json.Marshal(jv); err == nil {
			in.Body = b
			if typesKey != "" {
				in.add(typesKey, types)
			}
			return problems
		}
	}
	in.Body = []byte(fmt.Sprint(v))
	return append(problems, fmt.Sprintf("body cannot be represented as JSON (%v): passed on as text", err))
}

// maxJSONDepth bounds nesting, so a hostile message cannot exhaust the stack.
const maxJSONDepth = 64

// jsonValue converts a decoded AMQP value into what encoding/json renders
// faithfully, and reports its type: a name such as "int" for a scalar, a
// map of names for a map, a list for a list.
func jsonValue(v any, depth int) (any, any, error) {
	if depth > maxJSONDepth {
		return nil, nil, fmt.Errorf("nested deeper than %d levels", maxJSONDepth)
	}
	switch t := v.(type) {
	case nil:
		return nil, "null", nil
	case string:
		return t, "string", nil
	case bool:
		return t, "boolean", nil
	case int8:
		return t, "byte", nil
	case int16:
		return t, "short", nil
	case int32:
		return t, "int", nil
	case int64:
		return t, "long", nil
	case uint8:
		return t, "ubyte", nil
	case uint16:
		return t, "ushort", nil
	case uint32:
		return t, "uint", nil
	case uint64:
		return t, "ulong", nil
	case float32:
		return floatJSON(float64(t)), "float", nil
	case float64:
		return floatJSON(t), "double", nil
	case []byte:
		return base64.StdEncoding.EncodeToString(t), "bytes", nil
	case time.Time:
		return t.UTC().Format(time.RFC3339Nano), "timestamp", nil
	case amqpwire.UUID:
		return uuidString(t), "uuid", nil
	case amqpwire.Char:
		return string(rune(t)), "char", nil
	case map[string]any:
		return jsonMap(t, depth)
	case map[any]any:
		return jsonMap(t, depth)
	case []any:
		out, types := make([]any, len(t)), make([]any, len(t))
		for i, ev := range t {
			jv, ty, err := jsonValue(ev, depth+1)
			if err != nil {
				return nil, nil, fmt.Errorf("item %d: %w", i, err)
			}
			out[i], types[i] = jv, ty
		}
		return out, types, nil
	}
	// Typed AMQP arrays ([]int32, []string, ...) decode into Go slices.
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Slice {
		out, types := make([]any, rv.Len()), make([]any, rv.Len())
		for i := range rv.Len() {
			jv, ty, err := jsonValue(rv.Index(i).Interface(), depth+1)
			if err != nil {
				return nil, nil, fmt.Errorf("item %d: %w", i, err)
			}
			out[i], types[i] = jv, ty
		}
		return out, types, nil
	}
	if s, ok := v.(fmt.Stringer); ok {
		return s.String(), fmt.Sprintf("%T", v), nil
	}
	return nil, nil, fmt.Errorf("value of type %T has no JSON form", v)
}

// jsonMap is jsonValue of a map: its keys become text (fmt.Sprint of a key
// that is not a string).
func jsonMap[K comparable](m map[K]any, depth int) (any, any, error) {
	out, types := make(map[string]any, len(m)), make(map[string]any, len(m))
	for k, ev := range m {
		ks, ok := any(k).(string)
		if !ok {
			ks = fmt.Sprint(k)
		}
		jv, ty, err := jsonValue(ev, depth+1)
		if err != nil {
			return nil, nil, fmt.Errorf("entry %q: %w", ks, err)
		}
		out[ks], types[ks] = jv, ty
	}
	return out, types, nil
}

// floatJSON keeps NaN and the infinities, which JSON has no number for, as
// the strings Java prints for them.
func floatJSON(f float64) any {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return f
}

// NameOf returns the JMS name of address, without the style's prefix for
// kind, so it reads as the name the jms output would be configured with.
func (a Addresser) NameOf(kind DestKind, address string) string {
	prefix := a.queuePrefix
	if kind.isTopic() {
		prefix = a.topicPrefix
	}
	if a.verbatimSlash && prefix != "" && !strings.HasPrefix(address, prefix) {
		return address
	}
	if prefix != "" {
		return strings.TrimPrefix(address, prefix)
	}
	return address
}

// KindOf guesses the kind of an address from the style's prefixes, for a
// reply-to without an x-opt-jms-reply-type annotation.
func (a Addresser) KindOf(address string, def DestKind) DestKind {
	switch {
	case a.topicPrefix != "" && strings.HasPrefix(address, a.topicPrefix):
		return KindTopic
	case a.queuePrefix != "" && strings.HasPrefix(address, a.queuePrefix):
		return KindQueue
	}
	return def
}
