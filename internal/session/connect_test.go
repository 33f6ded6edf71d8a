package session

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/solacetest"
)

// testConfig is a fast-failing config for b.
func testConfig(b *solacetest.Broker) Config {
	c := DefaultConfig(b.SMFURL())
	c.Username, c.Password = "default", "default"
	c.ConnectRetries = 0
	c.ConnectBackoff = Backoff{Initial: 20 * time.Millisecond, Multiplier: 2, Max: 100 * time.Millisecond}
	c.ReconnectInterval = 50 * time.Millisecond
	c.ConnectTimeout = 5 * time.Second
	return c
}

func TestConnectAndClose(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	s, err := Connect(t.Context(), testConfig(b), nil, Events{})
	require.NoError(t, err)
	assert.True(t, s.Connected())
	assert.Equal(t, 1, b.ClientCount())
	require.NoError(t, s.WaitConnected(t.Context()))
	require.NoError(t, s.Close(t.Context()))
	require.NoError(t, s.Close(t.Context()), "Close is idempotent")
	assert.False(t, s.Connected())
	select {
	case <-s.Down():
	default:
		t.Fatal("Down not closed after Close")
	}
	require.Eventually(t, func() bool { return b.ClientCount() == 0 }, 5*time.Second, 10*time.Millisecond)
}

func TestConnectRetriesUntilLoginsAccepted(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	refusal := 300 * time.Millisecond
	b.Faults().RefuseLogins(refusal)
	c := testConfig(b)
	c.ConnectRetries = 6 // 20+40+80+100+100+100 ms of backoff outlasts the refusal
	start := time.Now()
	s, err := Connect(t.Context(), c, nil, Events{})
	require.NoError(t, err)
	defer func() { _ = s.Close(context.Background()) }()
	assert.GreaterOrEqual(t, time.Since(start), refusal, "the first attempts must have been refused")
}

func TestConnectGivesUpAndHidesSecrets(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	tests := []struct {
		name    string
		mutate  func(*Config)
		refuse  bool
		retries int
	}{
		{name: "wrong password", mutate: func(c *Config) { c.Password = "hunter2-very-secret" }},
		{name: "refused logins", mutate: func(c *Config) { c.Password = "hunter2-very-secret" }, refuse: true, retries: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.refuse {
				b.Faults().RefuseLogins(time.Minute)
				defer b.Faults().RefuseLogins(0)
			}
			c := testConfig(b)
			tt.mutate(&c)
			c.ConnectRetries = tt.retries
			_, err := Connect(t.Context(), c, nil, Events{})
			require.Error(t, err)
			assert.NotContains(t, err.Error(), "hunter2")
			assert.Contains(t, err.Error(), b.SMFURL())
		})
	}
}

func TestConnectHonoursContext(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	b.Faults().RefuseLogins(time.Minute)
	defer b.Faults().RefuseLogins(0)
	c := testConfig(b)
	c.ConnectRetries = 100
	c.ConnectBackoff = Backoff{Initial: time.Second, Multiplier: 1, Max: time.Second}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Connect(ctx, c, nil, Events{})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 3*time.Second)
}

func TestSessionEvents(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})

	t.Run("reconnect", func(t *testing.T) {
		reconnecting, reconnected := make(chan error, 4), make(chan struct{}, 4)
		s, err := Connect(t.Context(), testConfig(b), nil, Events{
			OnReconnecting: func(err error) { reconnecting <- err },
			OnReconnected:  func() { reconnected <- struct{}{} },
		})
		require.NoError(t, err)
		defer func() { _ = s.Close(context.Background()) }()
		b.Faults().DropConnections()
		select {
		case err := <-reconnecting:
			assert.Error(t, err)
		case <-time.After(5 * time.Second):
			t.Fatal("no reconnecting event")
		}
		select {
		case <-reconnected:
		case <-time.After(5 * time.Second):
			t.Fatal("no reconnected event")
		}
		require.NoError(t, s.WaitConnected(t.Context()))
		assert.True(t, s.Connected())
		assert.Empty(t, reconnected, "one reconnection, reported once")
	})

	t.Run("interrupted", func(t *testing.T) {
		interrupted := make(chan error, 1)
		c := testConfig(b)
		c.ReconnectAttempts = 0
		s, err := Connect(t.Context(), c, nil, Events{OnInterrupted: func(err error) { interrupted <- err }})
		require.NoError(t, err)
		defer func() { _ = s.Close(context.Background()) }()
		b.Faults().DropConnections()
		select {
		case <-interrupted:
		case <-time.After(5 * time.Second):
			t.Fatal("no interrupted event")
		}
		<-s.Down()
		assert.False(t, s.Connected())
		assert.Error(t, s.Err())
		assert.True(t, errors.Is(s.WaitConnected(t.Context()), ErrSessionDown))
	})
}

