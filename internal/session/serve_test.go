package session

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace/message"
	"solace.dev/go/messaging/pkg/solace/resource"
)

// A Server refuses the requests its buffer has no room for as they come,
// and those still waiting when it closes; each refused request can still be
// answered, so its requester hears at once.
func TestServerRefusesWhatItCannotTake(t *testing.T) {
	f := newRxFixture(t)
	var mu sync.Mutex
	var refused []string
	srv, err := f.sess.NewServer(ServerConfig{Topics: []string{"svc/q"}, Buffer: 2}, func(req *Request) {
		mu.Lock()
		refused = append(refused, string(req.Payload))
		mu.Unlock()
		assert.NoError(t, req.Reply(&Outbound{Payload: []byte("refused")}))
	})
	require.NoError(t, err)

	pub, err := f.svc.RequestReply().CreateRequestReplyMessagePublisherBuilder().Build()
	require.NoError(t, err)
	require.NoError(t, pub.Start())
	t.Cleanup(func() { _ = pub.Terminate(time.Second) })
	replies := make(chan string, 5)
	for i := range 5 {
		require.NoError(t, pub.PublishBytes([]byte(fmt.Sprint("r", i)), func(reply message.InboundMessage, _ any, err error) {
			if !assert.NoError(t, err) {
				replies <- ""
				return
			}
			body, _ := reply.GetPayloadAsBytes()
			replies <- string(body)
		}, resource.TopicOf("svc/q"), 10*time.Second, nil))
	}
	for range 3 {
		require.Equal(t, "refused", <-replies, "a request beyond the buffer is refused at once")
	}
	require.NoError(t, srv.Close(context.Background()))
	for range 2 {
		require.Equal(t, "refused", <-replies, "a request still waiting at Close is refused")
	}
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"r2", "r3", "r4", "r0", "r1"}, refused)
}
