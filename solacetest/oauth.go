package solacetest

// This file is OAuth 2.0 / OpenID Connect login. A client that logs in with
// the OAuth scheme (ClientCtrl p17 = 0x0a) sends its tokens in the login's
// extended parameter stream (P31): an OIDC ID token (0x30), an access token
// (0x31) and an optional issuer identifier (0x2f). As on PubSub+, the VPN
// must enable OAuth (authenticationOauthEnabled), and the tokens are checked
// against one of the VPN's OAuth profiles (SEMP's
// msgVpns/{vpn}/authenticationOauthProfiles): the profile whose issuer is the
// issuer identifier, or else the ID token's, or else the access token's "iss"
// claim, or else the VPN's default profile
// (authenticationOauthDefaultProfileName). A profile in the "client" role validates the ID token (signature
// from the profile's JWKS endpoint, "typ", "iss", "aud" holding the client
// id, expiry); one in the "resource-server" role validates the access token
// as a JWT with the checks its resourceServer* attributes enable. The client
// username is the profile's username claim (default "sub"). JWKS documents
// are fetched from endpointJwks over HTTPS, trusting the broker's domain
// certificate authorities (SEMP's domainCertAuthorities; the system roots
// when there are none), and cached for endpointJwksRefreshInterval.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// ClientCtrl login parameter 17 is the authentication scheme; OAuth 2.0 is
// 0x0a (basic logins leave the parameter out).
const (
	ccAuthScheme    = 17
	authSchemeOAuth = 0x0a
)

// Extended parameters (P31) of an OAuth login.
const (
	extOAuthIssuer   = 0x2f
	extOIDCIDToken   = 0x30
	extOAuthAccessTk = 0x31
)

// OAuth profile roles (SEMP's oauthRole).
const (
	OAuthRoleClient         = "client"
	OAuthRoleResourceServer = "resource-server"
)

// OAuthProfile is a VPN's OAuth profile. NewOAuthProfile gives SEMP's
// defaults.
type OAuthProfile struct {
	Name    string
	Enabled bool
	// Role is OAuthRoleClient (validate the OIDC ID token) or
	// OAuthRoleResourceServer (validate the access token).
	Role string
	// Issuer selects the profile: it is matched against the login's issuer
	// identifier, or the tokens' "iss" claim.
	Issuer string
	// ClientID must be in a client-role ID token's "aud" claim, when set.
	ClientID string
	// ClientRequiredType is the JOSE "typ" an ID token must carry when
	// ClientValidateType is set (SEMP default "JWT").
	ClientRequiredType string
	ClientValidateType bool
	// ClientSecret is kept for SEMP only (the broker exchanges no codes).
	ClientSecret string
	// EndpointJWKS is the URL of the provider's JSON Web Key Set.
	EndpointJWKS string
	// EndpointJWKSRefresh is how long a fetched key set is used (SEMP's
	// endpointJwksRefreshInterval, default 86400 s).
	EndpointJWKSRefresh time.Duration
	// EndpointUserinfo and its timeout are kept for SEMP; the broker does
	// not call the userinfo endpoint.
	EndpointUserinfo        string
	EndpointUserinfoTimeout int64
	// UsernameClaimName is the claim that names the client username
	// (default "sub").
	UsernameClaimName string
	// The authorization-groups claim is kept for SEMP; authorization is
	// internal (by client username), so groups are not looked up.
	AuthorizationGroupsClaimName         string
	AuthorizationGroupsClaimStringFormat string
	// DisconnectOnTokenExpiration is kept for SEMP; sessions are not cut
	// when a token expires.
	DisconnectOnTokenExpiration bool
	// Resource-server checks of an access token: it must be a JWT
	// (ParseAccessToken; token introspection is not implemented), and each
	// enabled check compares "aud", "iss", "scope" (space-separated, must
	// hold every required scope) and the JOSE "typ" with the required value.
	ResourceServerParseAccessToken bool
	ResourceServerRequiredAudience string
	ResourceServerRequiredIssuer   string
	ResourceServerRequiredScope    string
	ResourceServerRequiredType     string
	ResourceServerValidateAudience bool
	ResourceServerValidateIssuer   bool
	ResourceServerValidateScope    bool
	ResourceServerValidateType     bool
}

