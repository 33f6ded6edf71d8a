// Package solacekit holds what the solace plugins' tests share about the
// plugins and their peers (solacetest, the broker, knows nothing of them):
// the connection block their configs start with, and a plain Go client
// connected as the same user, to publish to or receive from what a plugin
// does. Only _test.go files import it.
package solacekit

import (
	"fmt"
	"maps"
	"testing"

	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging"
	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/config"
)

// ConnectionYAML is the connection block of the solace input and output for
// a broker at url (a solacetest broker's SMFURL), as the plugins' tests use
// it: the default client user and fast failure settings (no connect
// retries, quick client reconnects).
func ConnectionYAML(url string) string {
	return fmt.Sprintf(`urls: [ %s ]
username: default
password: default
connect_retries: 0
reconnect_attempts: 20
reconnect_interval: 100ms
connect_timeout: 5s
`, url)
}

// Service connects a plain Solace Go client to the broker at url as the
// plugins' tests connect (VPN, user and password "default"), with the
// client properties of extra added or overriding, and disconnects it when
// tb ends.
func Service(tb testing.TB, url string, extra config.ServicePropertyMap) solace.MessagingService {
	tb.Helper()
	props := config.ServicePropertyMap{
		config.TransportLayerPropertyHost:                url,
		config.ServicePropertyVPNName:                    "default",
		config.AuthenticationPropertySchemeBasicUserName: "default",
		config.AuthenticationPropertySchemeBasicPassword: "default",
	}
	maps.Copy(props, extra)
	svc, err := messaging.NewMessagingServiceBuilder().FromConfigurationProvider(props).Build()
	require.NoError(tb, err)
	require.NoError(tb, svc.Connect())
	tb.Cleanup(func() { _ = svc.Disconnect() })
	return svc
}
