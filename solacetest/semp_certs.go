package solacetest

// This file is the SEMP resources for client-certificate login (config
// API): the broker's clientCertAuthorities and a VPN's clientUsernames.
// Revocation checking (CRL, OCSP) is not implemented: its attributes are
// accepted only with revocation checking off.

import (
	"encoding/json"
	"maps"
	"net/url"
	"slices"
)

type sempCertAuthority struct {
	CertAuthorityName      string `json:"certAuthorityName"`
	CertContent            string `json:"certContent"`
	RevocationCheckEnabled bool   `json:"revocationCheckEnabled"`
}

// caCollection is a collection of certificate authorities, PEM by name, as
// SEMP serves both of the broker's: clientCertAuthorities (for client
// certificates) and domainCertAuthorities (for the servers the broker calls
// itself).
type caCollection struct {
	path       string // the resource path, "/clientCertAuthorities"
	kind       string // the object's name in not-found errors
	revocation bool   // accepts the revocation-checking attributes (off only)
	add        func(name, pemCerts string) error
	remove     func(name string) error
	all        func() map[string]string
	object     func(name, pemCerts string) any
}

func (cc caCollection) link(c *sempCall, name string) sempURILink {
	return sempURILink{URI: c.baseURL() + c.api + cc.path + "/" + url.PathEscape(name)}
}

// register routes the collection's requests under the config API, and its
// reads under the monitor API as well when withMonitor is set.
func (cc caCollection) register(s *sempServer, list, withMonitor bool) {
	bases := []string{sempConfigBase}
	if withMonitor {
		bases = append(bases, sempMonitorBase)
	}
	for _, base := range bases {
		if list {
			s.handle("GET "+base+cc.path, cc.list)
		}
		s.handle("GET "+base+cc.path+"/{name}", cc.get)
	}
	s.handle("POST "+sempConfigBase+cc.path, cc.create)
	s.handle("DELETE "+sempConfigBase+cc.path+"/{name}", func(c *sempCall) *sempErr {
		return c.writeMetaOnlyOr(cc.remove(c.r.PathValue("name")), adminErr)
	})
}

func (cc caCollection) create(c *sempCall) *sempErr {
	attrs, err := c.readBody()
	if err != nil {
		return err
	}
	var name, content *string
	var revocation *bool
	decoded := []*sempErr{decodeAttr(attrs, "certAuthorityName", &name), decodeAttr(attrs, "certContent", &content)}
	if cc.revocation {
		var crlDays, crlTimes, crlURL, ocspURL *string
		var ocspNonResponder *bool
		var ocspTimeout *int64
		decoded = append(decoded,
			decodeAttr(attrs, "crlDayList", &crlDays), decodeAttr(attrs, "crlTimeList", &crlTimes),
			decodeAttr(attrs, "crlUrl", &crlURL), decodeAttr(attrs, "ocspOverrideUrl", &ocspURL),
			decodeAttr(attrs, "revocationCheckEnabled", &revocation), decodeAttr(attrs, "ocspNonResponderCertEnabled", &ocspNonResponder),
			decodeAttr(attrs, "ocspTimeout", &ocspTimeout))
	}
	if e := firstErr(decoded...); e != nil {
		return e
	}
	if e := unknownAttr(attrs); e != nil {
		return e
	}
	if e := firstErr(required("certAuthorityName", name), required("certContent", content)); e != nil {
		return e
	}
	if revocation != nil && *revocation {
		return errNotSupported("the test broker does not implement revocation checking; set revocationCheckEnabled false")
	}
	if aerr := cc.add(*name, *content); aerr != nil {
		return adminErr(aerr)
	}
	return c.writeObject(cc.object(*name, *content), cc.link(c, *name), nil)
}

func (cc caCollection) get(c *sempCall) *sempErr {
	name := c.r.PathValue("name")
	p, ok := cc.all()[name]
	if !ok {
		return errNotFound("could not find match for %s %q", cc.kind, name)
	}
	return c.writeObject(cc.object(name, p), cc.link(c, name), nil)
}

func (cc caCollection) list(c *sempCall) *sempErr {
	all := cc.all()
	names := slices.Sorted(maps.Keys(all))
	return writeEach(c, names, len(names), "", func(n string) (any, sempURILink) {
		return cc.object(n, all[n]), cc.link(c, n)
	})
}

// clientCAs is the clientCertAuthorities collection of b.
func clientCAs(b brokerAdmin) caCollection {
	return caCollection{path: "/clientCertAuthorities", kind: "clientCertAuthority", revocation: true,
		add: b.AddCertAuthority, remove: b.RemoveCertAuthority, all: b.CertAuthorities,
		object: func(name, pemCerts string) any {
			return sempCertAuthority{CertAuthorityName: name, CertContent: pemCerts}
		}}
}

// clientUsernames is the collection msgVpns/{vpn}/clientUsernames.
var clientUsernames = vpnCollection[ClientUsername, brokerAdmin]{
	path: "clientUsernames", nameAttr: "clientUsername",
	name: func(u ClientUsername) string { return u.Name }, object: clientUsernameJSON, changes: clientUsernameChanges,
	fresh: func(name string) ClientUsername { return ClientUsername{Name: name} },
	all:   brokerAdmin.ClientUsernames, create: brokerAdmin.CreateClientUsername, remove: brokerAdmin.DeleteClientUsername,
}

// clientUsernameChanges decodes a MsgVpnClientUsername body onto u. Only
// the default client and ACL profiles exist.
func clientUsernameChanges(attrs map[string]json.RawMessage, u *ClientUsername) *sempErr {
	var clientProfile, aclProfile *string
	if e := firstErr(
		decodeInto(attrs, "password", &u.Password), decodeInto(attrs, "enabled", &u.Enabled),
		decodeAttr(attrs, "clientProfileName", &clientProfile), decodeAttr(attrs, "aclProfileName", &aclProfile),
	); e != nil {
		return e
	}
	for attr := range attrs {
		return errNotSupported("attribute %q of clientUsername is not supported by the test broker", attr)
	}
	return firstErr(onlyDefaultClientProfile(clientProfile), onlyDefaultACLProfile(aclProfile))
}

func clientUsernameJSON(vpn string, u ClientUsername) map[string]any {
	return map[string]any{"aclProfileName": defaultACLProfile, "clientProfileName": defaultClientProfile,
		"clientUsername": u.Name, "enabled": u.Enabled, "msgVpnName": vpn}
}
