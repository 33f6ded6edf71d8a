package input

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connect-solace/connect-solace/internal/semp"
)

// This file is queue_settings: the settings of the queue the input
// provisions for topic, applied when it creates the queue and compared with
// an existing one.

const (
	siFieldQueueSettings    = "queue_settings"
	siFieldQSAccessType     = "access_type"
	siFieldQSMaxRedelivery  = "max_redelivery_count"
	siFieldQSDMQ            = "dead_message_queue"
	siFieldQSMaxSpoolUsage  = "max_spool_usage_mb"
	siFieldQSRespectTTL     = "respect_ttl"
	siFieldQSMaxTTL         = "max_ttl"
	siFieldQSPartitionCount = "partition_count"
	siFieldQSOnMismatch     = "on_mismatch"
	siQSExclusive           = "exclusive"
	siQSNonExclusive        = "non_exclusive"
	siQSMismatchWarn        = "warn"
	siQSMismatchFail        = "fail"
)

// siQueueSettingsField is the queue_settings field.
func siQueueSettingsField() *service.ConfigField {
	return service.NewObjectField(siFieldQueueSettings,
		service.NewStringAnnotatedEnumField(siFieldQSAccessType, map[string]string{
			siQSNonExclusive: "Every flow (and every instance of the pipeline) gets a share of the messages.",
			siQSExclusive:    "One flow receives at a time; the others stand by (fail-over, strict order).",
		}).Description("The queue's access type. Unset: non-exclusive.").Optional(),
		service.NewIntField(siFieldQSMaxRedelivery).
			Description("How often a message is redelivered after the pipeline rejected it (`nack_outcome: failed`) before it goes to the dead message queue; 0 redelivers forever. Unset: the broker's default.").Optional(),
		service.NewStringField(siFieldQSDMQ).
			Description("The dead message queue for messages rejected, expired or past `max_redelivery_count`. Unset: the broker's default (`#DEAD_MSG_QUEUE`).").Optional(),
		service.NewIntField(siFieldQSMaxSpoolUsage).
			Description("The queue's quota: the most spool it may use, in megabytes. Unset: the broker's default.").Optional(),
		service.NewBoolField(siFieldQSRespectTTL).
			Description("Whether the queue honours messages' time-to-live (expired messages are discarded or go to the dead message queue). Unset: the broker's default (off).").Optional(),
		service.NewDurationField(siFieldQSMaxTTL).
			Description("The longest a message stays in the queue when `respect_ttl` is on, in whole seconds; `0s` disables expiry. Unset: the broker's default (0).").Optional(),
		service.NewIntField(siFieldQSPartitionCount).
			Description("Partitions of a non-exclusive queue: messages with the same partition key go to the same flow, in order. Unset: the broker's default (0, round-robin).").Optional(),
		service.NewStringAnnotatedEnumField(siFieldQSOnMismatch, map[string]string{
			siQSMismatchWarn: "Log one warning naming each differing setting and consume the queue as it is.",
			siQSMismatchFail: "Refuse to start, naming each differing setting.",
		}).Description("What to do when the queue already exists with settings that differ from these: `warn` logs one warning naming each differing setting and consumes the queue as it is (the input never changes an existing queue), `fail` refuses to start, naming them.").
			Default(siQSMismatchWarn),
	).Description("With `topic`: the settings of the queue the input provisions, applied when it creates the queue. The input never changes an existing queue; see `on_mismatch`.").
		Optional().Advanced()
}

// siQueueSettings are the queue_settings as written; nil pointers are unset.
type siQueueSettings struct {
	accessType                string
	maxRedelivery, maxSpoolMB *int
	partitionCount            *int
	dmq                       *string
	respectTTL                *bool
	maxTTL                    *time.Duration
	onMismatch                string
}