func TestPoolClientNamesAndPublish(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	require.NoError(t, b.CreateQueue("default", solacetest.QueueConfig{Name: "pq"}))
	c := testConfig(b)
	c.ClientName = "fixed"
	p, err := NewPool(t.Context(), c, 3, PublisherOptions{Persistent: true, BackPressure: BackPressure{BufferSize: 10}}, nil, Events{})
	require.NoError(t, err, "a fixed client name must get a per-session suffix")
	defer func() { _ = p.Close(context.Background()) }()
	assert.Equal(t, 3, b.ClientCount())
	assert.True(t, p.Alive())

	seen := map[*Publisher]bool{}
	for i := 0; i < 3; i++ {
		pub := p.Publisher()
		seen[pub] = true
		res := pub.PublishBatch(t.Context(), []*Outbound{{Payload: []byte("x"), Destination: Destination{Name: "pq", Queue: true}}})
		require.NoError(t, res[0].Err)
		assert.Positive(t, res[0].Latency)
	}
	assert.Len(t, seen, 3, "round robin over every session")
	_, stats, err := b.Queue("default", "pq")
	require.NoError(t, err)
	assert.Equal(t, 3, stats.SpooledMsgCount)
}

func TestPublisherRejectModeOverflowRetries(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	require.NoError(t, b.CreateQueue("default", solacetest.QueueConfig{Name: "rq"}))
	for _, persistent := range []bool{true, false} {
		s, err := Connect(t.Context(), testConfig(b), nil, Events{})
		require.NoError(t, err)
		pub, err := NewPublisher(s, PublisherOptions{Persistent: persistent, BackPressure: BackPressure{Reject: true}})
		require.NoError(t, err)
		msgs := make([]*Outbound, 2000)
		for i := range msgs {
			msgs[i] = &Outbound{Payload: make([]byte, 1024), Destination: Destination{Name: "rq", Queue: true}}
		}
		for i, r := range pub.PublishBatch(t.Context(), msgs) {
			require.NoError(t, r.Err, "message %d", i)
		}
		require.NoError(t, pub.Close(t.Context()))
		require.NoError(t, s.Close(t.Context()))
	}
	_, stats, err := b.Queue("default", "rq")
	require.NoError(t, err)
	assert.Equal(t, 2000, stats.SpooledMsgCount, "persistent messages all spooled (direct ones to a queue topic are not spooled by solacetest)")
}

func TestConnectTLS(t *testing.T) {
	serverTLS, trust := solacetest.SelfSignedTLS(t)
	b := solacetest.NewTestBroker(t, solacetest.Config{TLS: serverTLS})

	tests := []struct {
		name    string
		mutate  func(*Config)
		wantErr bool
	}{
		{name: "trusted", mutate: func(c *Config) { c.TLS.TrustStorePath = trust }},
		{name: "untrusted", mutate: func(c *Config) { c.TLS.TrustStorePath = t.TempDir() }, wantErr: true},
		{name: "validation off", mutate: func(c *Config) { c.TLS.ValidateServerCert = false }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := testConfig(b)
			c.URLs = []string{b.SMFSURL()}
			c.TLS.Enabled = true
			tt.mutate(&c)
			s, err := Connect(t.Context(), c, nil, Events{})
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.True(t, s.Connected())
			require.NoError(t, s.Close(t.Context()))
		})
	}
}

