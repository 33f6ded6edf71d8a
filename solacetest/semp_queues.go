package solacetest

// This file is the SEMP queue resources: msgVpns/{vpn}/queues and their
// subscriptions, in the config and monitor APIs.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"

	"github.com/connect-solace/connect-solace/internal/semp/sempwire"
)

// route dispatches on the path shape and method.
func (s *sempServer) route(c *sempCall) *sempErr {
	segs := c.segs
	if c.api == sempActionBase || len(segs) < 3 || segs[0] != "msgVpns" || segs[2] != "queues" || len(segs) > 6 ||
		(len(segs) >= 5 && segs[4] != "subscriptions") {
		return errNotFound("unknown resource %q", c.r.URL.Path)
	}
	vpn := segs[1]
	if !s.admin.HasVPN(vpn) {
		return errNotFound("could not find match for msgVpn %q", vpn)
	}
	monitor := c.api == sempMonitorBase
	allowed := func(methods ...string) *sempErr {
		c.w.Header().Set("Allow", strings.Join(methods, ", "))
		return &sempErr{http.StatusMethodNotAllowed, sempCodeNotSupported, sempStatusNotSupported,
			fmt.Sprintf("method %s is not allowed on %s", c.r.Method, c.r.URL.Path)}
	}
	switch len(segs) {
	case 3:
		switch {
		case c.r.Method == http.MethodGet:
			return s.listQueues(c, vpn)
		case c.r.Method == http.MethodPost && !monitor:
			return s.createQueue(c, vpn)
		case monitor:
			return allowed(http.MethodGet)
		default:
			return allowed(http.MethodGet, http.MethodPost)
		}
	case 4:
		name := segs[3]
		switch {
		case c.r.Method == http.MethodGet:
			return s.getQueue(c, vpn, name)
		case monitor:
			return allowed(http.MethodGet)
		case c.r.Method == http.MethodPatch:
			return s.updateQueue(c, vpn, name, false)
		case c.r.Method == http.MethodPut:
			return s.updateQueue(c, vpn, name, true)
		case c.r.Method == http.MethodDelete:
			return s.deleteQueue(c, vpn, name)
		default:
			return allowed(http.MethodGet, http.MethodPatch, http.MethodPut, http.MethodDelete)
		}
	case 5:
		switch {
		case c.r.Method == http.MethodGet:
			return s.listSubscriptions(c, vpn, segs[3])
		case c.r.Method == http.MethodPost && !monitor:
			return s.addSubscription(c, vpn, segs[3])
		case monitor:
			return allowed(http.MethodGet)
		default:
			return allowed(http.MethodGet, http.MethodPost)
		}
	default: // 6
		switch {
		case monitor:
			return errNotFound("unknown resource %q", c.r.URL.Path)
		case c.r.Method == http.MethodGet:
			return s.getSubscription(c, vpn, segs[3], segs[5])
		case c.r.Method == http.MethodDelete:
			return s.removeSubscription(c, vpn, segs[3], segs[5])
		default:
			return allowed(http.MethodGet, http.MethodDelete)
		}
	}
}

// --- wire types (the shared ones are in internal/semp/sempwire) ---

// sempQueueDefaults is a queue with SEMP's default for every attribute.
// Attributes the broker does not model are reported at these defaults, and a
// request may only set them to these defaults.
func sempQueueDefaults() sempwire.ConfigQueue {
	return sempwire.ConfigQueue{
		AccessType:                              string(AccessExclusive),
		ConsumerAckPropagationEnabled:           true,
		DeadMsgQueue:                            sempDefaultDMQ,
		EventBindCountThreshold:                 sempwire.EventThreshold{ClearPercent: 60, SetPercent: 80},
		EventMsgSpoolUsageThreshold:             sempwire.EventThreshold{ClearPercent: 18, SetPercent: 25},
		EventRejectLowPriorityMsgLimitThreshold: sempwire.EventThreshold{ClearPercent: 60, SetPercent: 80},
		MaxBindCount:                            1000,
		MaxDeliveredUnackedMsgsPerFlow:          10000,
		MaxMsgSize:                              10000000,
		MaxMsgSpoolUsage:                        sempDefaultSpoolMB,
		PartitionRebalanceDelay:                 5,
		PartitionRebalanceMaxHandoffTime:        3,
		Permission:                              sempwire.PermissionNoAccess,
		RedeliveryDelayInitialInterval:          1000,
		RedeliveryDelayMaxInterval:              64000,
		RedeliveryDelayMultiplier:               200,
		RedeliveryEnabled:                       true,
		RejectMsgToSenderOnDiscardBehavior:      sempwire.RejectOnDiscardWhenQueueEnabled,
	}
}

