package input

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connect-solace/connect-solace/internal/confread"
	"github.com/connect-solace/connect-solace/internal/lintmethod"
	"github.com/connect-solace/connect-solace/internal/session"
	"github.com/connect-solace/connect-solace/internal/solacecfg"
)

// This file holds the solace input's own fields as written and the rules
// between them. The rules live here once: the constructor checks them, and
// the spec's lint rule reports the same list through the solace_input_lint
// Bloblang method, so a config is refused with the same words at lint time
// and, unlinted, when the input is built. Only what lint cannot know (that a
// cache resource exists) is checked by the constructor alone.

// siFields are the input's own fields (the connection block aside).
type siFields struct {
	queue, topic, queueName string
	requests                bool // the requests block is set

	semp                            *solacecfg.SEMP // nil when unset
	nackOutcome                     string
	dedup                           bool
	dedupSize                       int
	dedupAge                        time.Duration
	dedupCache                      string
	flows, batchSize, receiveBuffer int
	selector                        string
	replay                          siReplayFields
	timestamp                       string
	timestampMapping                string // the mapping's source, "" when unset
	backlogPollInterval             time.Duration

	// Direct mode (solace_direct.go).
	topicSubscriptions []string
	shareName          string
	bpBuffer           int
	bpStrategy         string

	// qs is queue_settings (solace_queue_settings.go), nil when unset.
	qs *siQueueSettings
}

// siFieldsFromParsed reads the input's own fields. It checks no rule; see
// problems.
func siFieldsFromParsed(conf *service.ParsedConfig) (siFields, error) {
	var f siFields
	rd := confread.New(conf)
	rd.String(&f.queue, siFieldQueue)
	rd.String(&f.topic, siFieldTopic)
	rd.String(&f.queueName, siFieldQueueName)
	var topics []string
	rd.StringList(&topics, siFieldRequests, siFieldRequestsTopics)
	f.requests = len(topics) > 0
	rd.String(&f.nackOutcome, siFieldNackOutcome)
	rd.Bool(&f.dedup, siFieldDeduplicate)
	rd.Int(&f.dedupSize, siFieldDedupWindow, siFieldDedupSize)
	rd.Duration(&f.dedupAge, siFieldDedupWindow, siFieldDedupAge)
	rd.String(&f.dedupCache, siFieldDedupCache)
	rd.Int(&f.flows, siFieldFlows)
	rd.String(&f.selector, siFieldSelector)
	if rd.Contains(siFieldReplay) {
		f.replay.read(rd.In(siFieldReplay))
	}
	rd.Int(&f.receiveBuffer, siFieldReceiveBuffer)
	rd.Int(&f.batchSize, siFieldBatchSize)
	rd.String(&f.timestamp, siFieldTimestamp)
	if rd.Contains(siFieldTimestampMapping) {
		rd.String(&f.timestampMapping, siFieldTimestampMapping)
	}
	rd.Duration(&f.backlogPollInterval, siFieldBacklogPollInterval)
	if err := rd.Err(); err != nil {
		return f, err
	}
	var err error
	if f.semp, err = solacecfg.ReadSEMP(conf); err != nil {
		return f, err
	}
	err = f.directFromParsed(conf)
	if err == nil {
		err = f.queueSettingsFromParsed(conf)
	}
	return f, err
}

