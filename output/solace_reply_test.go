package output

import (
	"fmt"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging"
	"solace.dev/go/messaging/pkg/solace/config"
	"solace.dev/go/messaging/pkg/solace/message"
	"solace.dev/go/messaging/pkg/solace/resource"

	"github.com/connect-solace/connect-solace/internal/session"
	"github.com/connect-solace/connect-solace/internal/solacecfg"
	"github.com/connect-solace/connect-solace/internal/testkit/solacekit"
	"github.com/connect-solace/connect-solace/solacetest"
)

// TestSolaceOutputSendsReplies: with reply set, the output answers requests
// a requester on the Go client's own RequestReplyMessagePublisher sends: to
// each request's reply-to, with its correlation id and the reply flag, so
// that the client matches every reply to its request (checked by payload).
// The requests are read with the session's direct receiver, which gives
// their reply-to and correlation id as the solace input does.
func TestSolaceOutputSendsReplies(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	pc, err := solaceOutputSpec().ParseYAML(solacekit.ConnectionYAML(b.SMFURL())+"topic: x\n", nil)
	require.NoError(t, err)
	cfg, err := solacecfg.ConfigFromParsed(pc)
	require.NoError(t, err)
	sess, err := session.Connect(t.Context(), cfg, nil, session.Events{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sess.Close(t.Context()) })
	rcv, err := sess.NewDirectReceiver(t.Context(), session.DirectReceiverConfig{Subscriptions: []string{"svc/echo"}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = rcv.Close(t.Context()) })
	w := newSoWriter(t, b, `
topic: ${! meta("solace_reply_to") }
correlation_id: ${! meta("solace_correlation_id") }
delivery_mode: direct
reply: true
`)

	svc, err := messaging.NewMessagingServiceBuilder().FromConfigurationProvider(config.ServicePropertyMap{
		config.TransportLayerPropertyHost:                b.SMFURL(),
		config.ServicePropertyVPNName:                    "default",
		config.AuthenticationPropertySchemeBasicUserName: "default",
		config.AuthenticationPropertySchemeBasicPassword: "default",
	}).Build()
	require.NoError(t, err)
	require.NoError(t, svc.Connect())
	t.Cleanup(func() { _ = svc.Disconnect() })
	pub, err := svc.RequestReply().CreateRequestReplyMessagePublisherBuilder().Build()
	require.NoError(t, err)
	require.NoError(t, pub.Start())
	t.Cleanup(func() { _ = pub.Terminate(time.Second) })

	const n = 500
	type result struct {
		i    int
		body string
		err  error
	}
	results := make(chan result, n)
	for i := range n {
		require.NoError(t, pub.PublishBytes(fmt.Appendf(nil, "req-%d", i), func(reply message.InboundMessage, uc any, err error) {
			r := result{i: uc.(int), err: err}
			if err == nil {
				body, _ := reply.GetPayloadAsBytes()
				r.body = string(body)
			}
			results <- r
		}, resource.TopicOf("svc/echo"), 20*time.Second, i))
	}

	var ins []*session.Inbound
	for answered := 0; answered < n; {
		ins, err = rcv.ReceiveBatch(t.Context(), ins[:0], 64)
		require.NoError(t, err)
		batch := make(service.MessageBatch, len(ins))
		for j, in := range ins {
			batch[j] = service.NewMessage(append([]byte("re:"), in.Payload...))
			for _, f := range in.Meta {
				batch[j].MetaSetMut(solacecfg.MetaKeys[f.Key], f.Value)
			}
		}
		require.NoError(t, w.WriteBatch(t.Context(), batch))
		answered += len(ins)
	}
	seen := map[int]bool{}
	for range n {
		r := <-results
		require.NoError(t, r.err, "request %d", r.i)
		require.False(t, seen[r.i])
		seen[r.i] = true
		require.Equal(t, fmt.Sprintf("re:req-%d", r.i), r.body, "the reply to request %d", r.i)
	}
}
