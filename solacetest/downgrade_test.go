package solacetest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging"
	"solace.dev/go/messaging/pkg/solace/config"
	"solace.dev/go/messaging/pkg/solace/resource"
)

// A TLS client with downgrade on logs in over TLS and goes on in plain text
// when the VPN allows it; otherwise its login is refused.
func TestTLSDowngradeToPlainText(t *testing.T) {
	tlsConf, trustDir := SelfSignedTLS(t)
	b := NewTestBroker(t, Config{TLS: tlsConf})
	require.NoError(t, b.CreateQueue("default", QueueConfig{Name: "dg", Subscriptions: []string{"dg/>"}}))
	props := clientProps(b.SMFSURL(), "default", "default")
	props[config.TransportLayerSecurityPropertyTrustStorePath] = trustDir
	props[config.TransportLayerSecurityPropertyCertValidateServername] = false
	refused, err := messaging.NewMessagingServiceBuilder().FromConfigurationProvider(props).
		WithTransportSecurityStrategy(config.NewTransportSecurityStrategy().Downgradable()).Build()
	require.NoError(t, err)
	require.ErrorContains(t, refused.Connect(), downgradeRefusedText)

	require.NoError(t, b.UpdateVPN("default", func(v *VPNConfig) { v.TLSAllowDowngradeToPlainText = true }))
	svc, err := messaging.NewMessagingServiceBuilder().FromConfigurationProvider(props).
		WithTransportSecurityStrategy(config.NewTransportSecurityStrategy().Downgradable()).Build()
	require.NoError(t, err)
	require.NoError(t, svc.Connect())
	t.Cleanup(func() { _ = svc.Disconnect() })
	info, err := b.Client("default", svc.GetApplicationID())
	require.NoError(t, err)
	assert.True(t, info.TLSDowngradedToPlainText)
	// The session works in plain text: a persistent round trip.
	pub := startPublisher(t, svc)
	publish(t, svc, pub, "dg/1", "after downgrade")
	rcv := startReceiver(t, svc, resource.QueueDurableExclusive("dg"), nil)
	m := receive(t, rcv)
	require.Equal(t, "after downgrade", payloadOf(t, m))
	require.NoError(t, rcv.Ack(m))

	// Without downgrade the same client stays on TLS.
	plain := connect(t, b, config.ServicePropertyMap{
		config.TransportLayerPropertyHost:                           b.SMFSURL(),
		config.TransportLayerSecurityPropertyTrustStorePath:         trustDir,
		config.TransportLayerSecurityPropertyCertValidateServername: false,
	})
	info, err = b.Client("default", plain.GetApplicationID())
	require.NoError(t, err)
	assert.False(t, info.TLSDowngradedToPlainText)
}
