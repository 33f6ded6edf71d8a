package solacetest

// This file is the router layer: Solace topic-subscription matching.

import "strings"

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
