package session

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"solace.dev/go/messaging/pkg/solace/config"
)

func TestDefaultBackoffDelays(t *testing.T) {
	b := DefaultConfig("tcp://127.0.0.1:1").ConnectBackoff
	assert.Equal(t, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second},
		[]time.Duration{b.Delay(0), b.Delay(1), b.Delay(2), b.Delay(3), b.Delay(4)})
}

func TestServiceProperties(t *testing.T) {
	c := DefaultConfig("tcp://a:1", "tcp://b:2")
	c.Username, c.Password, c.ClientName = "u", "p", "me"
	p := c.serviceProperties()
	assert.Equal(t, "tcp://a:1,tcp://b:2", p[config.TransportLayerPropertyHost])
	assert.Equal(t, config.AuthenticationSchemeBasic, p[config.AuthenticationPropertyScheme])
	assert.Equal(t, "me", p[config.ClientPropertyName])
	assert.Equal(t, 3, p[config.TransportLayerPropertyReconnectionAttempts])
	assert.Equal(t, 0, p[config.TransportLayerPropertyConnectionRetries])

	c.AuthScheme = AuthOAuth2
	c.OAuth2 = OAuth2Config{AccessToken: "tok", Issuer: "iss"}
	p = c.serviceProperties()
	assert.Equal(t, config.AuthenticationSchemeOAuth2, p[config.AuthenticationPropertyScheme])
	assert.Equal(t, "tok", p[config.AuthenticationPropertySchemeOAuth2AccessToken])
	assert.NotContains(t, p, config.AuthenticationPropertySchemeBasicPassword)

	c = DefaultConfig("tcps://a:1")
	c.TLS.Enabled, c.TLS.TrustStorePath, c.TLS.ClientCertFile, c.TLS.ClientKeyFile = true, "/ts", "c.pem", "k.pem"
	c.AuthScheme = AuthClientCertificate
	p = c.serviceProperties()
	assert.Equal(t, "/ts", p[config.TransportLayerSecurityPropertyTrustStorePath])
	assert.Equal(t, "c.pem", p[config.AuthenticationPropertySchemeSSLClientCertFile])
	assert.Equal(t, true, p[config.TransportLayerSecurityPropertyCertValidated])
}
