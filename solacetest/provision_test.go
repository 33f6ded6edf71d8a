package solacetest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/config"
	"solace.dev/go/messaging/pkg/solace/resource"
	"solace.dev/go/messaging/pkg/solace/subcode"
)

// requireSubcode checks that err is a native error with the subcode.
func requireSubcode(t *testing.T, err error, want subcode.Code) {
	t.Helper()
	var ne *solace.NativeError
	require.True(t, errors.As(err, &ne), "want a NativeError, got %T %v", err, err)
	assert.Equal(t, want, ne.SubCode(), "error %v", err)
}

func TestEndpointProvisioner(t *testing.T) {
	b := NewTestBroker(t, Config{})
	svc := connect(t, b, nil)
	prov := func() solace.EndpointProvisioner { return svc.EndpointProvisioner() }

	// Every property reaches the queue.
	o := prov().WithDurability(true).WithExclusiveAccess(false).WithMaxMessageRedelivery(7).WithMaxMessageSize(1234).
		WithQuotaMB(55).WithPermission(config.EndpointPermissionModifyTopic).WithTTLPolicy(true).
		WithDiscardNotification(false).Provision("prov/q", false)
	require.NoError(t, o.GetError())
	require.True(t, o.GetStatus())
	cfg, _, err := b.Queue("default", "prov/q")
	require.NoError(t, err)
	assert.Equal(t, QueueConfig{Name: "prov/q", AccessType: AccessNonExclusive, Durable: true, IngressEnabled: true,
		EgressEnabled: true, Owner: "default", Permission: "modify-topic", DeadMsgQueue: sempDefaultDMQ,
		MaxMsgSpoolUsage: 55, MaxMsgSize: 1234, RespectTTL: true, MaxRedeliveryCount: 7,
		RejectMsgToSenderOnDiscard: "never"}, cfg)

	// Permissions map to SEMP's names.
	for perm, want := range map[config.EndpointPermission]string{
		config.EndpointPermissionNone: "no-access", config.EndpointPermissionReadOnly: "read-only",
		config.EndpointPermissionConsume: "consume", config.EndpointPermissionDelete: "delete",
	} {
		name := "prov/perm-" + want
		require.NoError(t, prov().WithDurability(true).WithPermission(perm).Provision(name, false).GetError())
		cfg, _, err := b.Queue("default", name)
		require.NoError(t, err)
		assert.Equal(t, want, cfg.Permission)
	}

	// An existing queue: "Already Exists", ignored on request; different
	// properties are a mismatch either way.
	o = prov().WithDurability(true).WithExclusiveAccess(false).Provision("prov/q", false)
	require.Error(t, o.GetError())
	assert.Equal(t, "Already Exists", o.GetError().Error())
	assert.False(t, o.GetStatus())
	o = prov().WithDurability(true).Provision("prov/q", true)
	assert.NoError(t, o.GetError(), "only the named properties are compared, and none differ")
	o = prov().WithDurability(true).WithExclusiveAccess(true).Provision("prov/q", true)
	require.Error(t, o.GetError())
	assert.Equal(t, "Endpoint Property Mismatch", o.GetError().Error())

	// Names the broker reserves, or too long.
	for _, name := range []string{strings.Repeat("a", 201), "#REPLAY_LOG_x", "#pq/abc/00001", "/a/b/"} {
		o = prov().WithDurability(true).Provision(name, false)
		require.Error(t, o.GetError(), name)
		assert.Equal(t, "Invalid Queue Name", o.GetError().Error(), name)
	}

	// The provisioned queue works, and deprovisioning deletes it.
	rcv := startReceiver(t, svc, resource.QueueDurableNonExclusive("prov/q"), nil)
	require.NoError(t, rcv.Terminate(time.Second))
	require.NoError(t, prov().Deprovision("prov/q", false))
	_, _, err = b.Queue("default", "prov/q")
	require.ErrorIs(t, err, ErrUnknownQueue)
	err = prov().Deprovision("prov/q", false)
	require.Error(t, err)
	assert.Equal(t, "Unknown Queue", err.Error())
	assert.NoError(t, prov().Deprovision("prov/q", true), "a missing queue is ignored on request")
}