// queueSettingsFromParsed reads queue_settings into f.qs (nil when absent).
func (f *siFields) queueSettingsFromParsed(conf *service.ParsedConfig) error {
	if !conf.Contains(siFieldQueueSettings) {
		return nil
	}
	c := conf.Namespace(siFieldQueueSettings)
	qs := &siQueueSettings{}
	var err error
	optInt := func(field string) *int {
		if err != nil || !c.Contains(field) {
			return nil
		}
		var v int
		v, err = c.FieldInt(field)
		return &v
	}
	if c.Contains(siFieldQSAccessType) {
		if qs.accessType, err = c.FieldString(siFieldQSAccessType); err != nil {
			return err
		}
	}
	qs.maxRedelivery = optInt(siFieldQSMaxRedelivery)
	qs.maxSpoolMB = optInt(siFieldQSMaxSpoolUsage)
	qs.partitionCount = optInt(siFieldQSPartitionCount)
	if err == nil && c.Contains(siFieldQSDMQ) {
		var v string
		v, err = c.FieldString(siFieldQSDMQ)
		qs.dmq = &v
	}
	if err == nil && c.Contains(siFieldQSRespectTTL) {
		var v bool
		v, err = c.FieldBool(siFieldQSRespectTTL)
		qs.respectTTL = &v
	}
	if err == nil && c.Contains(siFieldQSMaxTTL) {
		var v time.Duration
		v, err = c.FieldDuration(siFieldQSMaxTTL)
		qs.maxTTL = &v
	}
	if err == nil {
		qs.onMismatch, err = c.FieldString(siFieldQSOnMismatch)
	}
	// on_mismatch has a default, so the object is always there: it counts
	// as set when it chooses a setting.
	if qs.accessType != "" || qs.maxRedelivery != nil || qs.maxSpoolMB != nil || qs.partitionCount != nil ||
		qs.dmq != nil || qs.respectTTL != nil || qs.maxTTL != nil {
		f.qs = qs
	}
	return err
}

// queueSettingsProblems lists the contradictions of queue_settings.
func (f *siFields) queueSettingsProblems() []error {
	qs := f.qs
	if qs == nil {
		return nil
	}
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if f.topic == "" {
		add("field queue_settings: only used with topic (the queue the input provisions); remove it, or set up the queue yourself")
	}
	for _, n := range []struct {
		field string
		v     *int
	}{{siFieldQSMaxRedelivery, qs.maxRedelivery}, {siFieldQSMaxSpoolUsage, qs.maxSpoolMB}, {siFieldQSPartitionCount, qs.partitionCount}} {
		if n.v != nil && *n.v < 0 {
			add("field queue_settings.%s: must be 0 or more, got %d", n.field, *n.v)
		}
	}
	if qs.maxRedelivery != nil && *qs.maxRedelivery > 255 {
		add("field queue_settings.max_redelivery_count: at most 255, got %d", *qs.maxRedelivery)
	}
	if qs.partitionCount != nil && *qs.partitionCount > 1000 {
		add("field queue_settings.partition_count: at most 1000, got %d", *qs.partitionCount)
	}
	if qs.partitionCount != nil && *qs.partitionCount > 0 && qs.accessType == siQSExclusive {
		add("field queue_settings.partition_count: only a non-exclusive queue is partitioned; remove it or set access_type: non_exclusive")
	}
	if qs.maxTTL != nil && (*qs.maxTTL < 0 || *qs.maxTTL%time.Second != 0) {
		add("field queue_settings.max_ttl: must be whole seconds, 0s or more, got %v", *qs.maxTTL)
	}
	if qs.dmq != nil && *qs.dmq == "" {
		add("field queue_settings.dead_message_queue: empty; name a queue or remove it")
	}
	return errs
}

