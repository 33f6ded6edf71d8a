package solacetest

import (
	"errors"

	"github.com/connect-solace/connect-solace/internal/semp/sempwire"
)

// AccessType is a queue's access type, as SEMP names it.
type AccessType string

// Queue access types.
const (
	AccessExclusive    AccessType = sempwire.AccessExclusive
	AccessNonExclusive AccessType = sempwire.AccessNonExclusive
)

// QueueConfig describes a queue. The zero value of each optional field means
// the SEMP default (exclusive access, unlimited redelivery, no DMQ).
type QueueConfig struct {
	Name       string
	AccessType AccessType // "" means exclusive
	// Subscriptions are topic subscriptions; messages published to a matching
	// topic are spooled to the queue.
	Subscriptions []string
	// MaxRedeliveryCount is how often a message is redelivered after FAILED
	// settlements before it goes to the DMQ; 0 means no limit.
	MaxRedeliveryCount int
	// DeadMsgQueue names the queue that receives rejected or expired messages
	// and messages past MaxRedeliveryCount; "" means discard them.
	DeadMsgQueue string
	// Durable is false only for temporary queues created by a client bind.
	Durable bool
	// IngressEnabled / EgressEnabled mirror SEMP's switches; both default to
	// true when a queue is created through the package API or SEMP.
	IngressEnabled bool
	EgressEnabled  bool
	// MaxMsgSpoolUsage is the quota in MB (SEMP's unit); 0 means unlimited.
	MaxMsgSpoolUsage int64
	// RespectTTL honours message TTLs on this queue (SEMP's respectTtlEnabled).
	RespectTTL bool
	// MaxMsgSize is the largest message in bytes the queue accepts (SEMP's
	// maxMsgSize, 10 000 000 for queues created over SEMP); 0 means no limit.
	MaxMsgSize int
	// PartitionCount > 0 makes a non-exclusive queue partitioned: a message
	// with a partition key (the JMSXGroupID user property) always goes to
	// the consumer that owns the key's partition (see partition.go).
	PartitionCount int
	// PartitionRebalanceDelay is how long (seconds) partitions wait after
	// consumers came or went before they are rebalanced (partition.go); 0
	// rebalances at once.
	PartitionRebalanceDelay int64
	// RejectMsgToSenderOnDiscard is SEMP's rejectMsgToSenderOnDiscardBehavior:
	// "always", "when-queue-enabled" (what "" means) or "never".
	RejectMsgToSenderOnDiscard string
	// Owner, Permission mirror SEMP fields so round trips keep them.
	Owner      string
	Permission string
}

// QueueStats is a queue's live state.
type QueueStats struct {
	// SpooledMsgCount counts messages held by the queue, delivered or not.
	SpooledMsgCount int
	// SpooledBytes is the payload size of those messages.
	SpooledBytes int64
	// Unacked counts messages delivered to a consumer and not yet settled.
	Unacked int
	// Redelivered counts redeliveries made from this queue since it was made.
	Redelivered int
	// DeadLettered counts messages that expired, were rejected or ran out
	// of redeliveries since the queue was made: moved to its dead-message
	// queue, or discarded when they could not go there.
	DeadLettered int
	// Consumers counts bound consumer flows.
	Consumers int
}

// Errors returned by the admin API (this package's and SEMP's), mapped by
// SEMP to its error codes (adminErr): the Unknown ones (and ErrNoReplayLog)
// say a name is missing, the Exists ones that it is taken.
var (
	ErrQueueExists         = errors.New("queue already exists")
	ErrUnknownQueue        = errors.New("unknown queue")
	ErrUnknownVPN          = errors.New("unknown message VPN")
	ErrSubscriptionExists  = errors.New("subscription already exists")
	ErrUnknownSubscription = errors.New("unknown subscription")
	// ErrUnknownClient is a client name with no live session in the VPN.
	ErrUnknownClient        = errors.New("unknown client")
	ErrUnknownClientProfile = errors.New("unknown client profile")
	ErrUnknownACLProfile    = errors.New("unknown ACL profile")
	ErrExceptionExists      = errors.New("ACL exception already exists")
	ErrUnknownException     = errors.New("unknown ACL exception")
	// ErrUnknownCertAuthority and ErrCertAuthorityExists are about client
	// certificate authorities.
	ErrUnknownCertAuthority       = errors.New("unknown client certificate authority")
	ErrCertAuthorityExists        = errors.New("client certificate authority already exists")
	ErrUnknownClientUsername      = errors.New("unknown client username")
	ErrClientUsernameExists       = errors.New("client username already exists")
	ErrUnknownOAuthProfile        = errors.New("unknown OAuth profile")
	ErrOAuthProfileExists         = errors.New("OAuth profile already exists")
	ErrUnknownAuthorizationGroup  = errors.New("unknown authorization group")
	ErrAuthorizationGroupExists   = errors.New("authorization group already exists")
	ErrUnknownDomainCertAuthority = errors.New("unknown domain certificate authority")
	ErrDomainCertAuthorityExists  = errors.New("domain certificate authority already exists")
	// ErrReplayLogExists and ErrNoReplayLog report a second replay log and a
	// missing one (a VPN has at most one, as on PubSub+).
	ErrReplayLogExists = errors.New("replay log already exists")
	ErrNoReplayLog     = errors.New("no such replay log")
	// ErrUnsupportedVPNSetting reports a setting (of a VPN or an OAuth
	// profile) the broker cannot honour.
	ErrUnsupportedVPNSetting = errors.New("unsupported message VPN setting")
)
