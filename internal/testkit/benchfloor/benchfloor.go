// Package benchfloor measures what Benthos itself costs per message, with no
// Solace at all, for the solace plugin benchmarks to report beside their
// ratios: a real stream whose input hands out prebuilt messages and whose
// output acknowledges at once, so that all the CPU a round uses is Benthos's
// (its input reader, transactions, batching, output workers and the ack
// back to the input). A Benthos plugin pays this on top of its client
// library's cost in every pipeline, so (raw client + floor) / raw client is
// the lowest CPU ratio any Benthos plugin could reach against a
// hand-written client loop.
//
// The plugin benchmarks call ReadBatch and WriteBatch directly (their rounds
// hold no stream), so their cpu_ratio does not include this floor; a
// pipeline adds it to plugin and, were it a plugin, raw loop alike.
// Import it only from tests.
package benchfloor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	// The none metrics exporter and tracer a stream needs.
	_ "github.com/redpanda-data/benthos/v4/public/components/pure"
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connect-solace/connect-solace/internal/testkit/benchbroker"
)

// Shape is what the stream's messages and components look like; set it like
// the plugin case it stands beside.
type Shape struct {
	// Payload is every message's content (copied per message).
	Payload []byte
	// Meta are metadata keys and values every message carries.
	Meta map[string]any
	// InputBatch is how many messages one ReadBatch hands out (the solace
	// input's batch_size; 1 for a generate-like input).
	InputBatch int
	// OutputBatch is the output's batching count (0: none, the streaming
	// writer), OutputMaxInFlight its max_in_flight (0 means 1).
	OutputBatch       int
	OutputMaxInFlight int
}

// Floor runs floor rounds of one Shape.
type Floor struct {
	tb    testing.TB
	shape Shape
	env   *service.Environment

	mu  sync.Mutex
	cur *round // the round whose stream is being built
}

// round is one stream's worth of messages.
type round struct {
	msgs    []*service.Message
	next    int // ReadBatch's position; only the stream's reader touches it
	acked   atomic.Int64
	want    int64
	ready   chan struct{} // closed at the first ReadBatch
	start   chan struct{} // closed when the round's measurement starts
	done    chan struct{} // closed when every message was acked
	once    sync.Once
	readyMu sync.Once
	failed  atomic.Int64
}

const (
	inputName  = "connect_solace_bench_floor_input"
	outputName = "connect_solace_bench_floor_output"
)

// New prepares floor rounds of the given shape.
func New(tb testing.TB, shape Shape) *Floor {
	tb.Helper()
	if shape.InputBatch < 1 {
		shape.InputBatch = 1
	}
	if shape.OutputMaxInFlight < 1 {
		shape.OutputMaxInFlight = 1
	}
	f := &Floor{tb: tb, shape: shape, env: service.NewEnvironment()}
	err := f.env.RegisterBatchInput(inputName, service.NewConfigSpec(),
		func(*service.ParsedConfig, *service.Resources) (service.BatchInput, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			return &input{r: f.cur, batch: shape.InputBatch}, nil
		})
	if err != nil {
		tb.Fatal(err)
	}
	err = f.env.RegisterBatchOutput(outputName, service.NewConfigSpec(),
		func(*service.ParsedConfig, *service.Resources) (service.BatchOutput, service.BatchPolicy, int, error) {
			// Count only, as the solace output's default (count 50,
			// period 5s) behaves under load; Round makes n a multiple of
			// the count, so no batch waits for a period.
			return output{}, service.BatchPolicy{Count: shape.OutputBatch}, shape.OutputMaxInFlight, nil
		})
	if err != nil {
		tb.Fatal(err)
	}
	return f
}