// NewOAuthProfile returns a profile named name with SEMP's defaults.
func NewOAuthProfile(name string) OAuthProfile {
	return OAuthProfile{
		Name: name, Role: OAuthRoleClient, ClientRequiredType: "JWT", ClientValidateType: true,
		EndpointJWKSRefresh: 86400 * time.Second, EndpointUserinfoTimeout: 1, UsernameClaimName: "sub",
		AuthorizationGroupsClaimName: "groups", AuthorizationGroupsClaimStringFormat: "single",
		DisconnectOnTokenExpiration: true, ResourceServerParseAccessToken: true, ResourceServerRequiredType: "at+jwt",
		ResourceServerValidateAudience: true, ResourceServerValidateIssuer: true,
		ResourceServerValidateScope: true, ResourceServerValidateType: true,
	}
}

func (p OAuthProfile) validate() error {
	switch {
	case p.Name == "":
		return errors.New("OAuth profile: empty name")
	case p.Role != OAuthRoleClient && p.Role != OAuthRoleResourceServer:
		return fmt.Errorf("%w: oauthRole %q (want %q or %q)", ErrUnsupportedVPNSetting, p.Role, OAuthRoleClient, OAuthRoleResourceServer)
	case p.Role == OAuthRoleResourceServer && !p.ResourceServerParseAccessToken:
		return fmt.Errorf("%w: resourceServerParseAccessTokenEnabled false needs token introspection, which the test broker does not implement", ErrUnsupportedVPNSetting)
	}
	return nil
}

// AuthorizationGroup is a VPN's authorization group. It is kept for SEMP:
// the broker authorizes by client username, so groups grant nothing.
type AuthorizationGroup struct {
	Name    string
	Enabled bool
}

// oauthState is the broker's OAuth configuration and key cache; the
// configuration is guarded by Broker.mu, the cache by its own lock.
type oauthState struct {
	profiles  map[string]map[string]OAuthProfile       // by VPN, then name
	groups    map[string]map[string]AuthorizationGroup // by VPN, then name
	domainCAs map[string]string                        // PEM by name

	// skew is the clock skew allowed on exp, nbf and iat (a minute
	// unless SetOAuthClockSkew changed it); sempProfile checks SEMP's
	// Bearer tokens (oauth_bearer.go).
	skew        time.Duration
	sempProfile *OAuthProfile

	keysMu sync.Mutex
	keys   map[string]*jwksEntry // by JWKS URL
}

type jwksEntry struct {
	set     jose.JSONWebKeySet
	fetched time.Time
}

// oauthLocked returns the broker's OAuth state, creating it on first use.
func (b *Broker) oauthLocked() *oauthState {
	if b.oauth == nil {
		b.oauth = &oauthState{profiles: map[string]map[string]OAuthProfile{},
			groups: map[string]map[string]AuthorizationGroup{}, domainCAs: map[string]string{},
			keys: map[string]*jwksEntry{}, skew: time.Minute}
	}
	return b.oauth
}

// CreateOAuthProfile adds an OAuth profile to a VPN.
func (b *Broker) CreateOAuthProfile(vpn string, p OAuthProfile) error {
	if err := p.validate(); err != nil {
		return err
	}
	return changeInVPN(b, vpn, func(*vpnState) error {
		o := b.oauthLocked()
		if o.profiles[vpn] == nil {
			o.profiles[vpn] = map[string]OAuthProfile{}
		}
		return addNamed(o.profiles[vpn], p.Name, p, ErrOAuthProfileExists, vpn)
	})
}

// UpdateOAuthProfile changes an OAuth profile.
func (b *Broker) UpdateOAuthProfile(vpn, name string, update func(*OAuthProfile)) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, err := b.vpnLocked(vpn); err != nil {
		return err
	}
	o := b.oauthLocked()
	p, ok := o.profiles[vpn][name]
	if !ok {
		return fmt.Errorf("%w %q in VPN %q", ErrUnknownOAuthProfile, name, vpn)
	}
	update(&p)
	p.Name = name
	if err := p.validate(); err != nil {
		return err
	}
	o.profiles[vpn][name] = p
	return nil
}

// DeleteOAuthProfile removes an OAuth profile.
func (b *Broker) DeleteOAuthProfile(vpn, name string) error {
	return changeInVPN(b, vpn, func(*vpnState) error {
		return deleteNamed(b.oauthLocked().profiles[vpn], name, ErrUnknownOAuthProfile, vpn)
	})
}