func configQueueJSON(vpn string, cfg QueueConfig) sempwire.ConfigQueue {
	q := sempQueueDefaults()
	q.QueueName, q.MsgVpnName = cfg.Name, vpn
	q.AccessType = string(cfg.AccessType)
	if q.AccessType == "" {
		q.AccessType = string(AccessExclusive)
	}
	q.DeadMsgQueue = cfg.DeadMsgQueue
	q.EgressEnabled, q.IngressEnabled = cfg.EgressEnabled, cfg.IngressEnabled
	q.MaxMsgSpoolUsage = cfg.MaxMsgSpoolUsage
	q.MaxRedeliveryCount = int64(cfg.MaxRedeliveryCount)
	q.Owner = cfg.Owner
	if cfg.Permission != "" {
		q.Permission = cfg.Permission
	}
	q.RespectTTLEnabled = cfg.RespectTTL
	q.MaxMsgSize = int32(cfg.MaxMsgSize)
	q.PartitionCount = int32(cfg.PartitionCount)
	if cfg.PartitionRebalanceDelay != 0 {
		q.PartitionRebalanceDelay = cfg.PartitionRebalanceDelay
	}
	if cfg.RejectMsgToSenderOnDiscard != "" {
		q.RejectMsgToSenderOnDiscardBehavior = cfg.RejectMsgToSenderOnDiscard
	}
	return q
}

func monitorQueueJSON(vpn string, cfg QueueConfig, st QueueStats) sempwire.MonitorQueue {
	c := configQueueJSON(vpn, cfg)
	return sempwire.MonitorQueue{
		AccessType:                         c.AccessType,
		DeadMsgQueue:                       c.DeadMsgQueue,
		Durable:                            cfg.Durable,
		EgressEnabled:                      c.EgressEnabled,
		IngressEnabled:                     c.IngressEnabled,
		MaxBindCount:                       c.MaxBindCount,
		MaxDeliveredUnackedMsgsPerFlow:     c.MaxDeliveredUnackedMsgsPerFlow,
		MaxMsgSize:                         c.MaxMsgSize,
		MaxMsgSpoolUsage:                   c.MaxMsgSpoolUsage,
		MaxRedeliveryCount:                 c.MaxRedeliveryCount,
		MaxTTL:                             c.MaxTTL,
		MsgSpoolUsage:                      st.SpooledBytes,
		MsgVpnName:                         vpn,
		Owner:                              c.Owner,
		Permission:                         c.Permission,
		QueueName:                          cfg.Name,
		RedeliveredMsgCount:                int64(st.Redelivered),
		RedeliveryEnabled:                  c.RedeliveryEnabled,
		RejectMsgToSenderOnDiscardBehavior: c.RejectMsgToSenderOnDiscardBehavior,
		RespectTTLEnabled:                  c.RespectTTLEnabled,
		SpooledByteCount:                   st.SpooledBytes,
		SpooledMsgCount:                    int64(st.SpooledMsgCount),
		TxUnackedMsgCount:                  int64(st.Unacked),
		VirtualRouter:                      "primary",
	}
}

type sempQueueLinks struct {
	SubscriptionsURI string `json:"subscriptionsUri"`
	URI              string `json:"uri"`
}

type sempURILink struct {
	URI string `json:"uri"`
}

// --- request bodies ---

