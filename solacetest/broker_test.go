package solacetest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging"
	"solace.dev/go/messaging/pkg/solace/config"
)

func TestListenAlso(t *testing.T) {
	tlsConf, trustDir := SelfSignedTLS(t)
	b := NewTestBroker(t, Config{TLS: tlsConf})
	for _, tt := range []struct {
		transport, scheme string
		props             config.ServicePropertyMap
	}{
		{TransportSMF, "tcp", nil},
		{TransportCompressed, "tcp", config.ServicePropertyMap{config.TransportLayerPropertyCompressionLevel: 5}},
		{TransportSMFTLS, "tcps", config.ServicePropertyMap{
			config.TransportLayerSecurityPropertyTrustStorePath:         trustDir,
			config.TransportLayerSecurityPropertyCertValidateServername: false,
		}},
	} {
		t.Run(tt.transport, func(t *testing.T) {
			addr, err := b.ListenAlso(tt.transport, "127.0.0.1:0")
			require.NoError(t, err)
			props := clientProps(tt.scheme+"://"+addr.String(), "default", "default")
			for k, v := range tt.props {
				props[k] = v
			}
			svc, err := messaging.NewMessagingServiceBuilder().FromConfigurationProvider(props).Build()
			require.NoError(t, err)
			require.NoError(t, svc.Connect())
			info, err := b.Client("default", svc.GetApplicationID())
			require.NoError(t, err)
			assert.Equal(t, tt.transport == TransportSMFTLS, info.TLSVersion != "")
			require.NoError(t, svc.Disconnect())
		})
	}
	_, err := b.ListenAlso("web", "127.0.0.1:0")
	require.ErrorContains(t, err, `unknown transport "web"`)
	_, err = NewTestBroker(t, Config{}).ListenAlso(TransportSMFTLS, "127.0.0.1:0")
	require.ErrorContains(t, err, "no TLS certificate")
}
