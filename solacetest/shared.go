package solacetest

// This file is shared subscriptions: a direct subscription
// "#share/<name>/<topic>" joins the group of sessions with that share name
// and topic; each matching message goes to one member of each group, in
// turn, as well as to every session subscribed without a share.

import (
	"cmp"
	"slices"
	"strings"
)

const sharePrefix = "#share/"

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

// fanoutShared delivers a direct message to one member of every share group
// whose topic matches. Members are taken in client-name order, round robin.
func (b *Broker) fanoutShared(v *vpnState, topic string, data func() []byte) {
	groups := map[string][]*conn{}
	for _, s := range v.clients {
		for sub := range s.subs {
			if _, t, ok := parseShared(sub); ok && topicMatches(t, topic) {
				groups[sub] = append(groups[sub], s)
			}
		}
	}
	if len(groups) == 0 {
		return
	}
	if v.shareRR == nil {
		v.shareRR = map[string]int{}
	}
	var out []byte
	for sub, members := range groups {
		slices.SortFunc(members, func(a, b *conn) int { return cmp.Compare(a.clientName, b.clientName) })
		i := v.shareRR[sub] % len(members)
		v.shareRR[sub] = i + 1
		if out == nil {
			out = data()
		}
		members[i].sendData(out)
	}
}