// problems lists every contradiction among the fields, each naming the field
// and the fix.
func (f *siFields) problems() []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	switch {
	case f.requests && (f.queue != "" || f.topic != "" || len(f.topicSubscriptions) > 0):
		add("field requests: serving requests excludes queue, topic and topic_subscriptions; keep requests, or remove it to consume messages")
	case f.requests:
	case f.queue == "" && f.topic == "" && len(f.topicSubscriptions) == 0:
		add("exactly one of the fields queue and topic (or topic_subscriptions, direct mode) must be set: set exactly one of them, e.g. queue: orders or topic: orders/> (or serve requests with requests.topics)")
	case f.queue != "" && f.topic != "":
		add("fields queue and topic: both are set; keep one")
	}
	if f.topic != "" && f.semp.URL() == "" {
		add("field semp: topic needs SEMP to provision its queue; set semp.url (and credentials) or consume an existing queue with queue")
	}
	errs = append(errs, f.directProblems()...)
	errs = append(errs, f.queueSettingsProblems()...)
	errs = append(errs, f.semp.Problems()...)
	if f.queue != "" && f.queueName != "" {
		add("field queue_name: only used with topic; with queue, name the queue in queue")
	}
	if f.dedup && f.dedupCache == "" && f.dedupSize <= 0 && f.dedupAge <= 0 {
		add("field dedup_window: set size or age (or dedup_cache), an unbounded window grows forever")
	}
	if f.dedupSize < 0 {
		add("field dedup_window.size: must be 0 or more, got %d", f.dedupSize)
	}
	for _, n := range []struct {
		field string
		v     int
	}{{siFieldFlows, f.flows}, {siFieldBatchSize, f.batchSize}, {siFieldReceiveBuffer, f.receiveBuffer}} {
		if n.v < 1 {
			add("field %s: must be at least 1, got %d", n.field, n.v)
		}
	}
	switch {
	case f.timestamp == siTimestampMapping && f.timestampMapping == "":
		add(`field timestamp_mapping: timestamp: mapping needs a mapping, e.g. timestamp_mapping: root = this.event_time.ts_parse("2006-01-02T15:04:05Z07:00")`)
	case f.timestamp != siTimestampMapping && f.timestampMapping != "":
		add("field timestamp_mapping: only used with timestamp: mapping; set timestamp: mapping or remove it")
	}
	return append(errs, f.replay.problems()...)
}

// siReplayFields is the replay object as written.
type siReplayFields struct{ from, time, messageID string }

// read reads the replay object r.
func (rp *siReplayFields) read(r confread.Reader) {
	r.String(&rp.from, siFieldReplayFrom)
	r.String(&rp.time, siFieldReplayTime)
	r.String(&rp.messageID, siFieldReplayMessageID)
}

// problems lists what from leaves missing or time gets wrong.
func (rp *siReplayFields) problems() []error {
	switch rp.from {
	case siReplayTime:
		if rp.time == "" {
			return []error{errors.New("field replay.time: from: time needs a time, e.g. replay.time: 2025-01-31T12:00:00Z")}
		}
		if _, err := siParseReplayTime(rp.time); err != nil {
			return []error{err}
		}
	case siReplayMessageID:
		if rp.messageID == "" {
			return []error{errors.New("field replay.message_id: from: message_id needs a replication group message id")}
		}
	}
	return nil
}

// siParseReplayTime parses replay.time: RFC 3339, as time.Parse reads it.
func siParseReplayTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return t, fmt.Errorf("field %s.%s: %q is not an RFC 3339 time: %w", siFieldReplay, siFieldReplayTime, s, err)
	}
	return t, nil
}

// asked is the replay the fields ask for; problems has checked them.
func (rp *siReplayFields) asked() session.Replay {
	var r session.Replay
	switch rp.from {
	case siReplayStart:
		r.Mode = session.ReplayAll
	case siReplayTime:
		r.Time, _ = siParseReplayTime(rp.time)
		r.Mode = session.ReplayFromTime
	case siReplayMessageID:
		r.MessageID = rp.messageID
		r.Mode = session.ReplayAfterMessageID
	}
	return r
}

// siLintSpec is the input's spec for reading a linted config.
var siLintSpec = sync.OnceValue(solaceInputSpec)

// The input's lint rule calls problems through this method.
var _ = lintmethod.RegisterRead("solace_input_lint",
	"Internal to the solace input's lint rule: the contradictions between the input's own fields of the linted config, as a list of messages.",
	siLintSpec, siFieldsFromParsed, func(f siFields) []error { return f.problems() })
