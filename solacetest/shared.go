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
