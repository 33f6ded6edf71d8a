package solacetest

// Round trips between the project's SEMP client (internal/semp) and the
// broker's SEMP handler, every exchange checked against the spec from the
// client's side.

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace/resource"

	"github.com/connect-solace/connect-solace/internal/semp"
)

// specClient is a semp.Client for url whose exchanges rec validates.
func specClient(t *testing.T, url, user, pass string, rec *specRecorder) *semp.Client {
	t.Helper()
	c, err := semp.New(semp.Config{
		URL: url, Username: user, Password: pass, Timeout: 5 * time.Second, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: rec.transport(http.DefaultTransport)},
	})
	require.NoError(t, err)
	return c
}

func TestSEMPClientRoundTrip(t *testing.T) {
	f := newSEMPFixture(t)
	c := specClient(t, f.url, "admin", "pw", f.spec)
	ctx := t.Context()
	const name, topic = "orders/eu", "orders/eu/>"

	created, err := c.EnsureQueue(ctx, "default", semp.Queue{QueueName: name, AccessType: semp.AccessTypeNonExclusive,
		MaxRedeliveryCount: semp.Int64(3), IngressEnabled: semp.Bool(true), EgressEnabled: semp.Bool(true)})
	require.NoError(t, err)
	assert.True(t, created)
	created, err = c.EnsureQueue(ctx, "default", semp.Queue{QueueName: name})
	require.NoError(t, err)
	assert.False(t, created)

	_, err = c.CreateQueue(ctx, "default", semp.Queue{QueueName: name})
	assert.True(t, semp.IsAlreadyExists(err), "got %v", err)

	q, err := c.GetQueue(ctx, "default", name)
	require.NoError(t, err)
	assert.Equal(t, &semp.Queue{QueueName: name, MsgVpnName: "default", AccessType: semp.AccessTypeNonExclusive,
		Permission: semp.PermissionNoAccess, IngressEnabled: semp.Bool(true), EgressEnabled: semp.Bool(true),
		MaxRedeliveryCount: semp.Int64(3), DeadMsgQueue: "#DEAD_MSG_QUEUE", MaxMsgSpoolUsage: semp.Int64(5000),
		RespectTTLEnabled: semp.Bool(false), MaxTTL: semp.Int64(0), PartitionCount: new(int32)}, q)

	q, err = c.UpdateQueue(ctx, "default", semp.Queue{QueueName: name, DeadMsgQueue: "dmq", RespectTTLEnabled: semp.Bool(true)})
	require.NoError(t, err)
	assert.Equal(t, "dmq", q.DeadMsgQueue)
	assert.Equal(t, semp.AccessTypeNonExclusive, q.AccessType)
	cfg, _, err := f.admin.Queue("default", name)
	require.NoError(t, err)
	assert.True(t, cfg.RespectTTL)

	require.NoError(t, c.AddSubscription(ctx, "default", name, topic))
	require.NoError(t, c.AddSubscription(ctx, "default", name, topic), "an existing subscription is success")
	require.NoError(t, c.AddSubscription(ctx, "default", name, "a/*/#x"))
	subs, err := c.ListSubscriptions(ctx, "default", name)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{topic, "a/*/#x"}, subs)
	require.NoError(t, c.RemoveSubscription(ctx, "default", name, "a/*/#x"))
	err = c.RemoveSubscription(ctx, "default", name, "a/*/#x")
	assert.True(t, semp.IsNotFound(err), "got %v", err)

	f.admin.setStats("default", name, QueueStats{SpooledMsgCount: 4, SpooledBytes: 4096, Unacked: 1, Redelivered: 2, Consumers: 3})
	st, err := c.QueueStatus(ctx, "default", name)
	require.NoError(t, err)
	assert.Equal(t, semp.QueueStatus{QueueName: name, MsgVpnName: "default", AccessType: semp.AccessTypeNonExclusive,
		Durable: true, IngressEnabled: true, EgressEnabled: true, SpooledMsgCount: 4, MsgSpoolUsage: 4096,
		MaxMsgSpoolUsage: 5000, BindCount: 3, TxUnackedMsgCount: 1, RedeliveredMsgCount: 2, MaxRedeliveryCount: 3,
		DeadMsgQueue: "dmq", SubscriptionCount: 1}, *st)

	require.NoError(t, c.DeleteQueue(ctx, "default", name))
	_, err = c.GetQueue(ctx, "default", name)
	assert.True(t, semp.IsNotFound(err), "got %v", err)
	_, err = c.QueueStatus(ctx, "default", name)
	assert.True(t, semp.IsNotFound(err), "got %v", err)
	_, err = c.ListQueues(ctx, "nope")
	assert.True(t, semp.IsNotFound(err), "an unknown VPN is not found: %v", err)

	assert.Equal(t, 1, f.srv.sessionCount(), "the client reused its session cookie throughout")
}

