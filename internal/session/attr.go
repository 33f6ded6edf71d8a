package session

// Attr identifies one attribute of a received Solace message in
// Inbound.Meta. The session speaks Solace only: the names a pipeline sees
// (the input's solace_* metadata keys) belong to the input, which maps each
// Attr to its key. An Attr is a small integer, so that mapping is an array
// index on the read path.
type Attr uint8

// The attributes, in no particular order; NumAttrs counts them.
const (
	MetaDestination Attr = iota
	MetaDestinationType
	MetaApplicationMessageID
	MetaApplicationMessageType
	MetaCorrelationID
	MetaPriority
	MetaRedelivered
	MetaDeliveryCount
	MetaExpiration
	MetaTimeToLive
	MetaReplyTo
	MetaSenderTimestamp
	MetaReceiveTimestamp
	MetaSequenceNumber
	MetaReplicationGroupMsgID
	MetaSenderID
	MetaClassOfService
	MetaHTTPContentType
	MetaHTTPContentEncoding

	NumAttrs int = iota
)

// MetaField is one attribute of a received message and its typed value
// (int64, bool, string or time.Time).
type MetaField struct {
	Key   Attr
	Value any
}
