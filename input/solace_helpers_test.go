package input

// This file is the helpers the solace input's tests share: readers on a
// solacetest broker, a publisher, and checks of the broker's queues.

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/config"
	"solace.dev/go/messaging/pkg/solace/resource"

	"github.com/connect-solace/connect-solace/internal/semp"
	"github.com/connect-solace/connect-solace/internal/testkit/componenttest"
	"github.com/connect-solace/connect-solace/internal/testkit/solacekit"
	"github.com/connect-solace/connect-solace/solacetest"
)

func siSEMPYAML(b *solacetest.Broker) string {
	return fmt.Sprintf("semp: { url: %s, username: admin, password: admin }\n", b.SEMPURL())
}

// newSiReader parses yaml (after the connection block), builds and connects
// the reader; it is closed when the test ends.
func newSiReader(t testing.TB, b *solacetest.Broker, yaml string) *solaceReader {
	t.Helper()
	return newSiReaderWith(t, b, service.MockResources(), yaml)
}

func newSiReaderWith(t testing.TB, b *solacetest.Broker, res *service.Resources, yaml string) *solaceReader {
	t.Helper()
	return newSiReaderAt(t, b.SMFURL(), res, yaml)
}

// siSpec is the input's spec, built once: building it parses the lint rules,
// which benchmarks should not measure.
var siSpec = sync.OnceValue(solaceInputSpec)

// newSiReaderURL is newSiReader for a broker at url.
func newSiReaderURL(t testing.TB, url, yaml string) *solaceReader {
	t.Helper()
	return newSiReaderAt(t, url, service.MockResources(), yaml)
}

func newSiReaderAt(t testing.TB, url string, res *service.Resources, yaml string) *solaceReader {
	t.Helper()
	pc, err := siSpec().ParseYAML(solacekit.ConnectionYAML(url)+yaml, nil)
	require.NoError(t, err)
	r, err := newSolaceReaderFromParsed(pc, res)
	require.NoError(t, err)
	componenttest.Connect(t, r)
	return r
}

// siPublisher publishes persistent messages with the raw client.
type siPublisher struct {
	svc solace.MessagingService
	pub solace.PersistentMessagePublisher
}

func newSiPublisher(t testing.TB, b *solacetest.Broker) *siPublisher {
	t.Helper()
	return newSiPublisherURL(t, b.SMFURL())
}

func newSiPublisherURL(t testing.TB, url string) *siPublisher {
	t.Helper()
	svc := solacekit.Service(t, url, config.ServicePropertyMap{
		config.TransportLayerPropertyReconnectionAttempts:             20,
		config.TransportLayerPropertyReconnectionAttemptsWaitInterval: 100,
		config.ServicePropertyGenerateSendTimestamps:                  true,
	})
	pub, err := svc.CreatePersistentMessagePublisherBuilder().Build()
	require.NoError(t, err)
	require.NoError(t, pub.Start())
	t.Cleanup(func() { _ = pub.Terminate(time.Second) })
	return &siPublisher{svc: svc, pub: pub}
}

// send publishes payloads to topic, each built by opt (may be nil).
func (p *siPublisher) send(t testing.TB, topic string, payloads []string, opt func(i int, b solace.OutboundMessageBuilder) solace.OutboundMessageBuilder) {
	t.Helper()
	for i, pl := range payloads {
		bld := p.svc.MessageBuilder()
		if opt != nil {
			bld = opt(i, bld)
		}
		msg, err := bld.BuildWithByteArrayPayload([]byte(pl))
		require.NoError(t, err)
		require.NoError(t, p.pub.PublishAwaitAcknowledgement(msg, resource.TopicOf(topic), 5*time.Second, nil))
	}
}

func siPayloads(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	return out
}

// readBatch reads one batch or fails the test after 10 s.
func readBatch(t testing.TB, r *solaceReader) (service.MessageBatch, service.AckFunc) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	batch, ack, err := r.ReadBatch(ctx)
	require.NoError(t, err)
	return batch, ack
}

func stats(t testing.TB, b *solacetest.Broker, q string) solacetest.QueueStats {
	t.Helper()
	_, st, err := b.Queue("default", q)
	require.NoError(t, err)
	return st
}

func waitDepth(t testing.TB, b *solacetest.Broker, q string, depth int) {
	t.Helper()
	require.Eventually(t, func() bool { return stats(t, b, q).SpooledMsgCount == depth }, 10*time.Second, 20*time.Millisecond,
		"queue %s should hold %d messages", q, depth)
}

func sempClient(t testing.TB, b *solacetest.Broker) *semp.Client {
	t.Helper()
	c, err := semp.New(semp.Config{URL: b.SEMPURL(), Username: "admin", Password: "admin"})
	require.NoError(t, err)
	return c
}

// createQueueSEMP creates a queue with subscriptions over SEMP, as an
// operator would.
func createQueueSEMP(t testing.TB, b *solacetest.Broker, q semp.Queue, topics ...string) {
	t.Helper()
	c := sempClient(t, b)
	if q.Permission == "" {
		q.Permission = semp.PermissionConsume
	}
	q.IngressEnabled, q.EgressEnabled = semp.Bool(true), semp.Bool(true)
	_, err := c.CreateQueue(t.Context(), "default", q)
	require.NoError(t, err)
	for _, topic := range topics {
		require.NoError(t, c.AddSubscription(t.Context(), "default", q.QueueName, topic))
	}
}

func metaOf(t testing.TB, m *service.Message) map[string]any {
	t.Helper()
	out := map[string]any{}
	require.NoError(t, m.MetaWalkMut(func(k string, v any) error {
		out[k] = v
		return nil
	}))
	return out
}
