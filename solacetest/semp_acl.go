package solacetest

// This file is the SEMP ACL-profile resources (config API):
// msgVpns/{vpn}/aclProfiles[/{profile}] and the profile's
// publishTopicExceptions, subscribeTopicExceptions and
// subscribeShareNameExceptions, whose objects are named
// "{syntax},{topic}". Only the "smf" syntax is supported.

import (
	"net/url"
	"strings"
)

// sempACLProfile is MsgVpnAclProfile: every default action is allow.
type sempACLProfile struct {
	ACLProfileName                  string `json:"aclProfileName"`
	ClientConnectDefaultAction      string `json:"clientConnectDefaultAction"`
	MsgVpnName                      string `json:"msgVpnName"`
	PublishTopicDefaultAction       string `json:"publishTopicDefaultAction"`
	SubscribeShareNameDefaultAction string `json:"subscribeShareNameDefaultAction"`
	SubscribeTopicDefaultAction     string `json:"subscribeTopicDefaultAction"`
}

func (c *sempCall) aclURI(vpn, profile string) string {
	return c.vpnObjectURI(vpn, "aclProfiles", profile)
}

func getACLProfile(c *sempCall, b brokerAdmin, vpn string) *sempErr {
	p, perr := b.ACLProfile(vpn, c.r.PathValue("profile"))
	if perr != nil {
		return adminErr(perr)
	}
	return c.writeObject(sempACLProfile{ACLProfileName: p.Name, ClientConnectDefaultAction: "allow", MsgVpnName: vpn,
		PublishTopicDefaultAction: "allow", SubscribeShareNameDefaultAction: "allow", SubscribeTopicDefaultAction: "allow"},
		sempURILink{URI: c.aclURI(vpn, p.Name)}, nil)
}

// exceptionJSON is one exception object of kind, with the spec's attribute
// names ("publishTopicException", "publishTopicExceptionSyntax", ...).
func exceptionJSON(vpn, profile, kind, topic string) map[string]string {
	return map[string]string{"aclProfileName": profile, "msgVpnName": vpn,
		kind + "Exception": topic, kind + "ExceptionSyntax": "smf"}
}

func (c *sempCall) exceptionURI(vpn, profile, kind, topic string) string {
	return c.aclURI(vpn, profile) + "/" + kind + "Exceptions/smf," + url.PathEscape(topic)
}

func listACLExceptions(c *sempCall, b brokerAdmin, vpn, kind string) *sempErr {
	p, perr := b.ACLProfile(vpn, c.r.PathValue("profile"))
	if perr != nil {
		return adminErr(perr)
	}
	topics := p.Exceptions[kind]
	page, next, err := c.page(topics)
	if err != nil {
		return err
	}
	return writeEach(c, page, len(topics), next, func(t string) (any, sempURILink) {
		return exceptionJSON(vpn, p.Name, kind, t), sempURILink{URI: c.exceptionURI(vpn, p.Name, kind, t)}
	})
}

func addACLException(c *sempCall, b brokerAdmin, vpn, kind string) *sempErr {
	profile := c.r.PathValue("profile")
	attrs, err := c.readBody()
	if err != nil {
		return err
	}
	var topic, syntax, bodyVPN, bodyProfile *string
	for _, d := range []struct {
		attr string
		dst  **string
	}{{kind + "Exception", &topic}, {kind + "ExceptionSyntax", &syntax}, {"msgVpnName", &bodyVPN}, {"aclProfileName", &bodyProfile}} {
		if err := decodeAttr(attrs, d.attr, d.dst); err != nil {
			return err
		}
	}
	if e := unknownAttr(attrs); e != nil {
		return e
	}
	switch {
	case topic == nil || *topic == "":
		return errInvalid("missing required attribute %sException", kind)
	case syntax != nil && *syntax != "smf":
		return errNotSupported("%sExceptionSyntax %q: the test broker supports smf only", kind, *syntax)
	}
	if e := firstErr(matchesPath("msgVpnName", bodyVPN, vpn), matchesPath("aclProfileName", bodyProfile, profile)); e != nil {
		return e
	}
	if aerr := b.AddACLException(vpn, profile, kind, *topic); aerr != nil {
		return adminErr(aerr)
	}
	return c.writeObject(exceptionJSON(vpn, profile, kind, *topic), sempURILink{URI: c.exceptionURI(vpn, profile, kind, *topic)}, nil)
}

// exceptionKey splits the "{syntax},{topic}" path segment.
func exceptionKey(c *sempCall, kind string) (string, *sempErr) {
	syntax, topic, ok := strings.Cut(c.r.PathValue("exception"), ",")
	if !ok || topic == "" {
		return "", errNotFound("%sException %q: want {syntax},{topic}", kind, c.r.PathValue("exception"))
	}
	if syntax != "smf" {
		return "", errNotFound("%sException %q: the test broker supports the smf syntax only", kind, c.r.PathValue("exception"))
	}
	return topic, nil
}

func getACLException(c *sempCall, b brokerAdmin, vpn, kind string) *sempErr {
	topic, err := exceptionKey(c, kind)
	if err != nil {
		return err
	}
	p, perr := b.ACLProfile(vpn, c.r.PathValue("profile"))
	if perr != nil {
		return adminErr(perr)
	}
	for _, t := range p.Exceptions[kind] {
		if t == topic {
			return c.writeObject(exceptionJSON(vpn, p.Name, kind, t), sempURILink{URI: c.exceptionURI(vpn, p.Name, kind, t)}, nil)
		}
	}
	return errNotFound("could not find match for %sException %q", kind, topic)
}

func removeACLException(c *sempCall, b brokerAdmin, vpn, kind string) *sempErr {
	topic, err := exceptionKey(c, kind)
	if err != nil {
		return err
	}
	return c.writeMetaOnlyOr(b.RemoveACLException(vpn, c.r.PathValue("profile"), kind, topic), adminErr)
}
