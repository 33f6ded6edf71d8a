package solacetest

// This file is the SEMP resources of OAuth login (oauth.go): a VPN's
// authenticationOauthProfiles and authorizationGroups, and the broker's
// domainCertAuthorities (config API; GETs in the monitor API too).

import (
	"encoding/json"
	"time"
)

type sempOAuthProfile struct {
	AuthorizationGroupsClaimName          string `json:"authorizationGroupsClaimName"`
	AuthorizationGroupsClaimStringFormat  string `json:"authorizationGroupsClaimStringFormat"`
	ClientID                              string `json:"clientId"`
	ClientRequiredType                    string `json:"clientRequiredType"`
	ClientValidateTypeEnabled             bool   `json:"clientValidateTypeEnabled"`
	DisconnectOnTokenExpirationEnabled    bool   `json:"disconnectOnTokenExpirationEnabled"`
	Enabled                               bool   `json:"enabled"`
	EndpointDiscovery                     string `json:"endpointDiscovery"`
	EndpointIntrospection                 string `json:"endpointIntrospection"`
	EndpointJwks                          string `json:"endpointJwks"`
	EndpointJwksRefreshInterval           int64  `json:"endpointJwksRefreshInterval"`
	EndpointUserinfo                      string `json:"endpointUserinfo"`
	EndpointUserinfoTimeout               int64  `json:"endpointUserinfoTimeout"`
	Issuer                                string `json:"issuer"`
	MsgVpnName                            string `json:"msgVpnName"`
	OauthProfileName                      string `json:"oauthProfileName"`
	OauthRole                             string `json:"oauthRole"`
	ResourceServerParseAccessTokenEnabled bool   `json:"resourceServerParseAccessTokenEnabled"`
	ResourceServerRequiredAudience        string `json:"resourceServerRequiredAudience"`
	ResourceServerRequiredIssuer          string `json:"resourceServerRequiredIssuer"`
	ResourceServerRequiredScope           string `json:"resourceServerRequiredScope"`
	ResourceServerRequiredType            string `json:"resourceServerRequiredType"`
	ResourceServerValidateAudienceEnabled bool   `json:"resourceServerValidateAudienceEnabled"`
	ResourceServerValidateIssuerEnabled   bool   `json:"resourceServerValidateIssuerEnabled"`
	ResourceServerValidateScopeEnabled    bool   `json:"resourceServerValidateScopeEnabled"`
	ResourceServerValidateTypeEnabled     bool   `json:"resourceServerValidateTypeEnabled"`
	UsernameClaimName                     string `json:"usernameClaimName"`
}

func oauthProfileJSON(vpn string, p OAuthProfile) sempOAuthProfile {
	return sempOAuthProfile{
		AuthorizationGroupsClaimName: p.AuthorizationGroupsClaimName, AuthorizationGroupsClaimStringFormat: p.AuthorizationGroupsClaimStringFormat,
		ClientID: p.ClientID, ClientRequiredType: p.ClientRequiredType, ClientValidateTypeEnabled: p.ClientValidateType,
		DisconnectOnTokenExpirationEnabled: p.DisconnectOnTokenExpiration, Enabled: p.Enabled,
		EndpointJwks: p.EndpointJWKS, EndpointJwksRefreshInterval: int64(p.EndpointJWKSRefresh / time.Second),
		EndpointUserinfo: p.EndpointUserinfo, EndpointUserinfoTimeout: p.EndpointUserinfoTimeout,
		Issuer: p.Issuer, MsgVpnName: vpn, OauthProfileName: p.Name, OauthRole: p.Role,
		ResourceServerParseAccessTokenEnabled: p.ResourceServerParseAccessToken,
		ResourceServerRequiredAudience:        p.ResourceServerRequiredAudience, ResourceServerRequiredIssuer: p.ResourceServerRequiredIssuer,
		ResourceServerRequiredScope: p.ResourceServerRequiredScope, ResourceServerRequiredType: p.ResourceServerRequiredType,
		ResourceServerValidateAudienceEnabled: p.ResourceServerValidateAudience, ResourceServerValidateIssuerEnabled: p.ResourceServerValidateIssuer,
		ResourceServerValidateScopeEnabled: p.ResourceServerValidateScope, ResourceServerValidateTypeEnabled: p.ResourceServerValidateType,
		UsernameClaimName: p.UsernameClaimName,
	}
}

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