// OAuthProfiles lists a VPN's OAuth profiles, sorted by name.
func (b *Broker) OAuthProfiles(vpn string) ([]OAuthProfile, error) {
	return inVPN(b, vpn, func(*vpnState) ([]OAuthProfile, error) {
		return b.oauthProfilesLocked(vpn), nil
	})
}

func (b *Broker) oauthProfilesLocked(vpn string) []OAuthProfile {
	return sortedValues(b.oauthLocked().profiles[vpn], same)
}

// CreateAuthorizationGroup adds an authorization group to a VPN.
func (b *Broker) CreateAuthorizationGroup(vpn string, g AuthorizationGroup) error {
	if g.Name == "" {
		return errors.New("authorization group: empty name")
	}
	return changeInVPN(b, vpn, func(*vpnState) error {
		o := b.oauthLocked()
		if o.groups[vpn] == nil {
			o.groups[vpn] = map[string]AuthorizationGroup{}
		}
		return addNamed(o.groups[vpn], g.Name, g, ErrAuthorizationGroupExists, vpn)
	})
}

// DeleteAuthorizationGroup removes an authorization group.
func (b *Broker) DeleteAuthorizationGroup(vpn, name string) error {
	return changeInVPN(b, vpn, func(*vpnState) error {
		return deleteNamed(b.oauthLocked().groups[vpn], name, ErrUnknownAuthorizationGroup, vpn)
	})
}

// AuthorizationGroups lists a VPN's authorization groups, sorted by name.
func (b *Broker) AuthorizationGroups(vpn string) ([]AuthorizationGroup, error) {
	return inVPN(b, vpn, func(*vpnState) ([]AuthorizationGroup, error) {
		return sortedValues(b.oauthLocked().groups[vpn], same), nil
	})
}

// AddDomainCertAuthority adds a domain certificate authority: a CA the
// broker trusts for the servers it calls itself, here the OAuth providers'
// JWKS endpoints.
func (b *Broker) AddDomainCertAuthority(name, pemCerts string) error {
	if !x509.NewCertPool().AppendCertsFromPEM([]byte(pemCerts)) {
		return fmt.Errorf("domain certificate authority %q: certContent holds no PEM certificate", name)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return addNamed(b.oauthLocked().domainCAs, name, pemCerts, ErrDomainCertAuthorityExists, "")
}

// RemoveDomainCertAuthority removes a domain certificate authority.
func (b *Broker) RemoveDomainCertAuthority(name string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return deleteNamed(b.oauthLocked().domainCAs, name, ErrUnknownDomainCertAuthority, "")
}

// DomainCertAuthorities returns the domain certificate authorities' PEM by
// name.
func (b *Broker) DomainCertAuthorities() map[string]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]string{}
	for k, v := range b.oauthLocked().domainCAs {
		out[k] = v
	}
	return out
}

// oauthTokens are what an OAuth login carries.
type oauthTokens struct {
	issuer, idToken, accessToken string
}

// oauthTokensOf reads the tokens from a login frame's P31.
func oauthTokensOf(f *frame) oauthTokens {
	var t oauthTokens
	v, ok := f.param(pExtendedStream)
	if !ok {
		return t
	}
	ext, err := decodeExtStream(v)
	if err != nil {
		return t
	}
	for _, e := range ext {
		switch e.Type {
		case extOAuthIssuer:
			t.issuer = trimNUL(e.Value)
		case extOIDCIDToken:
			t.idToken = trimNUL(e.Value)
		case extOAuthAccessTk:
			t.accessToken = trimNUL(e.Value)
		}
	}
	return t
}

// oauthResult is the outcome of checking an OAuth login's tokens: a
// refusal (code != 0) or the client username.
type oauthResult struct {
	code uint32
	text string
	user string
	// gssReply is the GSS-API token a Kerberos login answers with
	// (kerberos.go).
	gssReply []byte
}

// tokenLogin starts the check of a token login (OAuth, Kerberos) to vpn,
// the same for every mechanism: found and on say whether the VPN exists and
// has the mechanism enabled, off is the answer when it has not. deny refuses
// the login: the reason is logged, the client gets 401 and no reason, as
// from a real broker. When the VPN refuses the login, ok is false and
// refused the answer.
func (b *Broker) tokenLogin(mechanism, vpn string, found, on bool, off oauthResult) (deny func(reason string, args ...any) oauthResult, refused oauthResult, ok bool) {
	deny = func(reason string, args ...any) oauthResult {
		b.log.Info(mechanism+" login refused", "vpn", vpn, "reason", fmt.Sprintf(reason, args...))
		return oauthResult{code: 401, text: oauthUnauthorizedText}
	}
	switch {
	case !found:
		return deny, deny("no such VPN"), false
	case !on:
		return deny, off, false
	}
	return deny, oauthResult{}, true
}

