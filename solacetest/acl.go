package solacetest

// This file is ACL profiles: which topics a client may publish to and
// subscribe to, and which share names it may use in shared subscriptions.
// Every client uses its VPN's "default" profile, whose default actions allow
// everything; exceptions (SEMP's aclProfiles/{profile}/publishTopicExceptions,
// subscribeTopicExceptions and subscribeShareNameExceptions) deny. An
// exception is a topic in SMF syntax and may hold wildcards.

import (
	"errors"
	"fmt"
	"slices"
)

const defaultACLProfile = "default"

// ACL exception kinds.
const (
	ACLPublishTopic       = "publishTopic"
	ACLSubscribeTopic     = "subscribeTopic"
	ACLSubscribeShareName = "subscribeShareName"
)

// ACLProfile is an ACL profile: allow by default, deny the exceptions.
type ACLProfile struct {
	Name string
	// Exceptions by kind (ACLPublishTopic, ACLSubscribeTopic,
	// ACLSubscribeShareName).
	Exceptions map[string][]string
}

func newACLProfile(name string) *ACLProfile {
	return &ACLProfile{Name: name, Exceptions: map[string][]string{}}
}

func (p *ACLProfile) clone() ACLProfile {
	out := ACLProfile{Name: p.Name, Exceptions: map[string][]string{}}
	for k, v := range p.Exceptions {
		out.Exceptions[k] = slices.Clone(v)
	}
	return out
}

func validACLKind(kind string) bool {
	return kind == ACLPublishTopic || kind == ACLSubscribeTopic || kind == ACLSubscribeShareName
}

// ACLProfile returns an ACL profile.
func (b *Broker) ACLProfile(vpn, name string) (ACLProfile, error) {
	return onNamed(b, vpn, name, aclsOf, ErrUnknownACLProfile, func(p *ACLProfile) (ACLProfile, error) { return p.clone(), nil })
}

// AddACLException adds a deny exception of kind to an ACL profile.
func (b *Broker) AddACLException(vpn, profile, kind, topic string) error {
	if !validACLKind(kind) {
		return fmt.Errorf("unknown ACL exception kind %q", kind)
	}
	if topic == "" {
		return errors.New("empty ACL exception topic")
	}
	return changeNamed(b, vpn, profile, aclsOf, ErrUnknownACLProfile, func(p *ACLProfile) error {
		if slices.Contains(p.Exceptions[kind], topic) {
			return fmt.Errorf("%w: %s %q in ACL profile %q", ErrExceptionExists, kind, topic, profile)
		}
		p.Exceptions[kind] = append(p.Exceptions[kind], topic)
		b.log.Info("ACL exception added", "vpn", vpn, "profile", profile, "kind", kind, "topic", topic)
		return nil
	})
}

// RemoveACLException removes a deny exception.
func (b *Broker) RemoveACLException(vpn, profile, kind, topic string) error {
	return changeNamed(b, vpn, profile, aclsOf, ErrUnknownACLProfile, func(p *ACLProfile) error {
		i := slices.Index(p.Exceptions[kind], topic)
		if i < 0 {
			return fmt.Errorf("%w: %s %q in ACL profile %q", ErrUnknownException, kind, topic, profile)
		}
		p.Exceptions[kind] = slices.Delete(p.Exceptions[kind], i, i+1)
		return nil
	})
}

// acl is the ACL profile of a logged-in connection.
func (c *conn) acl() *ACLProfile {
	if p := c.vpn.acls[defaultACLProfile]; p != nil {
		return p
	}
	return newACLProfile(defaultACLProfile)
}

// denied reports whether an exception of kind covers s: an exception equal
// to it, or one whose wildcards match it.
func (p *ACLProfile) denied(kind, s string) bool {
	return slices.ContainsFunc(p.Exceptions[kind], func(e string) bool { return e == s || topicMatches(e, s) })
}

// mayPublish reports whether the client may publish to topic.
func (c *conn) mayPublish(topic string) bool {
	return !c.acl().denied(ACLPublishTopic, topic)
}

// maySubscribe reports whether the client may add the subscription, which
// may be a shared one (#share/<name>/<topic>).
func (c *conn) maySubscribe(sub string) bool {
	p := c.acl()
	if share, topic, ok := parseShared(sub); ok {
		return !p.denied(ACLSubscribeShareName, share) && !p.denied(ACLSubscribeTopic, topic)
	}
	return !p.denied(ACLSubscribeTopic, sub)
}
