package tests

import (
	"io"
	"net/http"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging"
	"solace.dev/go/messaging/pkg/solace/config"
	"solace.dev/go/messaging/pkg/solace/resource"
)

// TestDevbrokerServesTheSolaceClient runs `connect-solace devbroker` as its
// own process and drives it with the real Solace Go client: log in, publish
// persistently to a pre-created queue's topic, consume and ack.
func TestDevbrokerServesTheSolaceClient(t *testing.T) {
	p := startBinary(t, "devbroker", "--smf-addr", "127.0.0.1:0", "--semp-addr", "-", "--console-addr", "127.0.0.1:0",
		"--user", "app:pw", "--queue", "jobs:jobs/>,other/*")
	ready := regexp.MustCompile(`devbroker ready: smf=(tcp://\S+) .* console=(http://\S+)`)
	var url, consoleURL string
	require.Eventually(t, func() bool {
		m := ready.FindStringSubmatch(p.out.String())
		if m != nil {
			url, consoleURL = m[1], m[2]
		}
		return m != nil
	}, 30*time.Second, 20*time.Millisecond, "devbroker did not report ready:\n%s", p.out.String())
	require.Contains(t, p.out.String(), "not a production")

	// The web console answers the SEMP user with the pre-created queue.
	req, err := http.NewRequestWithContext(t.Context(), "GET", consoleURL+"/api/state", nil)
	require.NoError(t, err)
	req.SetBasicAuth("admin", "admin")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	state, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(state), `"Name":"jobs"`)

	svc, err := messaging.NewMessagingServiceBuilder().FromConfigurationProvider(config.ServicePropertyMap{
		config.TransportLayerPropertyHost:                      url,
		config.ServicePropertyVPNName:                          "default",
		config.AuthenticationPropertySchemeBasicUserName:       "app",
		config.AuthenticationPropertySchemeBasicPassword:       "pw",
		config.TransportLayerPropertyConnectionAttemptsTimeout: 5000,
	}).Build()
	require.NoError(t, err)
	require.NoError(t, svc.Connect())
	defer func() { _ = svc.Disconnect() }()

	pub, err := svc.CreatePersistentMessagePublisherBuilder().Build()
	require.NoError(t, err)
	require.NoError(t, pub.Start())
	for _, topic := range []string{"jobs/1", "other/2"} {
		msg, err := svc.MessageBuilder().BuildWithByteArrayPayload([]byte(topic))
		require.NoError(t, err)
		require.NoError(t, pub.PublishAwaitAcknowledgement(msg, resource.TopicOf(topic), 5*time.Second, nil))
	}
	require.NoError(t, pub.Terminate(time.Second))

	rcv, err := svc.CreatePersistentMessageReceiverBuilder().Build(resource.QueueDurableExclusive("jobs"))
	require.NoError(t, err)
	require.NoError(t, rcv.Start())
	for _, want := range []string{"jobs/1", "other/2"} {
		msg, err := rcv.ReceiveMessage(5 * time.Second)
		require.NoError(t, err)
		got, _ := msg.GetPayloadAsBytes()
		require.Equal(t, want, string(got))
		require.NoError(t, rcv.Ack(msg))
	}
	require.NoError(t, rcv.Terminate(time.Second))
	require.NoError(t, svc.Disconnect())
	require.Eventually(t, func() bool {
		return regexp.MustCompile(`client disconnected`).MatchString(p.out.String())
	}, 5*time.Second, 20*time.Millisecond, "the broker logs client activity")

	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, p.wait(t, 10*time.Second))
}