// oauthProfileChanges reads a MsgVpnAuthenticationOauthProfile body into a
// function that applies it.
func oauthProfileChanges(c *sempCall, vpn string) (name *string, apply func(*OAuthProfile), err *sempErr) {
	attrs, err := c.readBody()
	if err != nil {
		return nil, nil, err
	}
	var bodyVPN *string
	var refresh *int64
	if e := firstErr(decodeAttr(attrs, "oauthProfileName", &name), decodeAttr(attrs, "msgVpnName", &bodyVPN),
		decodeAttr(attrs, "endpointJwksRefreshInterval", &refresh)); e != nil {
		return nil, nil, e
	}
	if e := matchesPath("msgVpnName", bodyVPN, vpn); e != nil {
		return nil, nil, e
	}
	var probe OAuthProfile
	var sets []func(*OAuthProfile)
	for attr, raw := range attrs {
		if def, ok := oauthProfileDefaultsOnly[attr]; ok {
			if string(raw) != def {
				return nil, nil, errNotSupported("attribute %q of authenticationOauthProfile: the test broker supports only its default, %s", attr, def)
			}
			continue
		}
		field, ok := oauthProfileAttrs[attr]
		if !ok {
			return nil, nil, errInvalid("unknown attribute %q", attr)
		}
		if jerr := json.Unmarshal(raw, field(&probe)); jerr != nil {
			return nil, nil, errInvalid("attribute %q: %v", attr, jerr)
		}
		sets = append(sets, func(p *OAuthProfile) { _ = json.Unmarshal(raw, field(p)) })
	}
	return name, func(p *OAuthProfile) {
		for _, set := range sets {
			set(p)
		}
		if refresh != nil {
			p.EndpointJWKSRefresh = time.Duration(*refresh) * time.Second
		}
	}, nil
}

func (c *sempCall) oauthProfileLink(vpn, name string) sempURILink {
	return sempURILink{URI: c.vpnObjectURI(vpn, "authenticationOauthProfiles", name)}
}

func createOAuthProfile(c *sempCall, b oauthAdmin, vpn string) *sempErr {
	name, apply, err := oauthProfileChanges(c, vpn)
	if err != nil {
		return err
	}
	if e := required("oauthProfileName", name); e != nil {
		return e
	}
	p := NewOAuthProfile(*name)
	apply(&p)
	if cerr := b.CreateOAuthProfile(vpn, p); cerr != nil {
		return adminErr(cerr)
	}
	return c.writeObject(oauthProfileJSON(vpn, p), c.oauthProfileLink(vpn, p.Name), nil)
}

func findOAuthProfile(c *sempCall, b oauthAdmin, vpn string) (OAuthProfile, *sempErr) {
	all, err := b.OAuthProfiles(vpn)
	return findIn(c, all, err, func(p OAuthProfile) string { return p.Name }, "authenticationOauthProfile", "profile")
}

func getOAuthProfile(c *sempCall, b oauthAdmin, vpn string) *sempErr {
	p, err := findOAuthProfile(c, b, vpn)
	if err != nil {
		return err
	}
	return c.writeObject(oauthProfileJSON(vpn, p), c.oauthProfileLink(vpn, p.Name), nil)
}

func listOAuthProfiles(c *sempCall, b oauthAdmin, vpn string) *sempErr {
	all, err := b.OAuthProfiles(vpn)
	return writeAll(c, all, err, func(p OAuthProfile) (any, sempURILink) {
		return oauthProfileJSON(vpn, p), c.oauthProfileLink(vpn, p.Name)
	})
}

func updateOAuthProfile(c *sempCall, b oauthAdmin, vpn string) *sempErr {
	name, apply, err := oauthProfileChanges(c, vpn)
	if err != nil {
		return err
	}
	if e := matchesPath("oauthProfileName", name, c.r.PathValue("profile")); e != nil {
		return e
	}
	if uerr := b.UpdateOAuthProfile(vpn, c.r.PathValue("profile"), apply); uerr != nil {
		return adminErr(uerr)
	}
	return getOAuthProfile(c, b, vpn)
}

func deleteOAuthProfile(c *sempCall, b oauthAdmin, vpn string) *sempErr {
	return c.writeMetaOnlyOr(b.DeleteOAuthProfile(vpn, c.r.PathValue("profile")), adminErr)
}

// ---- authorization groups ----

type sempAuthorizationGroup struct {
	ACLProfileName         string `json:"aclProfileName"`
	AuthorizationGroupName string `json:"authorizationGroupName"`
	ClientProfileName      string `json:"clientProfileName"`
	Enabled                bool   `json:"enabled"`
	MsgVpnName             string `json:"msgVpnName"`
}

func authzGroupJSON(vpn string, g AuthorizationGroup) sempAuthorizationGroup {
	return sempAuthorizationGroup{ACLProfileName: defaultACLProfile, AuthorizationGroupName: g.Name,
		ClientProfileName: defaultClientProfile, Enabled: g.Enabled, MsgVpnName: vpn}
}

