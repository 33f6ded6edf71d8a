package solacetest

// This file is client-side endpoint provisioning: the AssuredCtrl Create (8)
// and Delete (9) messages that the Go client's EndpointProvisioner (and a
// receiver started with the create-on-start strategy) sends. A create
// carries the queue name (p7), durability (p11), access type (p12), the
// permission granted to other clients (p17), quota in MB (p19), maximum
// message size (p20), respect-TTL (p22), the endpoint behaviour flags (p34,
// here the discard-notification bits) and the maximum redelivery count
// (p42); absent ones take the broker's defaults. A delete carries the name.

import (
	"strings"
)

// AssuredCtrl parameters only a create carries.
const (
	apAllOthersPerms = 17
	apQuotaMB        = 19
	apMaxMsgSize     = 20
)

// Endpoint behaviour (p34) bits of a create: discard notification on or off.
const (
	epNotifySenderOn  = 0x2000
	epNotifySenderOff = 0x1000
)

// endpointPermissions maps p17 values to SEMP's permission names.
var endpointPermissions = map[uint64]string{0: "no-access", 1: "read-only", 3: "consume", 7: "modify-topic", 15: "delete"}

// maxQueueNameLen is the longest queue name a broker accepts.
const maxQueueNameLen = 200

// validQueueName reports whether a client may create a queue of this name:
// at most 200 characters, not a level-structured topic-like name, and none
// of the names the broker reserves for its own replay-log and partition
// queues.
func validQueueName(name string) bool {
	if name == "" || len(name) > maxQueueNameLen || strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") {
		return false
	}
	for _, reserved := range []string{"#REPLAY_LOG_", "#REPLAY_TOPICS_", "#pq/"} {
		if strings.HasPrefix(name, reserved) {
			return false
		}
	}
	return !strings.ContainsAny(name, "*>?'\"<&")
}

func (c *conn) provisionEndpoint(tag []byte, a *adctrl) {
	b := c.b
	nameB, _ := a.get(apQueueName)
	name := trimNUL(nameB)
	fail := func(code uint32, text string) {
		b.log.Info("endpoint provisioning refused", "client", c.clientName, "queue", name, "op", a.Type, "status", code, "reason", text)
		c.sendAdCtrl(tag, code, text, a.Type, nil)
	}
	if _, ok := a.get(apDTEName); ok {
		fail(403, "Permission Not Allowed") // topic endpoints are not implemented
		return
	}
	if a.Type == adDelete {
		q := c.vpn.queues[name]
		if q == nil || !q.cfg.Durable {
			fail(503, "Unknown Queue")
			return
		}
		if !c.mayCreateEndpoint(true) {
			fail(403, "Permission Not Allowed")
			return
		}
		b.deleteQueueLocked(q)
		b.log.Info("queue deprovisioned by client", "client", c.clientName, "queue", name)
		c.sendAdCtrl(tag, 200, "OK", a.Type, nil)
		return
	}
	if dur, _ := a.uint(apDurability); dur != 1 {
		fail(400, "Invalid Durability")
		return
	}
	if !c.mayCreateEndpoint(true) {
		fail(403, "Permission Not Allowed")
		return
	}
	if !validQueueName(name) {
		fail(400, "Invalid Queue Name")
		return
	}
	cfg, ok := provisionedQueueConfig(name, c.user, a)
	if !ok {
		fail(400, "Invalid Parameter")
		return
	}
	if q := c.vpn.queues[name]; q != nil {
		if !q.cfg.Durable || !sameProvisionedProperties(q.cfg, cfg, a) {
			fail(400, "Endpoint Property Mismatch")
			return
		}
		fail(400, "Already Exists")
		return
	}
	c.vpn.queues[name] = newQueue(c.vpn, cfg)
	b.st.configChanged()
	b.log.Info("queue provisioned by client", "client", c.clientName, "queue", name, "access", cfg.AccessType)
	c.sendAdCtrl(tag, 200, "OK", a.Type, nil)
}

// provisionedQueueConfig is the queue a create asks for: the request's
// properties over the defaults of a client-provisioned queue.
func provisionedQueueConfig(name, owner string, a *adctrl) (QueueConfig, bool) {
	cfg := QueueConfig{
		Name: name, AccessType: AccessExclusive, Durable: true, IngressEnabled: true, EgressEnabled: true,
		Owner: owner, Permission: "no-access", DeadMsgQueue: sempDefaultDMQ, MaxMsgSpoolUsage: sempDefaultSpoolMB,
		MaxMsgSize: sempDefaultMaxMsgSize, RejectMsgToSenderOnDiscard: "when-queue-enabled",
	}
	if v, ok := a.uint(apAccessType); ok {
		switch v {
		case 1:
		case 2:
			cfg.AccessType = AccessNonExclusive
		default:
			return cfg, false
		}
	}
	if v, ok := a.uint(apAllOthersPerms); ok {
		perm, known := endpointPermissions[v]
		if !known {
			return cfg, false
		}
		cfg.Permission = perm
	}
	if v, ok := a.uint(apQuotaMB); ok {
		cfg.MaxMsgSpoolUsage = int64(v)
	}
	if v, ok := a.uint(apMaxMsgSize); ok {
		cfg.MaxMsgSize = int(v)
	}
	if v, ok := a.uint(apRespectTTL); ok {
		cfg.RespectTTL = v != 0
	}
	if v, ok := a.uint(apMaxRedelivery); ok {
		cfg.MaxRedeliveryCount = int(v)
	}
	if v, ok := a.uint(apEPBehaviour); ok {
		switch {
		case v&epNotifySenderOn != 0:
			cfg.RejectMsgToSenderOnDiscard = "when-queue-enabled"
		case v&epNotifySenderOff != 0:
			cfg.RejectMsgToSenderOnDiscard = "never"
		}
	}
	return cfg, true
}

// sameProvisionedProperties compares the properties a create named with an
// existing queue's.
func sameProvisionedProperties(have, want QueueConfig, a *adctrl) bool {
	checks := []struct {
		param byte
		same  bool
	}{
		{apAccessType, have.AccessType == want.AccessType},
		{apAllOthersPerms, have.Permission == want.Permission},
		{apQuotaMB, have.MaxMsgSpoolUsage == want.MaxMsgSpoolUsage},
		{apMaxMsgSize, have.MaxMsgSize == want.MaxMsgSize},
		{apRespectTTL, have.RespectTTL == want.RespectTTL},
		{apMaxRedelivery, have.MaxRedeliveryCount == want.MaxRedeliveryCount},
		{apEPBehaviour, have.RejectMsgToSenderOnDiscard == want.RejectMsgToSenderOnDiscard ||
			(have.RejectMsgToSenderOnDiscard == "" && want.RejectMsgToSenderOnDiscard == "when-queue-enabled")},
	}
	for _, ch := range checks {
		if _, present := a.get(ch.param); present && !ch.same {
			return false
		}
	}
	return true
}
