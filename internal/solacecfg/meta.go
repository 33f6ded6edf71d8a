package solacecfg

import "github.com/connect-solace/connect-solace/internal/session"

// MetaTimestamp is the metadata key of the event time the input chose
// (its field timestamp).
const MetaTimestamp = "solace_timestamp"

// MetaKeys are the metadata keys the solace plugins set on a received
// message (when the attribute is present). They are the plugins', not the
// session's: internal/session speaks Solace and reports attributes as
// session.Attr values, which this table names. A test checks every Attr has a
// name.
var MetaKeys = [session.NumAttrs]string{
	session.MetaDestination:            "solace_destination",
	session.MetaDestinationType:        "solace_destination_type",
	session.MetaApplicationMessageID:   "solace_application_message_id",
	session.MetaApplicationMessageType: "solace_application_message_type",
	session.MetaCorrelationID:          "solace_correlation_id",
	session.MetaPriority:               "solace_priority",
	session.MetaRedelivered:            "solace_redelivered",
	session.MetaDeliveryCount:          "solace_delivery_count",
	session.MetaExpiration:             "solace_expiration",
	session.MetaTimeToLive:             "solace_time_to_live",
	session.MetaReplyTo:                "solace_reply_to",
	session.MetaSenderTimestamp:        "solace_sender_timestamp",
	session.MetaReceiveTimestamp:       "solace_receive_timestamp",
	session.MetaSequenceNumber:         "solace_sequence_number",
	session.MetaReplicationGroupMsgID:  "solace_replication_group_message_id",
	session.MetaSenderID:               "solace_sender_id",
	session.MetaClassOfService:         "solace_class_of_service",
	session.MetaHTTPContentType:        "solace_http_content_type",
	session.MetaHTTPContentEncoding:    "solace_http_content_encoding",
}
