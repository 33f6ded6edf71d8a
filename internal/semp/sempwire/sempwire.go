// Package sempwire holds the SEMPv2 wire types that both ends of the protocol
// in this module use: the response envelope, the config and monitor APIs'
// MsgVpnQueue and its subscriptions, and the enumerations of their
// attributes. The SEMP client (internal/semp) decodes them and solacetest's
// SEMP endpoints encode them, so the two agree by construction. This
// package's tests check the types and enumerations against Solace's OpenAPI
// specs (solacetest/testdata/semp), and solacetest/sempspec_test.go checks
// what the broker writes with them.
//
// Field names and order follow the specs (alphabetical, as real brokers
// write them). Types only one end uses stay with that end.
package sempwire

// Queue access types (MsgVpnQueue.accessType).
const (
	AccessExclusive    = "exclusive"
	AccessNonExclusive = "non-exclusive"
)

// Queue permissions of clients other than the owner (MsgVpnQueue.permission),
// from least to most.
const (
	PermissionNoAccess    = "no-access"
	PermissionReadOnly    = "read-only"
	PermissionConsume     = "consume"
	PermissionModifyTopic = "modify-topic"
	PermissionDelete      = "delete"
)

// Permissions lists the permission values in the spec's order.
var Permissions = []string{PermissionNoAccess, PermissionReadOnly, PermissionConsume, PermissionModifyTopic, PermissionDelete}

// Values of MsgVpnQueue.rejectMsgToSenderOnDiscardBehavior.
const (
	RejectOnDiscardAlways           = "always"
	RejectOnDiscardWhenQueueEnabled = "when-queue-enabled"
	RejectOnDiscardNever            = "never"
)

// RejectOnDiscardBehaviors lists the rejectMsgToSenderOnDiscardBehavior
// values in the spec's order.
var RejectOnDiscardBehaviors = []string{RejectOnDiscardAlways, RejectOnDiscardWhenQueueEnabled, RejectOnDiscardNever}

// Response is the envelope of every SEMP response. The broker fills the body
// fields with any values, left out when nil; the client reads them as
// json.RawMessage and decodes them itself.
type Response[T any] struct {
	Collections T    `json:"collections,omitempty"`
	Data        T    `json:"data,omitempty"`
	Links       T    `json:"links,omitempty"`
	Meta        Meta `json:"meta"`
}

// Meta is SempMeta: the status of a response.
type Meta struct {
	// Count is the size of a whole collection, on list responses.
	Count        *int64  `json:"count,omitempty"`
	Error        *Error  `json:"error,omitempty"`
	Paging       *Paging `json:"paging,omitempty"`
	Request      Request `json:"request"`
	ResponseCode int     `json:"responseCode"`
}

// Error is SempError, the reason of a failed request.
type Error struct {
	Code        int    `json:"code"`
	Description string `json:"description"`
	Status      string `json:"status"`
}

// Paging is SempPaging: where the next page of a list starts.
type Paging struct {
	CursorQuery string `json:"cursorQuery"`
	NextPageURI string `json:"nextPageUri"`
}

// Request is SempRequest, the request a response answers.
type Request struct {
	Method string `json:"method"`
	URI    string `json:"uri"`
}

// Count is the size of one collection of an object (the monitor API's
// MsgVpnQueueCollectionsMsgs and friends).
type Count struct {
	Count int64 `json:"count"`
}

// EventThreshold is SEMP's EventThreshold.
type EventThreshold struct {
	ClearPercent int64 `json:"clearPercent"`
	SetPercent   int64 `json:"setPercent"`
}

