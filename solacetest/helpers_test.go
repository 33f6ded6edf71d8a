package solacetest

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging"
	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/config"
	"solace.dev/go/messaging/pkg/solace/message"
	"solace.dev/go/messaging/pkg/solace/resource"
)

// clientProps are the real client's service properties for b, with short
// timeouts so that a broker bug shows up as a quick failure.
func clientProps(url, user, pass string) config.ServicePropertyMap {
	return config.ServicePropertyMap{
		config.TransportLayerPropertyHost:                      url,
		config.ServicePropertyVPNName:                          "default",
		config.AuthenticationPropertySchemeBasicUserName:       user,
		config.AuthenticationPropertySchemeBasicPassword:       pass,
		config.TransportLayerPropertyConnectionAttemptsTimeout: 5000,
		config.TransportLayerPropertyConnectionRetries:         0,
		config.TransportLayerPropertyReconnectionAttempts:      0,
	}
}

// connect builds and connects a messaging service to b; extra properties
// override the defaults.
func connect(t testing.TB, b *Broker, extra config.ServicePropertyMap) solace.MessagingService {
	t.Helper()
	props := clientProps(b.SMFURL(), "default", "default")
	for k, v := range extra {
		props[k] = v
	}
	svc, err := messaging.NewMessagingServiceBuilder().FromConfigurationProvider(props).Build()
	require.NoError(t, err)
	require.NoError(t, svc.Connect())
	t.Cleanup(func() { _ = svc.Disconnect() })
	return svc
}

// startPublisher starts a persistent publisher on svc.
func startPublisher(t testing.TB, svc solace.MessagingService) solace.PersistentMessagePublisher {
	t.Helper()
	pub, err := svc.CreatePersistentMessagePublisherBuilder().Build()
	require.NoError(t, err)
	require.NoError(t, pub.Start())
	t.Cleanup(func() { _ = pub.Terminate(time.Second) })
	return pub
}

// publish publishes payload to topic and waits for the broker's ack.
func publish(t testing.TB, svc solace.MessagingService, pub solace.PersistentMessagePublisher, topic, payload string) {
	t.Helper()
	msg, err := svc.MessageBuilder().BuildWithByteArrayPayload([]byte(payload))
	require.NoError(t, err)
	require.NoError(t, pub.PublishAwaitAcknowledgement(msg, resource.TopicOf(topic), 5*time.Second, nil))
}

// startReceiver binds a started persistent receiver to q.
func startReceiver(t testing.TB, svc solace.MessagingService, q *resource.Queue, configure func(solace.PersistentMessageReceiverBuilder)) solace.PersistentMessageReceiver {
	t.Helper()
	bld := svc.CreatePersistentMessageReceiverBuilder()
	if configure != nil {
		configure(bld)
	}
	rcv, err := bld.Build(q)
	require.NoError(t, err)
	require.NoError(t, rcv.Start())
	t.Cleanup(func() { _ = rcv.Terminate(time.Second) })
	return rcv
}

// receive waits for one message.
func receive(t testing.TB, rcv solace.PersistentMessageReceiver) message.InboundMessage {
	t.Helper()
	msg, err := rcv.ReceiveMessage(5 * time.Second)
	require.NoError(t, err)
	return msg
}

func payloadOf(t testing.TB, msg message.InboundMessage) string {
	t.Helper()
	b, ok := msg.GetPayloadAsBytes()
	require.True(t, ok, "message has a byte payload")
	return string(b)
}

// newBroker starts a broker with queue q1 subscribed to "orders/>".
func newBroker(t testing.TB) *Broker {
	t.Helper()
	b := NewTestBroker(t, Config{})
	require.NoError(t, b.CreateQueue("default", QueueConfig{Name: "q1", Subscriptions: []string{"orders/>"}}))
	return b
}

// testLogger sends the broker's log to t.Log, at debug level.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// connectProps builds and connects a messaging service from props.
func connectProps(t testing.TB, props config.ServicePropertyMap) solace.MessagingService {
	t.Helper()
	svc, err := messaging.NewMessagingServiceBuilder().FromConfigurationProvider(props).Build()
	require.NoError(t, err)
	require.NoError(t, svc.Connect())
	t.Cleanup(func() { _ = svc.Disconnect() })
	return svc
}