// TestConnectWithPasswordFile logs in with the password read from a file at
// connect time, and fails with the broker's refusal when the file holds the
// wrong one or a clear error when it is missing.
func TestConnectWithPasswordFile(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{Users: map[string]string{"app": "s3cret"}})
	dir := t.TempDir()
	tests := []struct {
		name    string
		content string // "" means no file
		wantErr []string
	}{
		{name: "right password with newline", content: "s3cret\n"},
		{name: "wrong password", content: "hunter2-wrong\n", wantErr: []string{"connecting to solace", `as "app"`, "failed to authenticate", "Unauthorized"}},
		{name: "missing file", wantErr: []string{"field password_file", "no such file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_"))
			if tt.content != "" {
				require.NoError(t, os.WriteFile(path, []byte(tt.content), 0o600))
			}
			c := testConfig(b)
			c.Username, c.Password, c.PasswordFile = "app", "", path
			s, err := Connect(t.Context(), c, nil, Events{})
			if tt.wantErr == nil {
				require.NoError(t, err)
				assert.True(t, s.Connected())
				require.NoError(t, s.Close(t.Context()))
				return
			}
			require.Error(t, err)
			for _, w := range tt.wantErr {
				assert.Contains(t, err.Error(), w)
			}
			if tt.content != "" {
				assert.Contains(t, err.Error(), b.SMFURL())
			} else {
				assert.Contains(t, err.Error(), path)
			}
			assert.NotContains(t, err.Error(), "hunter2")
			assert.NotContains(t, err.Error(), "s3cret")
		})
	}
}

// TestConnectRereadsPasswordFile checks a rotated secret is used by the next
// connect.
func TestConnectRereadsPasswordFile(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{Users: map[string]string{"app": "s3cret"}})
	path := filepath.Join(t.TempDir(), "password")
	require.NoError(t, os.WriteFile(path, []byte("old-password\n"), 0o600))
	c := testConfig(b)
	c.Username, c.Password, c.PasswordFile = "app", "", path
	_, err := Connect(t.Context(), c, nil, Events{})
	require.Error(t, err)
	require.NoError(t, os.WriteFile(path, []byte("s3cret\n"), 0o600))
	s, err := Connect(t.Context(), c, nil, Events{})
	require.NoError(t, err)
	require.NoError(t, s.Close(t.Context()))
}

// TestPublishBatchIntoReusesDst checks that PublishBatchInto writes its
// results into the caller's scratch slice, clearing what an earlier batch
// left there, for direct and persistent delivery, and grows a slice too
// small.
func TestPublishBatchIntoReusesDst(t *testing.T) {
	b := solacetest.NewTestBroker(t, solacetest.Config{})
	require.NoError(t, b.CreateQueue("default", solacetest.QueueConfig{Name: "iq"}))
	for _, persistent := range []bool{true, false} {
		t.Run(fmt.Sprintf("persistent=%v", persistent), func(t *testing.T) {
			s, err := Connect(t.Context(), testConfig(b), nil, Events{})
			require.NoError(t, err)
			defer func() { _ = s.Close(context.Background()) }()
			pub, err := NewPublisher(s, PublisherOptions{Persistent: persistent, BackPressure: BackPressure{BufferSize: 10}})
			require.NoError(t, err)
			defer func() { _ = pub.Close(context.Background()) }()
			msgs := []*Outbound{
				{Payload: []byte("a"), Destination: Destination{Name: "iq", Queue: true}},
				{Payload: []byte("b"), Destination: Destination{Name: "iq", Queue: true}},
			}
			stale := errors.New("left from an earlier batch")
			dst := make([]Result, 1, 4)
			dst = append(dst[:0], Result{Err: stale}, Result{Err: stale}, Result{Err: stale})
			res := pub.PublishBatchInto(t.Context(), msgs, dst[:0])
			require.Len(t, res, 2)
			assert.Same(t, &dst[0], &res[0], "the results live in dst")
			for i, r := range res {
				require.NoError(t, r.Err, "message %d", i)
			}
			grown := pub.PublishBatchInto(t.Context(), msgs, make([]Result, 0, 1))
			require.Len(t, grown, 2)
			for i, r := range grown {
				require.NoError(t, r.Err, "message %d", i)
			}
		})
	}
}