func (c *sempCall) authzGroupLink(vpn, name string) sempURILink {
	return sempURILink{URI: c.vpnObjectURI(vpn, "authorizationGroups", name)}
}

func createAuthzGroup(c *sempCall, b oauthAdmin, vpn string) *sempErr {
	attrs, err := c.readBody()
	if err != nil {
		return err
	}
	var name, bodyVPN, aclProfile, clientProfile, before, after *string
	var enabled *bool
	if e := firstErr(
		decodeAttr(attrs, "authorizationGroupName", &name), decodeAttr(attrs, "msgVpnName", &bodyVPN),
		decodeAttr(attrs, "aclProfileName", &aclProfile), decodeAttr(attrs, "clientProfileName", &clientProfile),
		decodeAttr(attrs, "orderBeforeAuthorizationGroupName", &before), decodeAttr(attrs, "orderAfterAuthorizationGroupName", &after),
		decodeAttr(attrs, "enabled", &enabled),
	); e != nil {
		return e
	}
	if e := unknownAttr(attrs); e != nil {
		return e
	}
	if e := required("authorizationGroupName", name); e != nil {
		return e
	}
	if e := firstErr(matchesPath("msgVpnName", bodyVPN, vpn), onlyDefaultACLProfile(aclProfile), onlyDefaultClientProfile(clientProfile)); e != nil {
		return e
	}
	switch {
	case before != nil && *before != "", after != nil && *after != "":
		return errNotSupported("authorization group ordering is not supported by the test broker (it authorizes by client username)")
	}
	g := AuthorizationGroup{Name: *name, Enabled: enabled != nil && *enabled}
	if cerr := b.CreateAuthorizationGroup(vpn, g); cerr != nil {
		return adminErr(cerr)
	}
	return c.writeObject(authzGroupJSON(vpn, g), c.authzGroupLink(vpn, g.Name), nil)
}

func getAuthzGroup(c *sempCall, b oauthAdmin, vpn string) *sempErr {
	all, lerr := b.AuthorizationGroups(vpn)
	g, err := findIn(c, all, lerr, func(g AuthorizationGroup) string { return g.Name }, "authorizationGroup", "group")
	if err != nil {
		return err
	}
	return c.writeObject(authzGroupJSON(vpn, g), c.authzGroupLink(vpn, g.Name), nil)
}

func listAuthzGroups(c *sempCall, b oauthAdmin, vpn string) *sempErr {
	all, err := b.AuthorizationGroups(vpn)
	return writeAll(c, all, err, func(g AuthorizationGroup) (any, sempURILink) {
		return authzGroupJSON(vpn, g), c.authzGroupLink(vpn, g.Name)
	})
}

func deleteAuthzGroup(c *sempCall, b oauthAdmin, vpn string) *sempErr {
	return c.writeMetaOnlyOr(b.DeleteAuthorizationGroup(vpn, c.r.PathValue("group")), adminErr)
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
	const (
		config  = sempConfigBase + "/msgVpns/{vpn}"
		monitor = sempMonitorBase + "/msgVpns/{vpn}"
	)
	inVPN := func(pattern string, h func(*sempCall, oauthAdmin, string) *sempErr) { handleInVPN(s, pattern, b, h) }
	for _, base := range []string{config, monitor} {
		inVPN("GET "+base+"/authenticationOauthProfiles", listOAuthProfiles)
		inVPN("GET "+base+"/authenticationOauthProfiles/{profile}", getOAuthProfile)
		inVPN("GET "+base+"/authorizationGroups", listAuthzGroups)
		inVPN("GET "+base+"/authorizationGroups/{group}", getAuthzGroup)
	}
	inVPN("POST "+config+"/authenticationOauthProfiles", createOAuthProfile)
	inVPN("PATCH "+config+"/authenticationOauthProfiles/{profile}", updateOAuthProfile)
	inVPN("DELETE "+config+"/authenticationOauthProfiles/{profile}", deleteOAuthProfile)
	inVPN("POST "+config+"/authorizationGroups", createAuthzGroup)
	inVPN("DELETE "+config+"/authorizationGroups/{group}", deleteAuthzGroup)
	caCollection{path: "/domainCertAuthorities", kind: "domainCertAuthority",
		add: b.AddDomainCertAuthority, remove: b.RemoveDomainCertAuthority, all: b.DomainCertAuthorities,
		object: func(name, pemCerts string) any {
			return sempDomainCertAuthority{CertAuthorityName: name, CertContent: pemCerts}
		},
	}.register(s, true, true)
}