// Refusal texts of OAuth logins. The Go client maps any 401 it has no
// special subcode for to LOGIN_FAILURE, as the suite expects; PubSub+'s
// exact wording is not known here.
const (
	oauthShutdownText     = "OAuth Authentication Is Shutdown"
	oauthUnauthorizedText = "Unauthorized"
)

// signatureAlgs are the JWS algorithms accepted on tokens (asymmetric only:
// the broker holds no shared secrets).
var signatureAlgs = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384,
	jose.PS512, jose.ES256, jose.ES384, jose.ES512, jose.EdDSA}

// oauthLogin checks an OAuth login to vpn. It takes Broker.mu only to copy
// the configuration: fetching a key set is network I/O.
func (b *Broker) oauthLogin(vpn string, t oauthTokens) oauthResult {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b.mu.Lock()
	v, found := b.vpns[vpn]
	var enabled bool
	var defaultProfile string
	var profiles []OAuthProfile
	var roots *x509.CertPool
	o := b.oauthLocked()
	skew := o.skew
	if found {
		enabled, defaultProfile = v.cfg.OAuthEnabled, v.cfg.OAuthDefaultProfile
		profiles = b.oauthProfilesLocked(vpn)
		roots = o.domainRootsLocked()
	}
	b.mu.Unlock()
	deny, refused, ok := b.tokenLogin("OAuth", vpn, found, enabled, oauthResult{code: 401, text: oauthShutdownText})
	if !ok {
		return refused
	}
	if t.idToken == "" && t.accessToken == "" {
		return deny("no ID token and no access token")
	}
	idTok, idErr := jwt.ParseSigned(t.idToken, signatureAlgs)
	accTok, accErr := jwt.ParseSigned(t.accessToken, signatureAlgs)
	issuer := t.issuer
	for _, tok := range []*jwt.JSONWebToken{idTok, accTok} {
		if issuer != "" || tok == nil {
			continue
		}
		var c jwt.Claims
		if tok.UnsafeClaimsWithoutVerification(&c) == nil {
			issuer = c.Issuer
		}
	}
	if issuer == "" && defaultProfile == "" {
		return deny("no issuer identifier, no token with an iss claim and no default OAuth profile")
	}
	var prof *OAuthProfile
	for i := range profiles {
		p := &profiles[i]
		if p.Enabled && ((issuer != "" && p.Issuer == issuer) || (issuer == "" && p.Name == defaultProfile)) {
			prof = p
			break
		}
	}
	switch {
	case prof == nil && issuer == "":
		return deny("the default OAuth profile %q does not exist or is disabled", defaultProfile)
	case prof == nil:
		return deny("no enabled OAuth profile with issuer %q", issuer)
	}
	var (
		tok    *jwt.JSONWebToken
		tokErr error
		kind   string
	)
	if prof.Role == OAuthRoleClient {
		tok, tokErr, kind = idTok, idErr, "ID token"
	} else {
		tok, tokErr, kind = accTok, accErr, "access token"
	}
	if tok == nil {
		return deny("profile %q (role %s): %s is not a signed JWT: %v", prof.Name, prof.Role, kind, tokErr)
	}
	claims, extra, err := o.verifyToken(ctx, prof, roots, tok)
	if err != nil {
		return deny("profile %q: %s: %v", prof.Name, kind, err)
	}
	if err := checkClaims(prof, tok, claims, extra, skew); err != nil {
		return deny("profile %q: %s: %v", prof.Name, kind, err)
	}
	user, _ := extra[prof.UsernameClaimName].(string)
	if user == "" {
		return deny("profile %q: %s has no %q claim naming the client username", prof.Name, kind, prof.UsernameClaimName)
	}
	return oauthResult{user: user}
}