// Round measures n messages through a fresh stream into m, n rounded up to
// a multiple of the output's batch count (a short last batch would wait for
// a period that does not come). Building and starting the stream, and
// stopping it, happen outside the measurement.
func (f *Floor) Round(m *benchbroker.Meter, n int) {
	f.tb.Helper()
	if c := f.shape.OutputBatch; c > 1 {
		n = (n + c - 1) / c * c
	}
	r := &round{want: int64(n), ready: make(chan struct{}), start: make(chan struct{}), done: make(chan struct{})}
	r.msgs = make([]*service.Message, n)
	for i := range r.msgs {
		msg := service.NewMessage(append([]byte(nil), f.shape.Payload...))
		for k, v := range f.shape.Meta {
			msg.MetaSetMut(k, v)
		}
		r.msgs[i] = msg
	}
	b := f.env.NewStreamBuilder()
	for _, err := range []error{
		b.SetLoggerYAML("level: none"),
		b.AddInputYAML(inputName + ": {}"),
		b.AddOutputYAML(outputName + ": {}"),
	} {
		if err != nil {
			f.tb.Fatal(err)
		}
	}
	f.mu.Lock()
	f.cur = r
	stream, err := b.Build()
	f.mu.Unlock()
	if err != nil {
		f.tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	runErr := make(chan error, 1)
	go func() { runErr <- stream.Run(ctx) }()
	select {
	case <-r.ready:
	case err := <-runErr:
		f.tb.Fatalf("floor stream ended before reading: %v", err)
	}
	m.Round(n, func() {
		close(r.start)
		select {
		case <-r.done:
		case <-ctx.Done():
			f.tb.Fatalf("floor stream acked %d of %d", r.acked.Load(), n)
		}
	})
	if err := <-runErr; err != nil {
		f.tb.Fatalf("floor stream: %v", err)
	}
	if r.failed.Load() > 0 {
		f.tb.Fatalf("floor stream nacked %d messages", r.failed.Load())
	}
}

// input hands out the round's prebuilt messages, InputBatch at a time, then
// ends the stream; acks are counted.
type input struct {
	r     *round
	batch int
}

func (in *input) Connect(context.Context) error { return nil }

func (in *input) ReadBatch(ctx context.Context) (service.MessageBatch, service.AckFunc, error) {
	r := in.r
	r.readyMu.Do(func() { close(r.ready) })
	select {
	case <-r.start:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	if r.next >= len(r.msgs) {
		return nil, nil, service.ErrEndOfInput
	}
	end := min(r.next+in.batch, len(r.msgs))
	batch := service.MessageBatch(r.msgs[r.next:end:end])
	r.next = end
	k := int64(len(batch))
	return batch, func(_ context.Context, err error) error {
		if err != nil {
			r.failed.Add(k)
		}
		if r.acked.Add(k) == r.want {
			r.once.Do(func() { close(r.done) })
		}
		return nil
	}, nil
}

func (in *input) Close(context.Context) error { return nil }

// output reads every message's bytes, as any output must, and acks at once.
type output struct{}

func (output) Connect(context.Context) error { return nil }

func (output) WriteBatch(_ context.Context, batch service.MessageBatch) error {
	for _, m := range batch {
		if _, err := m.AsBytes(); err != nil {
			return fmt.Errorf("floor output: %w", err)
		}
	}
	return nil
}

func (output) Close(context.Context) error { return nil }

// Report adds the floor's metrics against the raw client's meter:
// floor_cpu_ns/msg, floor_allocs/msg, and best_cpu_ratio, (raw + floor) /
// raw, the lowest cpu_ratio a Benthos plugin could reach in a pipeline. With
// CONNECT_SOLACE_BENCH_PROFILE_DIR set it writes the floor rounds' CPU
// profiles there too (side "floor").
func Report(b *testing.B, floor, raw *benchbroker.Meter) {
	if floor.Msgs == 0 || raw.Msgs == 0 {
		b.Error(errors.New("benchfloor: no rounds to report"))
		return
	}
	benchbroker.WriteProfiles(b, "floor", floor)
	b.ReportMetric(floor.CPUPerMsg(), "floor_cpu_ns/msg")
	b.ReportMetric(floor.AllocsPerMsg(), "floor_allocs/msg")
	b.ReportMetric((raw.CPUPerMsg()+floor.CPUPerMsg())/raw.CPUPerMsg(), "best_cpu_ratio")
}