func TestClientProfileGatesEndpointCreation(t *testing.T) {
	b := NewTestBroker(t, Config{})
	svc := connect(t, b, nil)
	setProfile := func(allow bool, durability string) {
		require.NoError(t, b.UpdateClientProfile("default", "default", func(p *ClientProfile) {
			p.AllowGuaranteedEndpointCreate, p.EndpointCreateDurability = allow, durability
		}))
	}
	startErr := func(q *resource.Queue, strategy config.MissingResourcesCreationStrategy) error {
		rcv, err := svc.CreatePersistentMessageReceiverBuilder().WithMissingResourcesCreationStrategy(strategy).Build(q)
		require.NoError(t, err)
		err = rcv.Start()
		_ = rcv.Terminate(time.Second)
		return err
	}
	createOnStart := config.PersistentReceiverCreateOnStartMissingResources

	setProfile(false, EndpointCreateAll)
	requireSubcode(t, startErr(resource.QueueDurableExclusive("gate/q"), createOnStart), subcode.PermissionNotAllowed)
	requireSubcode(t, startErr(resource.QueueNonDurableExclusiveAnonymous(), createOnStart), subcode.PermissionNotAllowed)
	o := svc.EndpointProvisioner().WithDurability(true).Provision("gate/q", false)
	require.Error(t, o.GetError())

	setProfile(true, EndpointCreateNonDurable)
	requireSubcode(t, startErr(resource.QueueDurableExclusive("gate/q"), createOnStart), subcode.PermissionNotAllowed)
	require.NoError(t, startErr(resource.QueueNonDurableExclusiveAnonymous(), createOnStart))

	setProfile(true, EndpointCreateDurable)
	requireSubcode(t, startErr(resource.QueueNonDurableExclusive("gate/t"), createOnStart), subcode.PermissionNotAllowed)
	require.NoError(t, startErr(resource.QueueDurableExclusive("gate/q"), createOnStart))
	_, _, err := b.Queue("default", "gate/q")
	require.NoError(t, err, "created on start")

	assert.Error(t, b.UpdateClientProfile("default", "default", func(p *ClientProfile) { p.EndpointCreateDurability = "some" }))
	assert.ErrorIs(t, b.UpdateClientProfile("default", "nope", func(*ClientProfile) {}), ErrUnknownClientProfile)
}

func TestBindDurabilityMismatch(t *testing.T) {
	b := NewTestBroker(t, Config{})
	svc := connect(t, b, nil)
	// The temporary-queue name the client forms for "dur" exists as a
	// durable queue.
	require.NoError(t, b.CreateQueue("default", QueueConfig{Name: "#P2P/QTMP/v:solacetest/dur"}))
	rcv, err := svc.CreatePersistentMessageReceiverBuilder().Build(resource.QueueNonDurableExclusive("dur"))
	require.NoError(t, err)
	requireSubcode(t, rcv.Start(), subcode.InvalidDurability)
}

func TestTemporaryQueueNameHasRouterForm(t *testing.T) {
	b := NewTestBroker(t, Config{RouterName: "r1"})
	svc := connect(t, b, nil)
	rcv := startReceiver(t, svc, resource.QueueNonDurableExclusive("tmp"), nil)
	info, err := rcv.ReceiverInfo()
	require.NoError(t, err)
	assert.Equal(t, "#P2P/QTMP/v:r1/tmp", info.GetResourceInfo().GetName())
}

func TestRejectMsgToSenderOnNoSubscriptionMatch(t *testing.T) {
	b := newBroker(t)
	svc := connect(t, b, nil)
	pub := startPublisher(t, svc)
	msg, err := svc.MessageBuilder().BuildWithStringPayload("x")
	require.NoError(t, err)
	require.NoError(t, pub.PublishAwaitAcknowledgement(msg, resource.TopicOf("nobody/listens"), 5*time.Second, nil),
		"acked and dropped by default")

	require.NoError(t, b.UpdateClientProfile("default", "default", func(p *ClientProfile) {
		p.RejectMsgToSenderOnNoSubscriptionMatch = true
	}))
	err = pub.PublishAwaitAcknowledgement(msg, resource.TopicOf("nobody/listens"), 5*time.Second, nil)
	requireSubcode(t, err, subcode.NoSubscriptionMatch)
	publish(t, svc, pub, "orders/1", "a matching message is still acked")
}

func TestQueueSubscriptionPermissions(t *testing.T) {
	b := newBroker(t) // q1 has the management subscription "orders/>"
	svc := connect(t, b, nil)
	rcv := startReceiver(t, svc, resource.QueueDurableExclusive("q1"), nil)

	requireSubcode(t, rcv.RemoveSubscription(resource.TopicSubscriptionOf("orders/>")), subcode.PermissionNotAllowed)
	requireSubcode(t, rcv.AddSubscription(resource.TopicSubscriptionOf("#P2P/QUE/v:solacetest/q1")), subcode.PermissionNotAllowed)
	requireSubcode(t, rcv.RemoveSubscription(resource.TopicSubscriptionOf("#P2P/QUE/q1")), subcode.PermissionNotAllowed)

	// What the client added, it may remove.
	require.NoError(t, rcv.AddSubscription(resource.TopicSubscriptionOf("mine/>")))
	require.NoError(t, rcv.RemoveSubscription(resource.TopicSubscriptionOf("mine/>")))
	cfg, _, err := b.Queue("default", "q1")
	require.NoError(t, err)
	assert.Equal(t, []string{"orders/>"}, cfg.Subscriptions)
}
