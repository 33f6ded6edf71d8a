package output

import (
	"fmt"
	"sync"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connect-solace/connect-solace/internal/confread"
	"github.com/connect-solace/connect-solace/internal/lintmethod"
)

// This file holds the rules between the solace output's own fields, a static
// destination's among them. They live here once: the constructor checks
// them, and the spec's lint rule reports the same list through the
// solace_output_lint_config Bloblang method. The values of the interpolated
// fields have their own rules (soRules), reached by lint through
// solace_output_lint.

// soProblems lists every contradiction between the output's own fields,
// each naming the field and the fix.
func soProblems(conf *service.ParsedConfig) ([]error, error) {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	var topic, queue, destType, mode string
	rd := confread.New(conf)
	rd.String(&topic, soFieldTopic)
	rd.String(&queue, soFieldQueue)
	rd.String(&destType, soFieldDestinationType)
	rd.String(&mode, soFieldSubmissionMode)
	if err := rd.Err(); err != nil {
		return nil, err
	}
	if err := soLintDestination(topic, queue, destType); err != nil {
		errs = append(errs, err)
	}
	switch {
	case topic == "" && queue == "":
		add("fields topic and queue: set exactly one of them, e.g. topic: orders/created or queue: orders")
	case topic != "" && queue != "":
		add("fields topic and queue: both are set; keep one (to choose topic or queue per message, use destination_type)")
	}

	strategy, size, ok, err := soBackPressureFields(conf)
	if err != nil {
		return nil, err
	}
	if ok {
		switch {
		case size < 0:
			add("field %s.%s: must be 0 or more, got %d", soFieldBackPressure, soFieldBPBufferCapacity, size)
		case mode == soSubmitCustom && strategy == "wait" && size < 1:
			add("field %s.%s: strategy wait needs at least 1, got %d", soFieldBackPressure, soFieldBPBufferCapacity, size)
		}
	}

	writer, err := conf.FieldString(soFieldWriter)
	if err != nil {
		return nil, err
	}
	if writer == soWriterStreaming && conf.Contains(soFieldBatching) {
		pol, err := conf.FieldBatchPolicy(soFieldBatching)
		if err != nil {
			return nil, err
		}
		if !pol.IsNoop() {
			add("field batching: writer: streaming publishes without batching; remove batching or use writer: batched")
		}
	}

	clients, err := conf.FieldInt(soFieldClients)
	if err != nil {
		return nil, err
	}
	if clients < 1 {
		add("field %s: must be at least 1, got %d", soFieldClients, clients)
	}
	maxInFlight, err := conf.FieldInt(soFieldMaxInFlight)
	if err != nil {
		return nil, err
	}
	if maxInFlight < 1 {
		add("field %s: must be at least 1, got %d", soFieldMaxInFlight, maxInFlight)
	}
	return errs, nil
}

// soLintSpec is the output's spec for reading a linted config.
var soLintSpec = sync.OnceValue(solaceOutputSpec)

var _ = lintmethod.Register("solace_output_lint_config",
	"Internal to the solace output's lint rule: the contradictions between the output's own fields of the linted config, as a list of messages.",
	soLintSpec, soProblems)
