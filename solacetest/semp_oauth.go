package solacetest

// This file is the SEMP resources of OAuth login (oauth.go): a VPN's
// authenticationOauthProfiles and authorizationGroups, and the broker's
// domainCertAuthorities (config API; GETs in the monitor API too).

import (
	"encoding/json"
	"time"
)

// oauthProfileAttrs maps each modelled MsgVpnAuthenticationOauthProfile
// attribute to its field.
var oauthProfileAttrs = map[string]func(*OAuthProfile) any{
	"authorizationGroupsClaimName":          func(p *OAuthProfile) any { return &p.AuthorizationGroupsClaimName },
	"authorizationGroupsClaimStringFormat":  func(p *OAuthProfile) any { return &p.AuthorizationGroupsClaimStringFormat },
	"clientId":                              func(p *OAuthProfile) any { return &p.ClientID },
	"clientRequiredType":                    func(p *OAuthProfile) any { return &p.ClientRequiredType },
	"clientSecret":                          func(p *OAuthProfile) any { return &p.ClientSecret },
	"clientValidateTypeEnabled":             func(p *OAuthProfile) any { return &p.ClientValidateType },
	"disconnectOnTokenExpirationEnabled":    func(p *OAuthProfile) any { return &p.DisconnectOnTokenExpiration },
	"enabled":                               func(p *OAuthProfile) any { return &p.Enabled },
	"endpointJwks":                          func(p *OAuthProfile) any { return &p.EndpointJWKS },
	"endpointUserinfo":                      func(p *OAuthProfile) any { return &p.EndpointUserinfo },
	"endpointUserinfoTimeout":               func(p *OAuthProfile) any { return &p.EndpointUserinfoTimeout },
	"issuer":                                func(p *OAuthProfile) any { return &p.Issuer },
	"oauthRole":                             func(p *OAuthProfile) any { return &p.Role },
	"resourceServerParseAccessTokenEnabled": func(p *OAuthProfile) any { return &p.ResourceServerParseAccessToken },
	"resourceServerRequiredAudience":        func(p *OAuthProfile) any { return &p.ResourceServerRequiredAudience },
	"resourceServerRequiredIssuer":          func(p *OAuthProfile) any { return &p.ResourceServerRequiredIssuer },
	"resourceServerRequiredScope":           func(p *OAuthProfile) any { return &p.ResourceServerRequiredScope },
	"resourceServerRequiredType":            func(p *OAuthProfile) any { return &p.ResourceServerRequiredType },
	"resourceServerValidateAudienceEnabled": func(p *OAuthProfile) any { return &p.ResourceServerValidateAudience },
	"resourceServerValidateIssuerEnabled":   func(p *OAuthProfile) any { return &p.ResourceServerValidateIssuer },
	"resourceServerValidateScopeEnabled":    func(p *OAuthProfile) any { return &p.ResourceServerValidateScope },
	"resourceServerValidateTypeEnabled":     func(p *OAuthProfile) any { return &p.ResourceServerValidateType },
	"usernameClaimName":                     func(p *OAuthProfile) any { return &p.UsernameClaimName },
}

// oauthProfileJSON is the MsgVpnAuthenticationOauthProfile of p: the
// attributes of oauthProfileAttrs but the write-only clientSecret, and of the
// unimplemented features the endpoints, at their defaults.
func oauthProfileJSON(vpn string, p OAuthProfile) map[string]any {
	obj := map[string]any{
		"msgVpnName":                  vpn,
		"oauthProfileName":            p.Name,
		"endpointJwksRefreshInterval": int64(p.EndpointJWKSRefresh / time.Second),
		"endpointDiscovery":           "",
		"endpointIntrospection":       "",
	}
	for attr, field := range oauthProfileAttrs {
		if attr != "clientSecret" {
			obj[attr] = field(&p)
		}
	}
	return obj
}

// oauthProfileDefaultsOnly are attributes of features the broker does not
// implement (endpoint discovery, token introspection, MQTT): accepted only
// at their SEMP defaults.
var oauthProfileDefaultsOnly = map[string]string{
	"endpointDiscovery":                `""`,
	"endpointDiscoveryRefreshInterval": `86400`,
	"endpointIntrospection":            `""`,
	"endpointIntrospectionTimeout":     `1`,
	"mqttUsernameValidateEnabled":      `false`,
}

// oauthProfileChanges decodes a MsgVpnAuthenticationOauthProfile body onto
// p.
func oauthProfileChanges(attrs map[string]json.RawMessage, p *OAuthProfile) *sempErr {
	var refresh *int64
	if e := decodeAttr(attrs, "endpointJwksRefreshInterval", &refresh); e != nil {
		return e
	}
	if refresh != nil {
		p.EndpointJWKSRefresh = time.Duration(*refresh) * time.Second
	}
	for attr, raw := range attrs {
		if def, ok := oauthProfileDefaultsOnly[attr]; ok {
			if string(raw) != def {
				return errNotSupported("attribute %q of authenticationOauthProfile: the test broker supports only its default, %s", attr, def)
			}
			continue
		}
		field, ok := oauthProfileAttrs[attr]
		if !ok {
			return errInvalid("unknown attribute %q", attr)
		}
		if jerr := json.Unmarshal(raw, field(p)); jerr != nil {
			return errInvalid("attribute %q: %v", attr, jerr)
		}
	}
	return nil
}

