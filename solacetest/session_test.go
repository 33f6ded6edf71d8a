package solacetest

import (
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging"
	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/config"
	"solace.dev/go/messaging/pkg/solace/resource"
)

func TestLogin(t *testing.T) {
	b := NewTestBroker(t, Config{
		Users: map[string]string{"alice": "s3cret"},
		VPNs:  []string{"default", "prod"},
	})
	tests := []struct {
		name, user, pass, vpn string
		wantAuthErr           bool
		wantErr               bool
	}{
		{name: "valid", user: "alice", pass: "s3cret", vpn: "default"},
		{name: "second vpn", user: "alice", pass: "s3cret", vpn: "prod"},
		{name: "wrong password", user: "alice", pass: "nope", vpn: "default", wantAuthErr: true},
		{name: "unknown user", user: "bob", pass: "s3cret", vpn: "default", wantAuthErr: true},
		{name: "unknown vpn", user: "alice", pass: "s3cret", vpn: "staging", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			props := clientProps(b.SMFURL(), tc.user, tc.pass)
			props[config.ServicePropertyVPNName] = tc.vpn
			svc, err := messaging.NewMessagingServiceBuilder().FromConfigurationProvider(props).Build()
			require.NoError(t, err)
			err = svc.Connect()
			switch {
			case tc.wantAuthErr:
				var authErr *solace.AuthenticationError
				require.ErrorAs(t, err, &authErr)
			case tc.wantErr:
				require.Error(t, err)
			default:
				require.NoError(t, err)
				require.True(t, svc.IsConnected())
				require.Equal(t, 1, b.ClientCount())
				require.NoError(t, svc.Disconnect())
				require.Eventually(t, func() bool { return b.ClientCount() == 0 }, 5*time.Second, 10*time.Millisecond)
			}
		})
	}
}

func TestKeepalivesAnswered(t *testing.T) {
	b := NewTestBroker(t, Config{})
	// With a 100 ms interval the client gives up after 3 unanswered
	// keepalives, so 10 answered ones prove the broker keeps it alive.
	svc := connect(t, b, config.ServicePropertyMap{
		config.TransportLayerPropertyKeepAliveInterval:             100,
		config.TransportLayerPropertyKeepAliveWithoutResponseLimit: 3,
	})
	require.Eventually(t, func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.keepalives >= 10
	}, 10*time.Second, 20*time.Millisecond)
	require.True(t, svc.IsConnected())
}

func TestRefuseLogins(t *testing.T) {
	b := NewTestBroker(t, Config{})
	b.Faults().RefuseLogins(time.Hour)
	props := clientProps(b.SMFURL(), "default", "default")
	svc, err := messaging.NewMessagingServiceBuilder().FromConfigurationProvider(props).Build()
	require.NoError(t, err)
	require.Error(t, svc.Connect())
	b.Faults().RefuseLogins(0)
	svc, err = messaging.NewMessagingServiceBuilder().FromConfigurationProvider(props).Build()
	require.NoError(t, err)
	require.NoError(t, svc.Connect())
	require.NoError(t, svc.Disconnect())
}

func TestCloseDisconnectsClients(t *testing.T) {
	b, err := Start(Config{})
	require.NoError(t, err)
	svc := connect(t, b, nil)
	down := make(chan struct{})
	svc.AddServiceInterruptionListener(func(solace.ServiceEvent) { close(down) })
	require.NoError(t, b.Close())
	select {
	case <-down:
	case <-time.After(10 * time.Second):
		t.Fatal("client did not notice the broker closing")
	}
	require.NoError(t, b.Close(), "Close is idempotent")
}

func TestSEMPDisabled(t *testing.T) {
	b := NewTestBroker(t, Config{SEMPAddr: "-"})
	require.Empty(t, b.SEMPURL())
	require.Empty(t, b.SMFSURL())
	require.Contains(t, b.SMFURL(), "tcp://127.0.0.1:")
}

func TestQueueAdministration(t *testing.T) {
	b := NewTestBroker(t, Config{})
	require.NoError(t, b.CreateQueue("default", QueueConfig{Name: "a", Subscriptions: []string{"x/>"}}))
	require.ErrorIs(t, b.CreateQueue("default", QueueConfig{Name: "a"}), ErrQueueExists)
	require.ErrorIs(t, b.CreateQueue("nope", QueueConfig{Name: "a"}), ErrUnknownVPN)
	require.ErrorIs(t, b.AddQueueSubscription("default", "a", "x/>"), ErrSubscriptionExists)
	require.NoError(t, b.AddQueueSubscription("default", "a", "y/*"))
	require.ErrorIs(t, b.RemoveQueueSubscription("default", "a", "z"), ErrUnknownSubscription)
	require.NoError(t, b.RemoveQueueSubscription("default", "a", "x/>"))
	cfg, st, err := b.Queue("default", "a")
	require.NoError(t, err)
	require.Equal(t, []string{"y/*"}, cfg.Subscriptions)
	require.Equal(t, AccessExclusive, cfg.AccessType)
	require.True(t, cfg.Durable && cfg.IngressEnabled && cfg.EgressEnabled)
	require.Equal(t, QueueStats{}, st)
	require.NoError(t, b.UpdateQueue("default", "a", func(c *QueueConfig) { c.AccessType = AccessNonExclusive }))
	qs, err := b.Queues("default")
	require.NoError(t, err)
	require.Len(t, qs, 1)
	require.Equal(t, AccessNonExclusive, qs[0].AccessType)
	require.NoError(t, b.DeleteQueue("default", "a"))
	require.ErrorIs(t, b.DeleteQueue("default", "a"), ErrUnknownQueue)
	_, _, err = b.Queue("default", "a")
	require.ErrorIs(t, err, ErrUnknownQueue)
	require.ErrorIs(t, b.UpdateQueue("default", "a", func(*QueueConfig) {}), ErrUnknownQueue)
	require.True(t, b.HasVPN("default"))
	require.False(t, b.HasVPN("other"))
}

func TestPauseAndResumeDelivery(t *testing.T) {
	b := newBroker(t)
	svc := connect(t, b, nil)
	pub := startPublisher(t, svc)
	rcv := startReceiver(t, svc, resource.QueueDurableExclusive("q1"), nil)
	b.Faults().PauseDelivery()
	publish(t, svc, pub, "orders/1", "held")
	_, err := rcv.ReceiveMessage(300 * time.Millisecond)
	require.Error(t, err, "nothing is delivered while paused")
	b.Faults().ResumeDelivery()
	require.Equal(t, "held", payloadOf(t, receive(t, rcv)))
}

func TestCloseLeaksNoGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	tlsConf, _ := SelfSignedTLS(t)
	b, err := Start(Config{TLS: tlsConf})
	require.NoError(t, err)
	// Raw connections: one idle, one that sent half a frame.
	for _, data := range [][]byte{nil, {0x03, 0x8c, 0x00}} {
		nc, err := net.Dial("tcp", strings.TrimPrefix(b.SMFURL(), "tcp://"))
		require.NoError(t, err)
		defer nc.Close()
		_, err = nc.Write(data)
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { b.mu.Lock(); defer b.mu.Unlock(); return len(b.conns) == 2 }, 5*time.Second, 10*time.Millisecond)
	require.NoError(t, b.Close())
	// Poll by hand: require.Eventually runs its own goroutines.
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if runtime.NumGoroutine() > before {
		buf := make([]byte, 1<<20)
		t.Fatalf("goroutines: before %d, after %d:\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
	}
}
