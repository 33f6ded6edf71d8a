package solacetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace/config"
	"solace.dev/go/messaging/pkg/solace/resource"
)

func TestWebTransport(t *testing.T) {
	tlsConf, trustDir := SelfSignedTLS(t)
	b := NewTestBroker(t, Config{TLS: tlsConf, WebAddr: "127.0.0.1:0", SecureWebAddr: "127.0.0.1:0", Logger: testLogger(t)})
	require.NoError(t, b.CreateQueue("default", QueueConfig{Name: "wq", Subscriptions: []string{"web/>"}}))
	for _, url := range []string{b.WebURL(), b.SecureWebURL()} {
		props := clientProps(url, "default", "default")
		props[config.TransportLayerSecurityPropertyTrustStorePath] = trustDir
		props[config.TransportLayerSecurityPropertyCertValidateServername] = false
		svc := connectProps(t, props)
		pub := startPublisher(t, svc)
		publish(t, svc, pub, "web/1", "over "+url)
		rcv := startReceiver(t, svc, resource.QueueDurableExclusive("wq"), nil)
		m := receive(t, rcv)
		assert.Equal(t, "over "+url, payloadOf(t, m))
		require.NoError(t, rcv.Ack(m))
		require.NoError(t, rcv.Terminate(time.Second))
		require.NoError(t, svc.Disconnect())
	}
}
