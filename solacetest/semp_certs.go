package solacetest

// This file is the SEMP resources for client-certificate login (config
// API): the broker's clientCertAuthorities and a VPN's clientUsernames.
// Revocation checking (CRL, OCSP) is not implemented: its attributes are
// accepted only with revocation checking off.

import (
	"net/url"
)

type sempCertAuthority struct {
	CertAuthorityName      string `json:"certAuthorityName"`
	CertContent            string `json:"certContent"`
	RevocationCheckEnabled bool   `json:"revocationCheckEnabled"`
}

type sempClientUsername struct {
	ACLProfileName    string `json:"aclProfileName"`
	ClientProfileName string `json:"clientProfileName"`
	ClientUsername    string `json:"clientUsername"`
	Enabled           bool   `json:"enabled"`
	MsgVpnName        string `json:"msgVpnName"`
}

func (c *sempCall) certAuthorityLink(name string) sempURILink {
	return sempURILink{URI: c.baseURL() + c.api + "/clientCertAuthorities/" + url.PathEscape(name)}
}

func createCertAuthority(c *sempCall, b brokerAdmin) *sempErr {
	attrs, err := c.readBody()
	if err != nil {
		return err
	}
	var name, content, crlDays, crlTimes, crlURL, ocspURL *string
	var revocation, ocspNonResponder *bool
	var ocspTimeout *int64
	if e := firstErr(
		decodeAttr(attrs, "certAuthorityName", &name), decodeAttr(attrs, "certContent", &content),
		decodeAttr(attrs, "crlDayList", &crlDays), decodeAttr(attrs, "crlTimeList", &crlTimes),
		decodeAttr(attrs, "crlUrl", &crlURL), decodeAttr(attrs, "ocspOverrideUrl", &ocspURL),
		decodeAttr(attrs, "revocationCheckEnabled", &revocation), decodeAttr(attrs, "ocspNonResponderCertEnabled", &ocspNonResponder),
		decodeAttr(attrs, "ocspTimeout", &ocspTimeout),
	); e != nil {
		return e
	}
	for attr := range attrs {
		return errInvalid("unknown attribute %q", attr)
	}
	switch {
	case name == nil || *name == "":
		return errInvalid("missing required attribute certAuthorityName")
	case content == nil || *content == "":
		return errInvalid("missing required attribute certContent")
	case revocation != nil && *revocation:
		return errNotSupported("the test broker does not implement revocation checking; set revocationCheckEnabled false")
	}
	if aerr := b.AddCertAuthority(*name, *content); aerr != nil {
		return adminErr(aerr)
	}
	return c.writeObject(sempCertAuthority{CertAuthorityName: *name, CertContent: *content}, c.certAuthorityLink(*name), nil)
}

func getCertAuthority(c *sempCall, b brokerAdmin) *sempErr {
	name := c.r.PathValue("name")
	p, ok := b.CertAuthorities()[name]
	if !ok {
		return errNotFound("could not find match for clientCertAuthority %q", name)
	}
	return c.writeObject(sempCertAuthority{CertAuthorityName: name, CertContent: p}, c.certAuthorityLink(name), nil)
}

func deleteCertAuthority(c *sempCall, b brokerAdmin) *sempErr {
	return c.writeMetaOnlyOr(b.RemoveCertAuthority(c.r.PathValue("name")), adminErr)
}

func (c *sempCall) clientUsernameLink(vpn, name string) sempURILink {
	return sempURILink{URI: c.baseURL() + c.api + "/msgVpns/" + url.PathEscape(vpn) + "/clientUsernames/" + url.PathEscape(name)}
}

func createClientUsername(c *sempCall, b brokerAdmin, vpn string) *sempErr {
	attrs, err := c.readBody()
	if err != nil {
		return err
	}
	var name, password, bodyVPN, clientProfile, aclProfile *string
	var enabled *bool
	if e := firstErr(
		decodeAttr(attrs, "clientUsername", &name), decodeAttr(attrs, "password", &password),
		decodeAttr(attrs, "msgVpnName", &bodyVPN), decodeAttr(attrs, "clientProfileName", &clientProfile),
		decodeAttr(attrs, "aclProfileName", &aclProfile), decodeAttr(attrs, "enabled", &enabled),
	); e != nil {
		return e
	}
	for attr := range attrs {
		return errNotSupported("attribute %q of clientUsername is not supported by the test broker", attr)
	}
	if name == nil || *name == "" {
		return errInvalid("missing required attribute clientUsername")
	}
	if e := firstErr(matchesPath("msgVpnName", bodyVPN, vpn), onlyDefaultClientProfile(clientProfile), onlyDefaultACLProfile(aclProfile)); e != nil {
		return e
	}
	u := ClientUsername{Name: *name, Enabled: enabled != nil && *enabled}
	if password != nil {
		u.Password = *password
	}
	if cerr := b.CreateClientUsername(vpn, u); cerr != nil {
		return adminErr(cerr)
	}
	return c.writeObject(clientUsernameJSON(vpn, u), c.clientUsernameLink(vpn, u.Name), nil)
}

func clientUsernameJSON(vpn string, u ClientUsername) sempClientUsername {
	return sempClientUsername{ACLProfileName: defaultACLProfile, ClientProfileName: defaultClientProfile,
		ClientUsername: u.Name, Enabled: u.Enabled, MsgVpnName: vpn}
}

func getClientUsername(c *sempCall, b brokerAdmin, vpn string) *sempErr {
	all, lerr := b.ClientUsernames(vpn)
	u, err := findIn(c, all, lerr, func(u ClientUsername) string { return u.Name }, "clientUsername", "name")
	if err != nil {
		return err
	}
	return c.writeObject(clientUsernameJSON(vpn, u), c.clientUsernameLink(vpn, u.Name), nil)
}

func deleteClientUsername(c *sempCall, b brokerAdmin, vpn string) *sempErr {
	return c.writeMetaOnlyOr(b.DeleteClientUsername(vpn, c.r.PathValue("name")), adminErr)
}
