package solacetest

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSEMPBodyChecksAndNotFound pins the error responses of the checks the
// SEMP handlers share (matchesPath, onlyDefault*Profile, findNamed): status,
// SEMP status and the description to the letter, and which check wins when
// a body breaks two.
func TestSEMPBodyChecksAndNotFound(t *testing.T) {
	b := newBroker(t)
	const vpn = "config/msgVpns/default"
	tests := []struct {
		name, method, path, body string
		status                   int
		semp, desc               string
	}{
		{"client username in another VPN", "POST", vpn + "/clientUsernames", `{"clientUsername":"u","msgVpnName":"other"}`,
			400, "INVALID_PARAMETER", `msgVpnName "other" does not match the request path's "default"`},
		{"client username: client profile checked before ACL profile", "POST", vpn + "/clientUsernames",
			`{"clientUsername":"u","clientProfileName":"p","aclProfileName":"a"}`,
			400, "NOT_SUPPORTED", `clientProfileName "p": every client uses the "default" client profile`},
		{"client username: ACL profile", "POST", vpn + "/clientUsernames", `{"clientUsername":"u","aclProfileName":"a"}`,
			400, "NOT_SUPPORTED", `aclProfileName "a": every client uses the "default" ACL profile`},
		{"authorization group: ACL profile checked before client profile", "POST", vpn + "/authorizationGroups",
			`{"authorizationGroupName":"g","clientProfileName":"p","aclProfileName":"a"}`,
			400, "NOT_SUPPORTED", `aclProfileName "a": every client uses the "default" ACL profile`},
		{"authorization group: client profile", "POST", vpn + "/authorizationGroups", `{"authorizationGroupName":"g","clientProfileName":"p"}`,
			400, "NOT_SUPPORTED", `clientProfileName "p": every client uses the "default" client profile`},
		{"authorization group: VPN before profiles", "POST", vpn + "/authorizationGroups",
			`{"authorizationGroupName":"g","msgVpnName":"x","aclProfileName":"a"}`,
			400, "INVALID_PARAMETER", `msgVpnName "x" does not match the request path's "default"`},
		{"queue in another VPN", "POST", vpn + "/queues", `{"queueName":"q9","msgVpnName":"x"}`,
			400, "INVALID_PARAMETER", `msgVpnName "x" does not match the request path's "default"`},
		{"queue renamed", "PATCH", vpn + "/queues/q1", `{"queueName":"q2"}`,
			400, "INVALID_PARAMETER", `queueName "q2" does not match the request path's "q1"`},
		{"subscription on another queue", "POST", vpn + "/queues/q1/subscriptions", `{"subscriptionTopic":"a/b","queueName":"q2"}`,
			400, "INVALID_PARAMETER", `queueName "q2" does not match the request path's "q1"`},
		{"client profile renamed", "PATCH", vpn + "/clientProfiles/default", `{"clientProfileName":"other"}`,
			400, "INVALID_PARAMETER", `clientProfileName "other" does not match the request path's "default"`},
		{"VPN renamed", "PATCH", vpn, `{"msgVpnName":"other"}`,
			400, "INVALID_PARAMETER", `msgVpnName "other" does not match the request path's "default"`},
		{"ACL exception on another profile", "POST", vpn + "/aclProfiles/default/publishTopicExceptions",
			`{"publishTopicException":"a/b","aclProfileName":"x"}`,
			400, "INVALID_PARAMETER", `aclProfileName "x" does not match the request path's "default"`},
		{"replay log in another VPN", "POST", vpn + "/replayLogs", `{"replayLogName":"r","msgVpnName":"x"}`,
			400, "INVALID_PARAMETER", `msgVpnName "x" does not match the request path's "default"`},
		{"OAuth profile in another VPN", "POST", vpn + "/authenticationOauthProfiles", `{"oauthProfileName":"o","msgVpnName":"x"}`,
			400, "INVALID_PARAMETER", `msgVpnName "x" does not match the request path's "default"`},
		{"no client username", "GET", vpn + "/clientUsernames/nope", "", 404, "NOT_FOUND", `could not find match for clientUsername "nope"`},
		{"no authorization group", "GET", vpn + "/authorizationGroups/nope", "", 404, "NOT_FOUND", `could not find match for authorizationGroup "nope"`},
		{"no OAuth profile", "GET", vpn + "/authenticationOauthProfiles/nope", "", 404, "NOT_FOUND", `could not find match for authenticationOauthProfile "nope"`},
		{"no replay log", "GET", vpn + "/replayLogs/nope", "", 404, "NOT_FOUND", `could not find match for replayLog "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := newBrokerSEMP(t, b).do(tt.method, tt.path, tt.body)
			require.Equal(t, tt.status, status, body)
			require.Equal(t, tt.semp, errStatusOf(body), body)
			meta, _ := body["meta"].(map[string]any)
			e, _ := meta["error"].(map[string]any)
			require.Equal(t, tt.desc, e["description"], body)
		})
	}
}