// domainRootsLocked returns the domain certificate authorities as a pool,
// or nil (the system roots) when there are none.
func (o *oauthState) domainRootsLocked() *x509.CertPool {
	if len(o.domainCAs) == 0 {
		return nil
	}
	roots := x509.NewCertPool()
	for _, p := range o.domainCAs {
		roots.AppendCertsFromPEM([]byte(p))
	}
	return roots
}

// verifyToken checks tok's signature with the profile's key set, fetching it
// again once when no cached key verifies (the provider may have rotated).
func (o *oauthState) verifyToken(ctx context.Context, prof *OAuthProfile, roots *x509.CertPool, tok *jwt.JSONWebToken) (jwt.Claims, map[string]any, error) {
	if prof.EndpointJWKS == "" {
		return jwt.Claims{}, nil, errors.New("the profile has no endpointJwks")
	}
	var lastErr error
	for attempt := 0; attempt < 2; attempt++ {
		set, err := o.jwks(ctx, prof, roots, attempt > 0)
		if err != nil {
			return jwt.Claims{}, nil, err
		}
		kid := tok.Headers[0].KeyID
		for _, k := range set.Keys {
			if (kid != "" && k.KeyID != kid) || (k.Use != "" && k.Use != "sig") {
				continue
			}
			var claims jwt.Claims
			extra := map[string]any{}
			if err := tok.Claims(k.Key, &claims, &extra); err != nil {
				lastErr = err
				continue
			}
			return claims, extra, nil
		}
		if lastErr == nil {
			lastErr = fmt.Errorf("no key in %s matches kid %q", prof.EndpointJWKS, kid)
		}
	}
	return jwt.Claims{}, nil, lastErr
}

// jwks returns the profile's key set, from the cache unless it is older than
// the refresh interval or refresh is set.
func (o *oauthState) jwks(ctx context.Context, prof *OAuthProfile, roots *x509.CertPool, refresh bool) (*jose.JSONWebKeySet, error) {
	o.keysMu.Lock()
	defer o.keysMu.Unlock()
	if e := o.keys[prof.EndpointJWKS]; e != nil && !refresh && time.Since(e.fetched) < prof.EndpointJWKSRefresh {
		return &e.set, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, prof.EndpointJWKS, nil)
	if err != nil {
		return nil, fmt.Errorf("endpointJwks %q: %w", prof.EndpointJWKS, err)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching the JWKS: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetching the JWKS from %s: HTTP %s", prof.EndpointJWKS, resp.Status)
	}
	var set jose.JSONWebKeySet
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&set); err != nil {
		return nil, fmt.Errorf("JWKS from %s: %w", prof.EndpointJWKS, err)
	}
	o.keys[prof.EndpointJWKS] = &jwksEntry{set: set, fetched: time.Now()}
	return &set, nil
}

// checkClaims applies the profile's claim checks to a verified token.
func checkClaims(prof *OAuthProfile, tok *jwt.JSONWebToken, claims jwt.Claims, extra map[string]any, skew time.Duration) error {
	typ, _ := tok.Headers[0].ExtraHeaders[jose.HeaderType].(string)
	exp := jwt.Expected{Time: time.Now()}
	if prof.Role == OAuthRoleClient {
		if prof.ClientValidateType && !strings.EqualFold(typ, prof.ClientRequiredType) {
			return fmt.Errorf("typ %q, want %q", typ, prof.ClientRequiredType)
		}
		exp.Issuer = prof.Issuer
		if prof.ClientID != "" {
			exp.AnyAudience = jwt.Audience{prof.ClientID}
		}
	} else {
		if prof.ResourceServerValidateType && !strings.EqualFold(typ, prof.ResourceServerRequiredType) {
			return fmt.Errorf("typ %q, want %q", typ, prof.ResourceServerRequiredType)
		}
		if prof.ResourceServerValidateIssuer {
			exp.Issuer = prof.ResourceServerRequiredIssuer
		}
		if prof.ResourceServerValidateAudience && prof.ResourceServerRequiredAudience != "" {
			exp.AnyAudience = jwt.Audience{prof.ResourceServerRequiredAudience}
		}
		if prof.ResourceServerValidateScope {
			scope, _ := extra["scope"].(string)
			have := strings.Fields(scope)
			for _, want := range strings.Fields(prof.ResourceServerRequiredScope) {
				if !slices.Contains(have, want) {
					return fmt.Errorf("scope %q lacks %q", scope, want)
				}
			}
		}
	}
	return claims.ValidateWithLeeway(exp, skew)
}
