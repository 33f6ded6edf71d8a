package solacetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace/config"
	"solace.dev/go/messaging/pkg/solace/resource"
)

func TestCompressedListener(t *testing.T) {
	b := NewTestBroker(t, Config{CompressedAddr: "127.0.0.1:0"})
	require.NotEmpty(t, b.CompressedURL())
	for _, level := range []int{1, 9} {
		props := clientProps(b.CompressedURL(), "default", "default")
		props[config.TransportLayerPropertyCompressionLevel] = level
		svc := connectProps(t, props)
		rcv, err := svc.CreateDirectMessageReceiverBuilder().WithSubscriptions(resource.TopicSubscriptionOf("z/>")).Build()
		require.NoError(t, err)
		require.NoError(t, rcv.Start())
		pub, err := svc.CreateDirectMessagePublisherBuilder().Build()
		require.NoError(t, err)
		require.NoError(t, pub.Start())
		payload := make([]byte, 100_000) // compresses well; crosses many flate blocks
		require.NoError(t, pub.PublishBytes(payload, resource.TopicOf("z/1")))
		msg, err := rcv.ReceiveMessage(5 * time.Second)
		require.NoError(t, err)
		got, _ := msg.GetPayloadAsBytes()
		assert.Equal(t, payload, got)
		require.NoError(t, pub.Terminate(time.Second))
		require.NoError(t, rcv.Terminate(time.Second))
	}
	assert.Empty(t, NewTestBroker(t, Config{}).CompressedURL())
}

func TestCompressedTLS(t *testing.T) {
	tlsConf, trustDir := SelfSignedTLS(t)
	b := NewTestBroker(t, Config{TLS: tlsConf})
	for _, level := range []int{0, 1, 9} {
		props := clientProps(b.SMFSURL(), "default", "default")
		props[config.TransportLayerSecurityPropertyTrustStorePath] = trustDir
		props[config.TransportLayerSecurityPropertyCertValidateServername] = false
		props[config.TransportLayerPropertyCompressionLevel] = level
		svc := connectProps(t, props)
		rcv, err := svc.CreateDirectMessageReceiverBuilder().WithSubscriptions(resource.TopicSubscriptionOf("z/>")).Build()
		require.NoError(t, err)
		require.NoError(t, rcv.Start())
		pub, err := svc.CreateDirectMessagePublisherBuilder().Build()
		require.NoError(t, err)
		require.NoError(t, pub.Start())
		require.NoError(t, pub.PublishString("squeezed", resource.TopicOf("z/1")))
		msg, err := rcv.ReceiveMessage(5 * time.Second)
		require.NoError(t, err, "level %d", level)
		got, _ := msg.GetPayloadAsString()
		assert.Equal(t, "squeezed", got)
		require.NoError(t, svc.Disconnect())
	}
}