// queueBody is a parsed MsgVpnQueue request body: the names it gives (nil
// when absent) and its attributes, which apply decodes onto a queue.
type queueBody struct {
	name, vpn *string
	attrs     map[string]json.RawMessage
}

// sempQueueDefaultAttrs holds the JSON default of every MsgVpnQueue attribute
// the broker does not model.
var sempQueueDefaultAttrs = func() map[string]any {
	raw, _ := json.Marshal(sempQueueDefaults())
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	for _, k := range []string{"queueName", "msgVpnName", "accessType", "permission", "owner", "deadMsgQueue",
		"ingressEnabled", "egressEnabled", "respectTtlEnabled", "maxRedeliveryCount", "maxMsgSpoolUsage",
		"maxMsgSize", "rejectMsgToSenderOnDiscardBehavior", "partitionCount", "partitionRebalanceDelay"} {
		delete(m, k)
	}
	return m
}()

// parseQueueBody reads a MsgVpnQueue body. Unknown attributes are an error;
// attributes the broker does not model are accepted only at their defaults,
// so a client never believes it configured behaviour that is not there.
func (c *sempCall) parseQueueBody() (*queueBody, *sempErr) {
	attrs, err := c.readBody()
	if err != nil {
		return nil, err
	}
	q := queueBody{attrs: maps.Clone(attrs)}
	var probe QueueConfig
	if e := firstErr(
		decodeAttr(attrs, "queueName", &q.name), decodeAttr(attrs, "msgVpnName", &q.vpn),
		queueChanges(attrs, &probe), q.check(&probe),
	); e != nil {
		return nil, e
	}
	for name, raw := range attrs {
		def, known := sempQueueDefaultAttrs[name]
		if !known {
			return nil, errInvalid("unknown attribute %q", name)
		}
		if strings.HasPrefix(name, "event") {
			// Event thresholds only raise broker events: any well-formed
			// EventThreshold is accepted and has no effect.
			var th struct {
				ClearPercent, ClearValue, SetPercent, SetValue *int64
			}
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&th); err != nil || bytes.TrimSpace(raw)[0] != '{' {
				return nil, errInvalid("attribute %q is not an EventThreshold object", name)
			}
			continue
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil || !reflect.DeepEqual(v, def) {
			return nil, errNotSupported("the test broker does not implement attribute %q; only its default %s is accepted", name, mustJSON(def))
		}
	}
	return &q, nil
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// queueChanges decodes the MsgVpnQueue attributes the broker models onto
// cfg, taking them out of attrs.
func queueChanges(attrs map[string]json.RawMessage, cfg *QueueConfig) *sempErr {
	return firstErr(
		decodeInto(attrs, "accessType", &cfg.AccessType), decodeInto(attrs, "permission", &cfg.Permission),
		decodeInto(attrs, "owner", &cfg.Owner), decodeInto(attrs, "deadMsgQueue", &cfg.DeadMsgQueue),
		decodeInto(attrs, "rejectMsgToSenderOnDiscardBehavior", &cfg.RejectMsgToSenderOnDiscard),
		decodeInto(attrs, "ingressEnabled", &cfg.IngressEnabled), decodeInto(attrs, "egressEnabled", &cfg.EgressEnabled),
		decodeInto(attrs, "respectTtlEnabled", &cfg.RespectTTL),
		decodeInto(attrs, "maxRedeliveryCount", &cfg.MaxRedeliveryCount),
		// SEMP's 0 means "only the last message"; the broker's 0 means no
		// limit. Nobody configures the former on purpose.
		decodeInto(attrs, "maxMsgSpoolUsage", &cfg.MaxMsgSpoolUsage),
		decodeInto(attrs, "maxMsgSize", &cfg.MaxMsgSize), decodeInto(attrs, "partitionCount", &cfg.PartitionCount),
		decodeInto(attrs, "partitionRebalanceDelay", &cfg.PartitionRebalanceDelay),
	)
}

// check refuses the values the body gives, decoded onto cfg, that the broker
// cannot take.
func (q *queueBody) check(cfg *QueueConfig) *sempErr {
	given := func(name string) bool { _, ok := q.attrs[name]; return ok }
	switch {
	case given("accessType") && cfg.AccessType != AccessExclusive && cfg.AccessType != AccessNonExclusive:
		return errInvalid("accessType %q is not one of exclusive, non-exclusive", cfg.AccessType)
	case given("permission") && !slices.Contains(sempwire.Permissions, cfg.Permission):
		return errInvalid("permission %q is not one of no-access, read-only, consume, modify-topic, delete", cfg.Permission)
	case given("maxRedeliveryCount") && (cfg.MaxRedeliveryCount < 0 || cfg.MaxRedeliveryCount > 255):
		return errInvalid("maxRedeliveryCount %d is outside 0-255", cfg.MaxRedeliveryCount)
	case given("maxMsgSize") && (cfg.MaxMsgSize < 0 || cfg.MaxMsgSize > maxFrameSize):
		return errInvalid("maxMsgSize %d is outside 0-%d", cfg.MaxMsgSize, maxFrameSize)
	case given("partitionCount") && (cfg.PartitionCount < 0 || cfg.PartitionCount > 1000):
		return errInvalid("partitionCount %d is outside 0-1000", cfg.PartitionCount)
	case given("rejectMsgToSenderOnDiscardBehavior") && !slices.Contains(sempwire.RejectOnDiscardBehaviors, cfg.RejectMsgToSenderOnDiscard):
		return errInvalid("rejectMsgToSenderOnDiscardBehavior %q is not one of always, when-queue-enabled, never", cfg.RejectMsgToSenderOnDiscard)
	case given("maxMsgSpoolUsage") && cfg.MaxMsgSpoolUsage < 0:
		return errInvalid("maxMsgSpoolUsage %d is negative", cfg.MaxMsgSpoolUsage)
	}
	return nil
}

// apply decodes the body's attributes onto cfg; parseQueueBody checked them.
func (q *queueBody) apply(cfg *QueueConfig) { _ = queueChanges(maps.Clone(q.attrs), cfg) }

// checkIdentity rejects a body whose identifying attributes contradict the
// path.
func (q *queueBody) checkIdentity(vpn, name string) *sempErr {
	if name == "" {
		return matchesPath("msgVpnName", q.vpn, vpn)
	}
	return firstErr(matchesPath("msgVpnName", q.vpn, vpn), matchesPath("queueName", q.name, name))
}

// newQueueConfig is a queue created through SEMP: SEMP's defaults, then the
// request's attributes. Ingress and egress default to enabled (unlike a real
// broker, whose defaults are disabled), as QueueConfig documents.
func newQueueConfig(name string, q *queueBody) QueueConfig {
	cfg := QueueConfig{
		Name: name, AccessType: AccessExclusive, Permission: "no-access", DeadMsgQueue: sempDefaultDMQ,
		MaxMsgSpoolUsage: sempDefaultSpoolMB, IngressEnabled: true, EgressEnabled: true, Durable: true,
		MaxMsgSize: sempDefaultMaxMsgSize,
	}
	q.apply(&cfg)
	return cfg
}

// --- handlers ---

func (s *sempServer) createQueue(c *sempCall, vpn string) *sempErr {
	q, err := c.parseQueueBody()
	if err != nil {
		return err
	}
	if err := q.checkIdentity(vpn, ""); err != nil {
		return err
	}
	if e := required("queueName", q.name); e != nil {
		return e
	}
	name := *q.name
	if err := s.create(vpn, newQueueConfig(name, q)); err != nil {
		return err
	}
	s.log.Info("semp: queue created", "vpn", vpn, "queue", name)
	return s.getQueue(c, vpn, name)
}

// create makes a queue. The admin turns a queue with ingress and egress both
// off into one with both on; an explicit request for both off is applied
// after creation.
func (s *sempServer) create(vpn string, cfg QueueConfig) *sempErr {
	if err := s.admin.CreateQueue(vpn, cfg); err != nil {
		return adminErr(err)
	}
	if !cfg.IngressEnabled && !cfg.EgressEnabled {
		if err := s.admin.UpdateQueue(vpn, cfg.Name, func(c *QueueConfig) {
			c.IngressEnabled, c.EgressEnabled = false, false
		}); err != nil {
			return adminErr(err)
		}
	}
	return nil
}

// durableQueue looks up a queue the config API can see: temporary queues
// are not configuration objects.
func (s *sempServer) durableQueue(vpn, name string, monitor bool) (QueueConfig, QueueStats, *sempErr) {
	cfg, st, err := s.admin.Queue(vpn, name)
	if err != nil {
		return cfg, st, adminErr(err)
	}
	if !cfg.Durable && !monitor {
		return cfg, st, errNotFound("could not find match for queue %q in VPN %q", name, vpn)
	}
	return cfg, st, nil
}

func (s *sempServer) getQueue(c *sempCall, vpn, name string) *sempErr {
	monitor := c.api == sempMonitorBase
	cfg, st, err := s.durableQueue(vpn, name, monitor)
	if err != nil {
		return err
	}
	links := c.queueLinks(vpn, name)
	if monitor {
		return c.writeObject(monitorQueueJSON(vpn, cfg, st), links, queueCollections(cfg, st))
	}
	return c.writeObject(configQueueJSON(vpn, cfg), links, nil)
}

func queueCollections(cfg QueueConfig, st QueueStats) sempwire.MonitorQueueCollections {
	return sempwire.MonitorQueueCollections{
		Msgs:          &sempwire.Count{Count: int64(st.SpooledMsgCount)},
		Subscriptions: &sempwire.Count{Count: int64(len(cfg.Subscriptions))},
		TxFlows:       &sempwire.Count{Count: int64(st.Consumers)},
	}
}

func (s *sempServer) listQueues(c *sempCall, vpn string) *sempErr {
	monitor := c.api == sempMonitorBase
	all, err := s.admin.Queues(vpn)
	if err != nil {
		return adminErr(err)
	}
	keys := make([]string, 0, len(all))
	for _, q := range all {
		if q.Durable || monitor {
			keys = append(keys, q.Name)
		}
	}
	slices.Sort(keys)
	page, next, perr := c.page(keys)
	if perr != nil {
		return perr
	}
	var data, links, cols []any
	for _, name := range page {
		cfg, st, err := s.admin.Queue(vpn, name)
		if err != nil {
			continue // deleted since the listing
		}
		if monitor {
			data = append(data, monitorQueueJSON(vpn, cfg, st))
			cols = append(cols, queueCollections(cfg, st))
		} else {
			data = append(data, configQueueJSON(vpn, cfg))
		}
		links = append(links, c.queueLinks(vpn, name))
	}
	return c.writeList(data, links, cols, len(keys), next)
}

func (s *sempServer) updateQueue(c *sempCall, vpn, name string, replace bool) *sempErr {
	q, err := c.parseQueueBody()
	if err != nil {
		return err
	}
	if err := q.checkIdentity(vpn, name); err != nil {
		return err
	}
	existing, _, qerr := s.durableQueue(vpn, name, false)
	switch {
	case qerr != nil && replace && qerr.code == sempCodeNotFound:
		// PUT creates a missing object.
		if err := s.create(vpn, newQueueConfig(name, q)); err != nil {
			return err
		}
		return s.getQueue(c, vpn, name)
	case qerr != nil:
		return qerr
	}
	upd := func(cfg *QueueConfig) { q.apply(cfg) }
	if replace {
		// PUT sets absent attributes to their defaults.
		fresh := newQueueConfig(name, q)
		fresh.Subscriptions, fresh.Durable = existing.Subscriptions, existing.Durable
		upd = func(cfg *QueueConfig) {
			subs := cfg.Subscriptions
			*cfg = fresh
			cfg.Subscriptions = subs
		}
	}
	if err := s.admin.UpdateQueue(vpn, name, upd); err != nil {
		return adminErr(err)
	}
	return s.getQueue(c, vpn, name)
}

func (s *sempServer) deleteQueue(c *sempCall, vpn, name string) *sempErr {
	if _, _, err := s.durableQueue(vpn, name, false); err != nil {
		return err
	}
	if err := s.admin.DeleteQueue(vpn, name); err != nil {
		return adminErr(err)
	}
	s.log.Info("semp: queue deleted", "vpn", vpn, "queue", name)
	return c.writeMetaOnly()
}

func (s *sempServer) listSubscriptions(c *sempCall, vpn, queue string) *sempErr {
	cfg, _, err := s.durableQueue(vpn, queue, c.api == sempMonitorBase)
	if err != nil {
		return err
	}
	topics := slices.Clone(cfg.Subscriptions)
	slices.Sort(topics)
	page, next, err := c.page(topics)
	if err != nil {
		return err
	}
	return writeEach(c, page, len(topics), next, func(t string) (any, sempURILink) {
		return sempwire.QueueSubscription{MsgVpnName: vpn, QueueName: queue, SubscriptionTopic: t}, sempURILink{URI: c.subscriptionURI(vpn, queue, t)}
	})
}

func (s *sempServer) addSubscription(c *sempCall, vpn, queue string) *sempErr {
	attrs, err := c.readBody()
	if err != nil {
		return err
	}
	var topic, bodyVPN, bodyQueue *string
	for _, d := range []struct {
		name string
		dst  **string
	}{{"subscriptionTopic", &topic}, {"msgVpnName", &bodyVPN}, {"queueName", &bodyQueue}} {
		if err := decodeAttr(attrs, d.name, d.dst); err != nil {
			return err
		}
	}
	for name := range attrs {
		return errInvalid("unknown attribute %q", name)
	}
	if e := required("subscriptionTopic", topic); e != nil {
		return e
	}
	if e := firstErr(matchesPath("msgVpnName", bodyVPN, vpn), matchesPath("queueName", bodyQueue, queue)); e != nil {
		return e
	}
	if _, _, err := s.durableQueue(vpn, queue, false); err != nil {
		return err
	}
	if err := s.admin.AddQueueSubscription(vpn, queue, *topic); err != nil {
		return adminErr(err)
	}
	return c.writeObject(sempwire.QueueSubscription{MsgVpnName: vpn, QueueName: queue, SubscriptionTopic: *topic},
		sempURILink{URI: c.subscriptionURI(vpn, queue, *topic)}, nil)
}

func (s *sempServer) getSubscription(c *sempCall, vpn, queue, topic string) *sempErr {
	cfg, _, err := s.durableQueue(vpn, queue, false)
	if err != nil {
		return err
	}
	if !slices.Contains(cfg.Subscriptions, topic) {
		return errNotFound("could not find match for subscription %q on queue %q", topic, queue)
	}
	return c.writeObject(sempwire.QueueSubscription{MsgVpnName: vpn, QueueName: queue, SubscriptionTopic: topic},
		sempURILink{URI: c.subscriptionURI(vpn, queue, topic)}, nil)
}

func (s *sempServer) removeSubscription(c *sempCall, vpn, queue, topic string) *sempErr {
	if _, _, err := s.durableQueue(vpn, queue, false); err != nil {
		return err
	}
	return c.writeMetaOnlyOr(s.admin.RemoveQueueSubscription(vpn, queue, topic), adminErr)
}

func (c *sempCall) queueURI(vpn, name string) string {
	return c.vpnObjectURI(vpn, "queues", name)
}

func (c *sempCall) queueLinks(vpn, name string) sempQueueLinks {
	u := c.queueURI(vpn, name)
	return sempQueueLinks{URI: u, SubscriptionsURI: u + "/subscriptions"}
}

func (c *sempCall) subscriptionURI(vpn, queue, topic string) string {
	return c.queueURI(vpn, queue) + "/subscriptions/" + url.PathEscape(topic)
}