// ConfigQueue is the config API's MsgVpnQueue, every attribute. The client
// writes the subset it sets through its own partial type (semp.Queue, whose
// attributes a test keeps within this one).
type ConfigQueue struct {
	AccessType                              string         `json:"accessType"`
	ConsumerAckPropagationEnabled           bool           `json:"consumerAckPropagationEnabled"`
	DeadMsgQueue                            string         `json:"deadMsgQueue"`
	DeliveryCountEnabled                    bool           `json:"deliveryCountEnabled"`
	DeliveryDelay                           int64          `json:"deliveryDelay"`
	EgressEnabled                           bool           `json:"egressEnabled"`
	EventBindCountThreshold                 EventThreshold `json:"eventBindCountThreshold"`
	EventMsgSpoolUsageThreshold             EventThreshold `json:"eventMsgSpoolUsageThreshold"`
	EventRejectLowPriorityMsgLimitThreshold EventThreshold `json:"eventRejectLowPriorityMsgLimitThreshold"`
	IngressEnabled                          bool           `json:"ingressEnabled"`
	MaxBindCount                            int64          `json:"maxBindCount"`
	MaxDeliveredUnackedMsgsPerFlow          int64          `json:"maxDeliveredUnackedMsgsPerFlow"`
	MaxMsgSize                              int32          `json:"maxMsgSize"`
	// MaxMsgSpoolUsage is the spool quota in megabytes.
	MaxMsgSpoolUsage                   int64  `json:"maxMsgSpoolUsage"`
	MaxRedeliveryCount                 int64  `json:"maxRedeliveryCount"`
	MaxTTL                             int64  `json:"maxTtl"`
	MsgVpnName                         string `json:"msgVpnName"`
	Owner                              string `json:"owner"`
	PartitionCount                     int32  `json:"partitionCount"`
	PartitionRebalanceDelay            int64  `json:"partitionRebalanceDelay"`
	PartitionRebalanceMaxHandoffTime   int64  `json:"partitionRebalanceMaxHandoffTime"`
	Permission                         string `json:"permission"`
	QueueName                          string `json:"queueName"`
	RedeliveryDelayEnabled             bool   `json:"redeliveryDelayEnabled"`
	RedeliveryDelayInitialInterval     int32  `json:"redeliveryDelayInitialInterval"`
	RedeliveryDelayMaxInterval         int32  `json:"redeliveryDelayMaxInterval"`
	RedeliveryDelayMultiplier          int32  `json:"redeliveryDelayMultiplier"`
	RedeliveryEnabled                  bool   `json:"redeliveryEnabled"`
	RejectLowPriorityMsgEnabled        bool   `json:"rejectLowPriorityMsgEnabled"`
	RejectLowPriorityMsgLimit          int64  `json:"rejectLowPriorityMsgLimit"`
	RejectMsgToSenderOnDiscardBehavior string `json:"rejectMsgToSenderOnDiscardBehavior"`
	RespectMsgPriorityEnabled          bool   `json:"respectMsgPriorityEnabled"`
	RespectTTLEnabled                  bool   `json:"respectTtlEnabled"`
}

// MonitorQueue is the monitor API's MsgVpnQueue, the attributes solacetest
// models: configuration plus live state. SEMPv2 has no bindCount attribute;
// the consumer count is the size of the txFlows collection
// (MonitorQueueCollections).
type MonitorQueue struct {
	AccessType                     string `json:"accessType"`
	DeadMsgQueue                   string `json:"deadMsgQueue"`
	Durable                        bool   `json:"durable"`
	EgressEnabled                  bool   `json:"egressEnabled"`
	IngressEnabled                 bool   `json:"ingressEnabled"`
	MaxBindCount                   int64  `json:"maxBindCount"`
	MaxDeliveredUnackedMsgsPerFlow int64  `json:"maxDeliveredUnackedMsgsPerFlow"`
	MaxMsgSize                     int32  `json:"maxMsgSize"`
	// MaxMsgSpoolUsage is the queue's quota, in megabytes.
	MaxMsgSpoolUsage   int64 `json:"maxMsgSpoolUsage"`
	MaxRedeliveryCount int64 `json:"maxRedeliveryCount"`
	MaxTTL             int64 `json:"maxTtl"`
	// MsgSpoolUsage is the bytes held now.
	MsgSpoolUsage       int64  `json:"msgSpoolUsage"`
	MsgVpnName          string `json:"msgVpnName"`
	Owner               string `json:"owner"`
	Permission          string `json:"permission"`
	QueueName           string `json:"queueName"`
	RedeliveredMsgCount int64  `json:"redeliveredMsgCount"`
	RedeliveryEnabled   bool   `json:"redeliveryEnabled"`
	// RejectMsgToSenderOnDiscardBehavior is one of RejectOnDiscardBehaviors.
	RejectMsgToSenderOnDiscardBehavior string `json:"rejectMsgToSenderOnDiscardBehavior"`
	RespectTTLEnabled                  bool   `json:"respectTtlEnabled"`
	SpooledByteCount                   int64  `json:"spooledByteCount"`
	// SpooledMsgCount is the number of messages held now, delivered or not
	// (the spec words it as a count of messages spooled).
	SpooledMsgCount   int64  `json:"spooledMsgCount"`
	TxUnackedMsgCount int64  `json:"txUnackedMsgCount"`
	VirtualRouter     string `json:"virtualRouter"`
}

// MonitorQueueCollections is the monitor API's MsgVpnQueueCollections. A
// nil count is one the broker did not report.
type MonitorQueueCollections struct {
	Msgs          *Count `json:"msgs"`
	Subscriptions *Count `json:"subscriptions"`
	TxFlows       *Count `json:"txFlows"`
}

// QueueSubscription is the config API's MsgVpnQueueSubscription. A create
// request may leave the names out: the path carries them.
type QueueSubscription struct {
	MsgVpnName        string `json:"msgVpnName,omitempty"`
	QueueName         string `json:"queueName,omitempty"`
	SubscriptionTopic string `json:"subscriptionTopic"`
}