func TestSEMPClientPaging(t *testing.T) {
	f := newSEMPFixture(t)
	const n = 2*sempMaxCount + 17
	var want []string
	for i := range n {
		name := fmt.Sprintf("p/%03d", i)
		want = append(want, name)
		require.NoError(t, f.admin.CreateQueue("default", QueueConfig{Name: name}))
		require.NoError(t, f.admin.AddQueueSubscription("default", "p/000", fmt.Sprintf("t/%03d", i)))
	}
	c := specClient(t, f.url, "admin", "pw", f.spec)

	qs, err := c.ListQueues(t.Context(), "default")
	require.NoError(t, err)
	var got []string
	for _, q := range qs {
		got = append(got, q.QueueName)
	}
	assert.Equal(t, want, got)

	sts, err := c.ListQueueStatuses(t.Context(), "default")
	require.NoError(t, err)
	require.Len(t, sts, n)
	assert.Equal(t, int64(n), sts[0].SubscriptionCount, "collections stay aligned with data")

	subs, err := c.ListSubscriptions(t.Context(), "default", "p/000")
	require.NoError(t, err)
	assert.Len(t, subs, n)
	assert.True(t, slices.IsSorted(subs))
}

func TestSEMPClientAuthFailure(t *testing.T) {
	f := newSEMPFixture(t)
	c := specClient(t, f.url, "admin", "not-the-password", f.spec)
	_, err := c.ListQueues(t.Context(), "default")
	require.True(t, semp.IsUnauthorized(err), "got %v", err)
	assert.NotContains(t, err.Error(), "not-the-password")
	assert.Contains(t, err.Error(), "UNAUTHORIZED")
	assert.Equal(t, 0, f.srv.sessionCount())
}

// TestSEMPAgainstBroker drives the real broker: queues provisioned over
// SEMP receive guaranteed messages over SMF, and the monitor API reports the
// spool and the bound consumer live.
func TestSEMPAgainstBroker(t *testing.T) {
	b := NewTestBroker(t, Config{})
	spec := newSpecRecorder(t)
	c := specClient(t, b.SEMPURL(), "admin", "admin", spec)
	ctx := t.Context()
	const qname = "semp/q1"

	created, err := c.EnsureQueue(ctx, "default", semp.Queue{QueueName: qname, IngressEnabled: semp.Bool(true), EgressEnabled: semp.Bool(true)})
	require.NoError(t, err)
	require.True(t, created)
	require.NoError(t, c.AddSubscription(ctx, "default", qname, "orders/>"))
	cfg, _, err := b.Queue("default", qname)
	require.NoError(t, err)
	assert.Equal(t, []string{"orders/>"}, cfg.Subscriptions)

	svc := connect(t, b, nil)
	pub := startPublisher(t, svc)
	for i := range 3 {
		publish(t, svc, pub, fmt.Sprintf("orders/eu/%d", i), fmt.Sprintf("m%d", i))
	}
	st, err := c.QueueStatus(ctx, "default", qname)
	require.NoError(t, err)
	assert.Equal(t, int64(3), st.SpooledMsgCount)
	assert.Positive(t, st.MsgSpoolUsage)
	assert.Zero(t, st.BindCount)
	assert.Equal(t, int64(1), st.SubscriptionCount)

	rcv := startReceiver(t, svc, resource.QueueDurableExclusive(qname), nil)
	msg := receive(t, rcv)
	require.Eventually(t, func() bool {
		st, err := c.QueueStatus(ctx, "default", qname)
		return err == nil && st.BindCount == 1 && st.TxUnackedMsgCount >= 1
	}, 5*time.Second, 10*time.Millisecond)
	require.NoError(t, rcv.Ack(msg))
	for range 2 {
		require.NoError(t, rcv.Ack(receive(t, rcv)))
	}
	require.Eventually(t, func() bool {
		st, err := c.QueueStatus(ctx, "default", qname)
		return err == nil && st.SpooledMsgCount == 0 && st.MsgSpoolUsage == 0
	}, 5*time.Second, 10*time.Millisecond)

	// Disabling egress over SEMP reaches the broker.
	_, err = c.UpdateQueue(ctx, "default", semp.Queue{QueueName: qname, EgressEnabled: semp.Bool(false)})
	require.NoError(t, err)
	cfg, _, err = b.Queue("default", qname)
	require.NoError(t, err)
	assert.False(t, cfg.EgressEnabled)

	qs, err := c.ListQueues(ctx, "default")
	require.NoError(t, err)
	require.Len(t, qs, 1)
	assert.Equal(t, qname, qs[0].QueueName)

	require.NoError(t, rcv.Terminate(time.Second))
	require.NoError(t, c.DeleteQueue(ctx, "default", qname))
	_, _, err = b.Queue("default", qname)
	require.ErrorIs(t, err, ErrUnknownQueue)
	assert.NotEmpty(t, spec.covered())
}
