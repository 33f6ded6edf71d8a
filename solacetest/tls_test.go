package solacetest

import (
	"testing"

	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging"
	"solace.dev/go/messaging/pkg/solace/config"
	"solace.dev/go/messaging/pkg/solace/resource"
)

func TestTLS(t *testing.T) {
	tlsConf, trustDir := SelfSignedTLS(t)
	b := NewTestBroker(t, Config{TLS: tlsConf})
	require.NoError(t, b.CreateQueue("default", QueueConfig{Name: "q1", Subscriptions: []string{"secure/>"}}))
	require.Regexp(t, `^tcps://127\.0\.0\.1:\d+$`, b.SMFSURL())
	svc := connect(t, b, config.ServicePropertyMap{
		config.TransportLayerPropertyHost:                           b.SMFSURL(),
		config.TransportLayerSecurityPropertyTrustStorePath:         trustDir,
		config.TransportLayerSecurityPropertyCertValidated:          true,
		config.TransportLayerSecurityPropertyCertValidateServername: false,
	})
	pub := startPublisher(t, svc)
	publish(t, svc, pub, "secure/1", "over tls")
	rcv := startReceiver(t, svc, resource.QueueDurableExclusive("q1"), nil)
	m := receive(t, rcv)
	require.Equal(t, "over tls", payloadOf(t, m))
	require.NoError(t, rcv.Ack(m))

	// A client that does not trust the certificate is refused.
	props := clientProps(b.SMFSURL(), "default", "default")
	props[config.TransportLayerSecurityPropertyTrustStorePath] = t.TempDir()
	props[config.TransportLayerSecurityPropertyCertValidated] = true
	untrusting, err := messaging.NewMessagingServiceBuilder().FromConfigurationProvider(props).Build()
	require.NoError(t, err)
	require.Error(t, untrusting.Connect())
}
