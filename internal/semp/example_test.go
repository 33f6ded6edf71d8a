package semp_test

import (
	"context"
	"fmt"
	"log"

	"github.com/connect-solace/connect-solace/internal/semp"
)

// Provision a queue with a topic subscription, then read its live state.
func Example() {
	ctx := context.Background()
	c, err := semp.New(semp.Config{URL: "http://127.0.0.1:8080", Username: "admin", Password: "admin"})
	if err != nil {
		log.Fatal(err)
	}
	// A real broker creates queues with ingress and egress disabled.
	created, err := c.EnsureQueue(ctx, "default", semp.Queue{
		QueueName:      "orders/eu",
		AccessType:     semp.AccessTypeNonExclusive,
		Permission:     semp.PermissionConsume,
		IngressEnabled: semp.Bool(true),
		EgressEnabled:  semp.Bool(true),
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := c.AddSubscription(ctx, "default", "orders/eu", "orders/eu/>"); err != nil {
		log.Fatal(err)
	}
	st, err := c.QueueStatus(ctx, "default", "orders/eu")
	if semp.IsNotFound(err) {
		log.Fatal("queue vanished")
	} else if err != nil {
		log.Fatal(err)
	}
	fmt.Println(created, st.SpooledMsgCount, st.BindCount)
}