// sempQueue is the queue to create for topic, with the settings.
func (qs *siQueueSettings) sempQueue(name string) semp.Queue {
	q := semp.Queue{
		QueueName:      name,
		AccessType:     semp.AccessTypeNonExclusive,
		Permission:     semp.PermissionConsume,
		IngressEnabled: semp.Bool(true),
		EgressEnabled:  semp.Bool(true),
	}
	if qs == nil {
		return q
	}
	if qs.accessType == siQSExclusive {
		q.AccessType = semp.AccessTypeExclusive
	}
	if qs.maxRedelivery != nil {
		q.MaxRedeliveryCount = semp.Int64(int64(*qs.maxRedelivery))
	}
	if qs.dmq != nil {
		q.DeadMsgQueue = *qs.dmq
	}
	if qs.maxSpoolMB != nil {
		q.MaxMsgSpoolUsage = semp.Int64(int64(*qs.maxSpoolMB))
	}
	if qs.respectTTL != nil {
		q.RespectTTLEnabled = semp.Bool(*qs.respectTTL)
	}
	if qs.maxTTL != nil {
		q.MaxTTL = semp.Int64(int64(*qs.maxTTL / time.Second))
	}
	if qs.partitionCount != nil {
		pc := int32(*qs.partitionCount)
		q.PartitionCount = &pc
	}
	return q
}

// mismatches names each setting qs chose that the existing queue q does not
// have, as "field: the queue's (wanted ours)".
func (qs *siQueueSettings) mismatches(q *semp.Queue) []string {
	if qs == nil {
		return nil
	}
	var out []string
	add := func(field string, have, want any) {
		out = append(out, fmt.Sprintf("%s: %v (wanted %v)", field, have, want))
	}
	if qs.accessType != "" {
		have := siQSNonExclusive
		if q.AccessType == semp.AccessTypeExclusive {
			have = siQSExclusive
		}
		if have != qs.accessType {
			add(siFieldQSAccessType, have, qs.accessType)
		}
	}
	i64 := func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return *p
	}
	if qs.maxRedelivery != nil && i64(q.MaxRedeliveryCount) != int64(*qs.maxRedelivery) {
		add(siFieldQSMaxRedelivery, i64(q.MaxRedeliveryCount), *qs.maxRedelivery)
	}
	if qs.dmq != nil && q.DeadMsgQueue != *qs.dmq {
		add(siFieldQSDMQ, fmt.Sprintf("%q", q.DeadMsgQueue), fmt.Sprintf("%q", *qs.dmq))
	}
	if qs.maxSpoolMB != nil && i64(q.MaxMsgSpoolUsage) != int64(*qs.maxSpoolMB) {
		add(siFieldQSMaxSpoolUsage, i64(q.MaxMsgSpoolUsage), *qs.maxSpoolMB)
	}
	if qs.respectTTL != nil && (q.RespectTTLEnabled != nil && *q.RespectTTLEnabled) != *qs.respectTTL {
		add(siFieldQSRespectTTL, !*qs.respectTTL, *qs.respectTTL)
	}
	if qs.maxTTL != nil && time.Duration(i64(q.MaxTTL))*time.Second != *qs.maxTTL {
		add(siFieldQSMaxTTL, time.Duration(i64(q.MaxTTL))*time.Second, *qs.maxTTL)
	}
	if qs.partitionCount != nil {
		var have int32
		if q.PartitionCount != nil {
			have = *q.PartitionCount
		}
		if int(have) != *qs.partitionCount {
			add(siFieldQSPartitionCount, have, *qs.partitionCount)
		}
	}
	return out
}

// errQueueMismatch is the failure of on_mismatch: fail.
var errQueueMismatch = errors.New("the queue exists with other settings than queue_settings")

// checkExisting reports an existing queue q whose settings differ from
// queue_settings: an error with on_mismatch: fail, else one warning (per
// reader).
func (r *solaceReader) checkExisting(q *semp.Queue) error {
	diff := r.qs.mismatches(q)
	if len(diff) == 0 {
		return nil
	}
	what := fmt.Sprintf("queue %q exists with settings that differ from queue_settings: %s", r.queue, strings.Join(diff, ", "))
	if r.qs.onMismatch == siQSMismatchFail {
		return fmt.Errorf("field queue_settings: %s; the input never changes an existing queue: change it over SEMP, delete it, or set queue_settings.on_mismatch: warn: %w", what, errQueueMismatch)
	}
	if !r.qsWarned.Swap(true) {
		r.log.Warnf("Consuming the queue as it is (the input never changes an existing queue): %s", what)
	}
	return nil
}
