package solacetest

// This file is client profiles: the per-VPN permission sets SEMP's
// msgVpns/{vpn}/clientProfiles configures. Every client uses its VPN's
// "default" profile (the broker has no client-username objects).

import (
	"fmt"
	"slices"
)

// Endpoint-create durabilities (SEMP's allowGuaranteedEndpointCreateDurability).
const (
	EndpointCreateAll        = "all"
	EndpointCreateDurable    = "durable"
	EndpointCreateNonDurable = "non-durable"
)

// defaultClientProfile is the profile every client uses.
const defaultClientProfile = "default"

// ClientProfile is a client profile's configuration.
type ClientProfile struct {
	Name string
	// AllowGuaranteedEndpointCreate lets clients create queues: durable ones
	// with the endpoint provisioner, temporary ones by binding. When false,
	// both fail with 403 "Permission Not Allowed".
	AllowGuaranteedEndpointCreate bool
	// EndpointCreateDurability narrows that to durable or non-durable
	// (temporary) queues; "all" allows both.
	EndpointCreateDurability string
	// RejectMsgToSenderOnNoSubscriptionMatch nacks a guaranteed message that
	// no queue subscribes to (503 "No Subscription Match") instead of
	// acking and dropping it.
	RejectMsgToSenderOnNoSubscriptionMatch bool
}

func defaultClientProfileConfig() *ClientProfile {
	return &ClientProfile{Name: defaultClientProfile, AllowGuaranteedEndpointCreate: true, EndpointCreateDurability: EndpointCreateAll}
}

// ClientProfile returns a client profile's configuration.
func (b *Broker) ClientProfile(vpn, name string) (ClientProfile, error) {
	return onNamed(b, vpn, name, clientProfilesOf, ErrUnknownClientProfile, func(p *ClientProfile) (ClientProfile, error) { return *p, nil })
}

// ClientProfiles lists a VPN's client profiles, sorted by name.
func (b *Broker) ClientProfiles(vpn string) ([]ClientProfile, error) {
	return inVPN(b, vpn, func(v *vpnState) ([]ClientProfile, error) {
		return sortedValues(v.profiles, deref), nil
	})
}

// UpdateClientProfile changes a client profile; it applies to connected
// clients at once.
func (b *Broker) UpdateClientProfile(vpn, name string, update func(*ClientProfile)) error {
	return changeNamed(b, vpn, name, clientProfilesOf, ErrUnknownClientProfile, func(p *ClientProfile) error {
		cfg := *p
		update(&cfg)
		cfg.Name = name
		if !slices.Contains([]string{EndpointCreateAll, EndpointCreateDurable, EndpointCreateNonDurable}, cfg.EndpointCreateDurability) {
			return fmt.Errorf("client profile %q: endpoint-create durability %q is not one of all, durable, non-durable", name, cfg.EndpointCreateDurability)
		}
		*p = cfg
		b.log.Info("client profile updated", "vpn", vpn, "profile", name, "endpoint_create", cfg.AllowGuaranteedEndpointCreate,
			"durability", cfg.EndpointCreateDurability, "reject_no_match", cfg.RejectMsgToSenderOnNoSubscriptionMatch)
		return nil
	})
}

// profile is the client profile of a logged-in connection.
func (c *conn) profile() *ClientProfile {
	if p := c.vpn.profiles[defaultClientProfile]; p != nil {
		return p
	}
	return defaultClientProfileConfig()
}

// mayCreateEndpoint reports whether the client's profile lets it create a
// durable (or, with durable false, a temporary) queue.
func (c *conn) mayCreateEndpoint(durable bool) bool {
	p := c.profile()
	if !p.AllowGuaranteedEndpointCreate {
		return false
	}
	switch p.EndpointCreateDurability {
	case EndpointCreateDurable:
		return durable
	case EndpointCreateNonDurable:
		return !durable
	}
	return true
}

// changeQueueSubscription applies a client's SMP add or remove of a queue
// subscription and returns the response status. As on a real broker, a
// client may not touch the queue's own #P2P/QUE/ topic, nor remove a
// subscription that management (SEMP or the package API) added.
func (c *conn) changeQueueSubscription(m *smpMsg) (uint32, string) {
	b := c.b
	q, ok := c.vpn.queues[m.Queue]
	switch {
	case !ok:
		return 503, "Unknown Queue"
	case isQueueTopic(m.Topic):
		b.log.Info("queue subscription to a #P2P/QUE/ topic refused", "client", c.clientName, "queue", m.Queue, "topic", m.Topic)
		return 403, "Permission Not Allowed"
	case !c.maySubscribe(m.Topic):
		// A real broker checks removals against the ACL too.
		b.log.Info("queue subscription change denied by ACL", "client", c.clientName, "queue", m.Queue, "topic", m.Topic)
		return 403, "Subscription ACL Denied"
	case m.Type == smpAddQueueSubscription:
		// Adding an existing subscription succeeds, so that receivers
		// started with WithSubscriptions can be restarted.
		if !slices.Contains(q.cfg.Subscriptions, m.Topic) {
			q.cfg.Subscriptions = append(q.cfg.Subscriptions, m.Topic)
			if q.clientSubs == nil {
				q.clientSubs = map[string]bool{}
			}
			q.clientSubs[m.Topic] = true
			c.b.st.configChanged()
		}
		b.log.Info("queue subscription added", "client", c.clientName, "queue", m.Queue, "topic", m.Topic)
	default:
		i := slices.Index(q.cfg.Subscriptions, m.Topic)
		if i < 0 {
			return 200, "OK"
		}
		if !q.clientSubs[m.Topic] {
			b.log.Info("removing a management-added queue subscription refused", "client", c.clientName, "queue", m.Queue, "topic", m.Topic)
			return 403, "Permission Not Allowed"
		}
		q.cfg.Subscriptions = slices.Delete(q.cfg.Subscriptions, i, i+1)
		delete(q.clientSubs, m.Topic)
		c.b.st.configChanged()
	}
	return 200, "OK"
}

// isQueueTopic reports whether topic is a #P2P/QUE/ queue address.
func isQueueTopic(topic string) bool {
	_, ok := queueFromTopic(topic)
	return ok
}
