package main

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connect-solace/connect-solace/solacetest"
)

// TestOrdersRoundTrip shows how a module of your own tests pipelines that use
// the connect-solace plugins: solacetest.NewTestBroker starts an in-process
// Solace broker on an ephemeral port for the test, and the pipelines reach
// it through the real Solace client, as they would a real broker.
func TestOrdersRoundTrip(t *testing.T) {
	broker := solacetest.NewTestBroker(t, solacetest.Config{}) // user default/default, VPN default
	if err := broker.CreateQueue("default", solacetest.QueueConfig{Name: "orders", Subscriptions: []string{"orders/>"}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	// Publish three orders, each confirmed by the broker (persistent).
	// writer: streaming publishes each message as it comes (the default
	// batched writer does too, and groups messages under load).
	publish := service.NewStreamBuilder()
	send, err := publish.AddProducerFunc()
	if err != nil {
		t.Fatal(err)
	}
	if err := publish.AddOutputYAML(fmt.Sprintf(`
solace:
  urls: [ %s ]
  username: default
  password: default
  topic: 'orders/${! json("id") }'
  writer: streaming
`, broker.SMFURL())); err != nil {
		t.Fatal(err)
	}
	publisher, err := publish.Build()
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = publisher.Run(ctx) }()
	defer func() { _ = publisher.Stop(context.Background()) }()
	for i := range 3 {
		if err := send(ctx, service.NewMessage(fmt.Appendf(nil, `{"id":%d}`, i))); err != nil {
			t.Fatalf("publishing order %d: %v", i, err)
		}
	}

	// Consume them from the queue.
	consume := service.NewStreamBuilder()
	if err := consume.AddInputYAML(fmt.Sprintf(`
solace:
  urls: [ %s ]
  username: default
  password: default
  queue: orders
`, broker.SMFURL())); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	got := map[string]bool{}
	done := make(chan struct{})
	if err := consume.AddConsumerFunc(func(_ context.Context, m *service.Message) error {
		b, err := m.AsBytes()
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		got[string(b)] = true
		if len(got) == 3 {
			close(done)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	consumer, err := consume.Build()
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = consumer.Run(ctx) }()
	defer func() { _ = consumer.Stop(context.Background()) }()

	select {
	case <-done:
	case <-ctx.Done():
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("received %d of 3 orders: %v", len(got), got)
	}
	for i := range 3 {
		if !got[fmt.Sprintf(`{"id":%d}`, i)] {
			t.Errorf("order %d missing: %v", i, got)
		}
	}
}
