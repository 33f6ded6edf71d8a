package solacetest

// This file is the router layer: Solace topic-subscription matching and the
// routing decisions built on it (which queues and sessions a message reaches),
// shared subscriptions among them.

import (
	"cmp"
	"slices"
	"strings"
)

// routeGuaranteed returns the queues a guaranteed message that c publishes to
// topic is spooled to, sorted by name: the queue a #P2P/QUE/ topic addresses,
// or every queue subscribed to topic. When the message cannot be routed it
// returns the rejection to nack it with instead.
func (c *conn) routeGuaranteed(topic string) ([]*queue, *rejection) {
	return c.vpn.routeGuaranteed(topic, c.profile().RejectMsgToSenderOnNoSubscriptionMatch)
}

// routeGuaranteed is conn.routeGuaranteed for a publisher whose client
// profile says whether a topic without subscribers is rejected (rejectNoMatch).
func (v *vpnState) routeGuaranteed(topic string, rejectNoMatch bool) ([]*queue, *rejection) {
	if name, ok := queueFromTopic(topic); ok {
		q, found := v.queues[name]
		switch {
		case !found:
			return nil, &rejection{400, "Queue Not Found"}
		case !q.cfg.IngressEnabled:
			return nil, &rejection{503, "Queue Shutdown"}
		}
		return []*queue{q}, nil
	}
	dests := v.subscribedQueues(topic)
	if len(dests) == 0 && rejectNoMatch {
		return nil, &rejection{503, "No Subscription Match"}
	}
	return dests, nil
}

// subscribedQueues returns the queues of v that accept messages (ingress
// enabled) and have a subscription matching topic, sorted by name. The slice
// is v's scratch space, valid until the next call (Broker.mu is held
// throughout, and callers use it before releasing the lock).
func (v *vpnState) subscribedQueues(topic string) []*queue {
	dests := v.destScratch[:0]
	for _, q := range v.queues {
		if q.cfg.IngressEnabled && q.matches(topic) {
			dests = append(dests, q)
		}
	}
	if len(dests) > 1 {
		slices.SortFunc(dests, func(a, b *queue) int { return cmp.Compare(a.cfg.Name, b.cfg.Name) })
	}
	clear(dests[len(dests):cap(dests)]) // no stale queues for the collector
	v.destScratch = dests
	return dests
}

// fanoutDirect sends a direct message to every session of v with a matching
// (non-shared) subscription, once per session, and to one member of each
// matching share group (fanoutShared). data encodes the message the first
// time it is needed. One pass over the sessions finds both; sessions without
// subscriptions (publishers) cost nothing.
func (b *Broker) fanoutDirect(v *vpnState, topic string, data func() []byte) {
	var out []byte
	var groups map[string][]*conn
	for _, s := range v.clients {
		if len(s.subs) == 0 {
			continue
		}
		sent := false
		for _, sub := range s.subs {
			if !strings.HasPrefix(sub, sharePrefix) {
				if !sent && topicMatches(sub, topic) {
					if out == nil {
						out = data()
					}
					s.sendData(out)
					sent = true
				}
				continue
			}
			if _, t, ok := parseShared(sub); ok && topicMatches(t, topic) {
				if groups == nil {
					groups = map[string][]*conn{}
				}
				groups[sub] = append(groups[sub], s)
			}
		}
	}
	if groups != nil {
		if out == nil {
			out = data()
		}
		b.fanoutShared(v, groups, out)
	}
}

// topicMatches reports whether topic matches the Solace subscription sub.
//
// Rules (Solace's documented wildcard semantics): levels are split on '/';
// a level "*" matches any one level and "ab*" any level starting with "ab";
// a '*' elsewhere in a level is a literal. A last level of ">" matches one or
// more further levels. A '>' anywhere else, or inside a level, is a literal.
func topicMatches(sub, topic string) bool {
	if sub == "" || topic == "" {
		return false
	}
	// Walk both strings level by level without splitting them: this runs
	// for every subscription on every published message.
	for {
		sl, subRest, subMore := strings.Cut(sub, "/")
		if sl == ">" && !subMore {
			return true // ">" needs at least one more level, and topic has one
		}
		tl, topicRest, topicMore := strings.Cut(topic, "/")
		if !levelMatches(sl, tl) {
			return false
		}
		if !subMore || !topicMore {
			return subMore == topicMore
		}
		sub, topic = subRest, topicRest
	}
}

// levelMatches matches one topic level against one subscription level.
func levelMatches(sl, tl string) bool {
	if strings.HasSuffix(sl, "*") {
		return strings.HasPrefix(tl, sl[:len(sl)-1])
	}
	return sl == tl
}

// p2pQueuePrefix is the network-topic prefix that addresses a queue directly.
const p2pQueuePrefix = "#P2P/QUE/"

// queueFromTopic returns the queue addressed by a #P2P/QUE/ topic, accepting
// both "#P2P/QUE/<name>" and "#P2P/QUE/v:<router>/<name>".
func queueFromTopic(topic string) (string, bool) {
	name, ok := strings.CutPrefix(topic, p2pQueuePrefix)
	if !ok {
		return "", false
	}
	if rest, ok := strings.CutPrefix(name, "v:"); ok {
		if _, q, found := strings.Cut(rest, "/"); found {
			name = q
		}
	}
	return name, true
}

const sharePrefix = "#share/"

// ---- shared subscriptions ----
//
// A direct subscription "#share/<name>/<topic>" joins the group of sessions
// with that share name and topic; each matching message goes to one member
// of each group, in turn, as well as to every session subscribed without a
// share.

// parseShared splits "#share/<name>/<topic>".
func parseShared(sub string) (name, topic string, ok bool) {
	rest, ok := strings.CutPrefix(sub, sharePrefix)
	if !ok {
		return "", "", false
	}
	name, topic, ok = strings.Cut(rest, "/")
	if !ok || name == "" || topic == "" {
		return "", "", false
	}
	return name, topic, true
}

// fanoutShared delivers the encoded direct message out to one member of
// every matching share group (groups, as fanoutDirect collects them: the
// sessions subscribed to each share subscription). Members are taken in
// client-name order, round robin.
func (b *Broker) fanoutShared(v *vpnState, groups map[string][]*conn, out []byte) {
	if v.shareRR == nil {
		v.shareRR = map[string]int{}
	}
	for sub, members := range groups {
		slices.SortFunc(members, func(a, b *conn) int { return cmp.Compare(a.clientName, b.clientName) })
		i := v.shareRR[sub] % len(members)
		v.shareRR[sub] = i + 1
		members[i].sendData(out)
	}
}