// oauthProfiles is the collection msgVpns/{vpn}/authenticationOauthProfiles.
var oauthProfiles = vpnCollection[OAuthProfile, oauthAdmin]{
	path: "authenticationOauthProfiles", nameAttr: "oauthProfileName", monitor: true,
	name: func(p OAuthProfile) string { return p.Name }, object: oauthProfileJSON, changes: oauthProfileChanges,
	fresh: NewOAuthProfile,
	all:   oauthAdmin.OAuthProfiles, create: oauthAdmin.CreateOAuthProfile,
	update: oauthAdmin.UpdateOAuthProfile, remove: oauthAdmin.DeleteOAuthProfile,
}

// ---- authorization groups ----

func authzGroupJSON(vpn string, g AuthorizationGroup) map[string]any {
	return map[string]any{"aclProfileName": defaultACLProfile, "authorizationGroupName": g.Name,
		"clientProfileName": defaultClientProfile, "enabled": g.Enabled, "msgVpnName": vpn}
}

// authzGroups is the collection msgVpns/{vpn}/authorizationGroups.
var authzGroups = vpnCollection[AuthorizationGroup, oauthAdmin]{
	path: "authorizationGroups", nameAttr: "authorizationGroupName", monitor: true,
	name: func(g AuthorizationGroup) string { return g.Name }, object: authzGroupJSON, changes: authzGroupChanges,
	fresh: func(name string) AuthorizationGroup { return AuthorizationGroup{Name: name} },
	all:   oauthAdmin.AuthorizationGroups, create: oauthAdmin.CreateAuthorizationGroup, remove: oauthAdmin.DeleteAuthorizationGroup,
}

// authzGroupChanges decodes a MsgVpnAuthorizationGroup body onto g. Only
// the default client and ACL profiles exist, and groups are not ordered.
func authzGroupChanges(attrs map[string]json.RawMessage, g *AuthorizationGroup) *sempErr {
	var aclProfile, clientProfile, before, after *string
	if e := firstErr(
		decodeAttr(attrs, "aclProfileName", &aclProfile), decodeAttr(attrs, "clientProfileName", &clientProfile),
		decodeAttr(attrs, "orderBeforeAuthorizationGroupName", &before), decodeAttr(attrs, "orderAfterAuthorizationGroupName", &after),
		decodeInto(attrs, "enabled", &g.Enabled),
	); e != nil {
		return e
	}
	if e := unknownAttr(attrs); e != nil {
		return e
	}
	if e := firstErr(onlyDefaultACLProfile(aclProfile), onlyDefaultClientProfile(clientProfile)); e != nil {
		return e
	}
	switch {
	case before != nil && *before != "", after != nil && *after != "":
		return errNotSupported("authorization group ordering is not supported by the test broker (it authorizes by client username)")
	}
	return nil
}

// ---- domain certificate authorities ----

type sempDomainCertAuthority struct {
	CertAuthorityName string `json:"certAuthorityName"`
	CertContent       string `json:"certContent"`
}

// oauthAdmin is what this file's resources need; *Broker implements it.
type oauthAdmin interface {
	queueAdmin
	CreateOAuthProfile(vpn string, p OAuthProfile) error
	UpdateOAuthProfile(vpn, name string, update func(*OAuthProfile)) error
	DeleteOAuthProfile(vpn, name string) error
	OAuthProfiles(vpn string) ([]OAuthProfile, error)
	CreateAuthorizationGroup(vpn string, g AuthorizationGroup) error
	DeleteAuthorizationGroup(vpn, name string) error
	AuthorizationGroups(vpn string) ([]AuthorizationGroup, error)
	AddDomainCertAuthority(name, pemCerts string) error
	RemoveDomainCertAuthority(name string) error
	DomainCertAuthorities() map[string]string
}

// registerOAuthRoutes routes this file's resources when the admin is a
// broker; registerRoutes calls it.
func (s *sempServer) registerOAuthRoutes(admin brokerAdmin) {
	b, ok := admin.(oauthAdmin)
	if !ok {
		return
	}
	oauthProfiles.register(s, b)
	authzGroups.register(s, b)
	caCollection{path: "/domainCertAuthorities", kind: "domainCertAuthority",
		add: b.AddDomainCertAuthority, remove: b.RemoveDomainCertAuthority, all: b.DomainCertAuthorities,
		object: func(name, pemCerts string) any {
			return sempDomainCertAuthority{CertAuthorityName: name, CertContent: pemCerts}
		},
	}.register(s, true, true)
}
