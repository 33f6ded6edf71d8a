package solacetest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging"
	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/config"
	"solace.dev/go/messaging/pkg/solace/subcode"
)

const (
	testIDIssuer = "https://id.example.test"
	testATIssuer = "https://at.example.test"
)

// oauthFixture is a TLS broker with OAuth enabled on VPN default, a client
// profile for ID tokens of testIDIssuer (client id "app") and a
// resource-server profile for access tokens of testATIssuer, both using
// the key set of a test OAuth server served over HTTPS and trusted through
// a domain certificate authority.
type oauthFixture struct {
	b        *Broker
	idp      *OAuthServer
	trustDir string
}

func newOAuthFixture(t *testing.T) *oauthFixture {
	t.Helper()
	tlsConf, trustDir := SelfSignedTLS(t)
	b := NewTestBroker(t, Config{TLS: tlsConf})
	idp := NewOAuthServer(t, OAuthServerConfig{TLS: tlsConf})
	caPEM, err := os.ReadFile(filepath.Join(trustDir, "ca.pem"))
	require.NoError(t, err)
	require.NoError(t, b.AddDomainCertAuthority("idp-root", string(caPEM)))
	require.NoError(t, b.UpdateVPN("default", func(v *VPNConfig) { v.OAuthEnabled = true }))
	client := NewOAuthProfile("clients")
	client.Enabled, client.Issuer, client.ClientID, client.EndpointJWKS = true, testIDIssuer, "app", idp.JWKSURL()
	require.NoError(t, b.CreateOAuthProfile("default", client))
	rs := NewOAuthProfile("apis")
	rs.Enabled, rs.Role, rs.Issuer, rs.EndpointJWKS = true, OAuthRoleResourceServer, testATIssuer, idp.JWKSURL()
	rs.ResourceServerRequiredAudience, rs.ResourceServerRequiredScope = "broker", "publish"
	rs.ResourceServerValidateIssuer, rs.ResourceServerRequiredIssuer = true, testATIssuer
	require.NoError(t, b.CreateOAuthProfile("default", rs))
	return &oauthFixture{b: b, idp: idp, trustDir: trustDir}
}

// token mints a token of the test OAuth server: claims over sensible
// defaults (a nil value removes a claim).
func (f *oauthFixture) token(t *testing.T, typ string, claims map[string]any) string {
	t.Helper()
	c := map[string]any{"sub": "alice", "iat": time.Now().Add(-time.Minute).Unix(), "exp": time.Now().Add(time.Hour).Unix()}
	for k, v := range claims {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	tok, err := f.idp.Token(c, typ)
	require.NoError(t, err)
	return tok
}

func (f *oauthFixture) idToken(t *testing.T, claims map[string]any) string {
	t.Helper()
	base := map[string]any{"iss": testIDIssuer, "aud": "app"}
	for k, v := range claims {
		base[k] = v
	}
	return f.token(t, "JWT", base)
}

func (f *oauthFixture) accessToken(t *testing.T, claims map[string]any) string {
	t.Helper()
	base := map[string]any{"iss": testATIssuer, "aud": "broker", "scope": "openid publish"}
	for k, v := range claims {
		base[k] = v
	}
	return f.token(t, "at+jwt", base)
}

// props are the client properties for the fixture's broker over TLS, with
// no basic credentials.
func (f *oauthFixture) props() config.ServicePropertyMap {
	props := clientProps(f.b.SMFSURL(), "", "")
	delete(props, config.AuthenticationPropertySchemeBasicUserName)
	delete(props, config.AuthenticationPropertySchemeBasicPassword)
	props[config.TransportLayerSecurityPropertyTrustStorePath] = f.trustDir
	props[config.TransportLayerSecurityPropertyCertValidateServername] = false
	return props
}

// service builds a messaging service logging in to the fixture's broker
// over TLS with the OAuth 2.0 scheme.
func (f *oauthFixture) service(t *testing.T, access, id, issuer string) solace.MessagingService {
	t.Helper()
	svc, err := messaging.NewMessagingServiceBuilder().FromConfigurationProvider(f.props()).
		WithAuthenticationStrategy(config.OAuth2Authentication(access, id, issuer)).Build()
	require.NoError(t, err)
	t.Cleanup(func() { _ = svc.Disconnect() })
	return svc
}

func TestOAuthLogin(t *testing.T) {
	f := newOAuthFixture(t)
	for _, tt := range []struct {
		name               string
		access, id, issuer func(t *testing.T) string
		wantUser           string
		noIssuerCheck      bool
	}{
		{name: "ID token alone, client profile by its iss",
			id: func(t *testing.T) string { return f.idToken(t, nil) }, wantUser: "alice"},
		{name: "ID token beside an access token the client profile does not check",
			access: func(t *testing.T) string { return "opaque-access-token" },
			id:     func(t *testing.T) string { return f.idToken(t, map[string]any{"sub": "bob"}) }, wantUser: "bob"},
		{name: "access token alone, resource-server profile by its iss",
			access: func(t *testing.T) string { return f.accessToken(t, nil) }, wantUser: "alice"},
		{name: "access token without iss, profile by the issuer identifier",
			access: func(t *testing.T) string {
				return f.accessToken(t, map[string]any{"iss": nil})
			},
			issuer: func(t *testing.T) string { return testATIssuer }, wantUser: "alice", noIssuerCheck: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.noIssuerCheck {
				// The issuer check needs an iss claim; the profile checks the others.
				require.NoError(t, f.b.UpdateOAuthProfile("default", "apis", func(p *OAuthProfile) { p.ResourceServerValidateIssuer = false }))
				t.Cleanup(func() {
					_ = f.b.UpdateOAuthProfile("default", "apis", func(p *OAuthProfile) { p.ResourceServerValidateIssuer = true })
				})
			}
			get := func(fn func(*testing.T) string) string {
				if fn == nil {
					return ""
				}
				return fn(t)
			}
			svc := f.service(t, get(tt.access), get(tt.id), get(tt.issuer))
			require.NoError(t, svc.Connect())
			info, err := f.b.Client("default", svc.GetApplicationID())
			require.NoError(t, err)
			assert.Equal(t, tt.wantUser, info.Username)
			require.NoError(t, svc.Disconnect())
		})
	}
}

func TestOAuthLoginRefused(t *testing.T) {
	f := newOAuthFixture(t)
	other := NewOAuthServer(t, OAuthServerConfig{}) // a key the broker does not know
	foreign, err := other.Token(map[string]any{"iss": testIDIssuer, "aud": "app", "sub": "mallory",
		"exp": time.Now().Add(time.Hour).Unix()}, "JWT")
	require.NoError(t, err)
	for _, tt := range []struct {
		name               string
		access, id, issuer func(t *testing.T) string
	}{
		{name: "not a JWT", id: func(*testing.T) string { return "invalid id token" }},
		{name: "signed by an unknown key", id: func(*testing.T) string { return foreign }},
		{name: "expired ID token", id: func(t *testing.T) string {
			return f.idToken(t, map[string]any{"exp": time.Now().Add(-time.Hour).Unix()})
		}},
		{name: "ID token for another client id", id: func(t *testing.T) string {
			return f.idToken(t, map[string]any{"aud": "someone-else"})
		}},
		{name: "ID token of the wrong type", id: func(t *testing.T) string {
			return f.token(t, "at+jwt", map[string]any{"iss": testIDIssuer, "aud": "app"})
		}},
		{name: "issuer without a profile", id: func(t *testing.T) string {
			return f.idToken(t, map[string]any{"iss": "https://unknown.example.test"})
		}},
		{name: "client profile given only an access token", access: func(t *testing.T) string {
			return f.idToken(t, nil)
		}, issuer: func(*testing.T) string { return testIDIssuer }},
		{name: "access token without iss or issuer identifier", access: func(t *testing.T) string {
			return f.accessToken(t, map[string]any{"iss": nil})
		}},
		{name: "access token for another audience", access: func(t *testing.T) string {
			return f.accessToken(t, map[string]any{"aud": "other"})
		}},
		{name: "access token lacking the required scope", access: func(t *testing.T) string {
			return f.accessToken(t, map[string]any{"scope": "openid"})
		}},
		{name: "access token of the wrong type", access: func(t *testing.T) string {
			return f.token(t, "JWT", map[string]any{"iss": testATIssuer, "aud": "broker", "scope": "publish"})
		}},
		{name: "access token without a username claim", access: func(t *testing.T) string {
			return f.accessToken(t, map[string]any{"sub": nil})
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			get := func(fn func(*testing.T) string) string {
				if fn == nil {
					return ""
				}
				return fn(t)
			}
			err := f.service(t, get(tt.access), get(tt.id), get(tt.issuer)).Connect()
			var native *solace.NativeError
			require.ErrorAs(t, err, &native, "%v", err)
			assert.Equal(t, subcode.LoginFailure, native.SubCode())
		})
	}
}

func TestOAuthLoginNeedsVPNAndProfileEnabled(t *testing.T) {
	f := newOAuthFixture(t)
	id := f.idToken(t, nil)
	require.NoError(t, f.service(t, "", id, "").Connect())

	require.NoError(t, f.b.UpdateOAuthProfile("default", "clients", func(p *OAuthProfile) { p.Enabled = false }))
	require.Error(t, f.service(t, "", id, "").Connect())
	require.NoError(t, f.b.UpdateOAuthProfile("default", "clients", func(p *OAuthProfile) { p.Enabled = true }))

	require.NoError(t, f.b.UpdateVPN("default", func(v *VPNConfig) { v.OAuthEnabled = false }))
	err := f.service(t, "", id, "").Connect()
	var native *solace.NativeError
	require.ErrorAs(t, err, &native)
	assert.Equal(t, subcode.LoginFailure, native.SubCode())
	assert.Contains(t, err.Error(), oauthShutdownText)
}

// The key set is fetched over HTTPS trusting only the domain certificate
// authorities: without the provider's CA the broker cannot fetch it.
func TestOAuthJWKSNeedsTrustedProvider(t *testing.T) {
	f := newOAuthFixture(t)
	require.NoError(t, f.b.RemoveDomainCertAuthority("idp-root"))
	_, otherDir := SelfSignedTLS(t)
	pemOther, err := os.ReadFile(filepath.Join(otherDir, "ca.pem"))
	require.NoError(t, err)
	require.NoError(t, f.b.AddDomainCertAuthority("unrelated", string(pemOther)))
	require.Error(t, f.service(t, "", f.idToken(t, nil), "").Connect())
}

// A client that reconnects logs in again with the tokens it holds then: an
// updated token works, an invalid one is refused.
func TestOAuthReconnectUsesUpdatedToken(t *testing.T) {
	f := newOAuthFixture(t)
	props := f.props()
	props[config.TransportLayerPropertyReconnectionAttempts] = 1
	props[config.TransportLayerPropertyReconnectionAttemptsWaitInterval] = 50
	svc, err := messaging.NewMessagingServiceBuilder().FromConfigurationProvider(props).
		WithAuthenticationStrategy(config.OAuth2Authentication("", f.idToken(t, nil), "")).Build()
	require.NoError(t, err)
	t.Cleanup(func() { _ = svc.Disconnect() })
	require.NoError(t, svc.Connect())

	reconnected := make(chan struct{}, 1)
	svc.AddReconnectionListener(func(solace.ServiceEvent) { reconnected <- struct{}{} })
	require.NoError(t, svc.UpdateProperty(config.AuthenticationPropertySchemeOAuth2OIDCIDToken, f.idToken(t, map[string]any{"sub": "carol"})))
	require.NoError(t, f.b.DisconnectClient("default", svc.GetApplicationID()))
	select {
	case <-reconnected:
	case <-time.After(10 * time.Second):
		t.Fatal("no reconnection")
	}
	info, err := f.b.Client("default", svc.GetApplicationID())
	require.NoError(t, err)
	assert.Equal(t, "carol", info.Username)

	down := make(chan struct{})
	svc.AddServiceInterruptionListener(func(solace.ServiceEvent) { close(down) })
	require.NoError(t, svc.UpdateProperty(config.AuthenticationPropertySchemeOAuth2OIDCIDToken, "invalid token"))
	require.NoError(t, f.b.DisconnectClient("default", svc.GetApplicationID()))
	select {
	case <-down:
	case <-time.After(10 * time.Second):
		t.Fatal("the client reconnected with an invalid token")
	}
	assert.False(t, svc.IsConnected())
}

func TestSEMPOAuthResources(t *testing.T) {
	b := NewTestBroker(t, Config{})
	s := newBrokerSEMP(t, b)
	_, trustDir := SelfSignedTLS(t)
	caPEM, err := os.ReadFile(filepath.Join(trustDir, "ca.pem"))
	require.NoError(t, err)

	// Domain certificate authorities.
	status, body := s.do("POST", "config/domainCertAuthorities", `{"certAuthorityName":"root","certContent":`+jsonString(string(caPEM))+`}`)
	require.Equal(t, 200, status, body)
	status, body = s.do("GET", "config/domainCertAuthorities", "")
	require.Equal(t, 200, status)
	require.Len(t, listOf(body), 1)
	assert.Equal(t, "root", listOf(body)[0]["certAuthorityName"])
	status, body = s.do("POST", "config/domainCertAuthorities", `{"certAuthorityName":"root","certContent":`+jsonString(string(caPEM))+`}`)
	assert.Equal(t, 400, status)
	assert.Equal(t, "ALREADY_EXISTS", errStatusOf(body))
	status, _ = s.do("POST", "config/domainCertAuthorities", `{"certAuthorityName":"bad","certContent":"not pem"}`)
	assert.Equal(t, 400, status)
	status, _ = s.do("GET", "monitor/domainCertAuthorities/root", "")
	assert.Equal(t, 200, status)
	status, _ = s.do("DELETE", "config/domainCertAuthorities/root", "")
	assert.Equal(t, 200, status)
	status, _ = s.do("GET", "config/domainCertAuthorities/root", "")
	assert.Equal(t, 404, status)

	// OAuth profiles: defaults, the attributes set, PATCH, refusals.
	status, body = s.do("POST", "config/msgVpns/default/authenticationOauthProfiles",
		`{"oauthProfileName":"p1","enabled":true,"issuer":"https://i","clientId":"c","endpointJwks":"https://k/jwks","clientSecret":"s3cret"}`)
	require.Equal(t, 200, status, body)
	d := dataOf(body)
	assert.Equal(t, "client", d["oauthRole"])
	assert.Equal(t, "sub", d["usernameClaimName"])
	assert.Equal(t, "JWT", d["clientRequiredType"])
	assert.Equal(t, "c", d["clientId"])
	assert.NotContains(t, d, "clientSecret")
	status, body = s.do("PATCH", "config/msgVpns/default/authenticationOauthProfiles/p1",
		`{"oauthRole":"resource-server","resourceServerValidateScopeEnabled":false,"endpointJwksRefreshInterval":60}`)
	require.Equal(t, 200, status, body)
	assert.Equal(t, "resource-server", dataOf(body)["oauthRole"])
	assert.Equal(t, false, dataOf(body)["resourceServerValidateScopeEnabled"])
	assert.EqualValues(t, 60, dataOf(body)["endpointJwksRefreshInterval"])
	profiles, err := b.OAuthProfiles("default")
	require.NoError(t, err)
	require.Len(t, profiles, 1)
	assert.Equal(t, "s3cret", profiles[0].ClientSecret)
	assert.Equal(t, time.Minute, profiles[0].EndpointJWKSRefresh)
	status, body = s.do("GET", "monitor/msgVpns/default/authenticationOauthProfiles", "")
	require.Equal(t, 200, status)
	assert.Len(t, listOf(body), 1)
	for _, tt := range []struct{ method, path, body, want string }{
		{"POST", "authenticationOauthProfiles", `{"oauthProfileName":"p1"}`, "ALREADY_EXISTS"},
		{"POST", "authenticationOauthProfiles", `{"enabled":true}`, "INVALID_PARAMETER"},
		{"POST", "authenticationOauthProfiles", `{"oauthProfileName":"p2","oauthRole":"admin"}`, "NOT_SUPPORTED"},
		{"POST", "authenticationOauthProfiles", `{"oauthProfileName":"p2","endpointIntrospection":"https://x"}`, "NOT_SUPPORTED"},
		{"POST", "authenticationOauthProfiles", `{"oauthProfileName":"p2","issuer":5}`, "INVALID_PARAMETER"},
		{"PATCH", "authenticationOauthProfiles/p1", `{"resourceServerParseAccessTokenEnabled":false}`, "NOT_SUPPORTED"},
		{"PATCH", "authenticationOauthProfiles/p1", `{"oauthProfileName":"other"}`, "INVALID_PARAMETER"},
	} {
		status, body = s.do(tt.method, "config/msgVpns/default/"+tt.path, tt.body)
		assert.Equal(t, 400, status, tt.body)
		assert.Equal(t, tt.want, errStatusOf(body), tt.body)
	}
	status, _ = s.do("PATCH", "config/msgVpns/default/authenticationOauthProfiles/nope", `{"enabled":true}`)
	assert.Equal(t, 404, status)
	status, _ = s.do("DELETE", "config/msgVpns/default/authenticationOauthProfiles/p1", "")
	assert.Equal(t, 200, status)
	status, _ = s.do("GET", "config/msgVpns/default/authenticationOauthProfiles/p1", "")
	assert.Equal(t, 404, status)

	// Authorization groups.
	status, body = s.do("POST", "config/msgVpns/default/authorizationGroups", `{"authorizationGroupName":"g1","enabled":true}`)
	require.Equal(t, 200, status, body)
	assert.Equal(t, "default", dataOf(body)["aclProfileName"])
	status, body = s.do("GET", "monitor/msgVpns/default/authorizationGroups/g1", "")
	require.Equal(t, 200, status)
	assert.Equal(t, true, dataOf(body)["enabled"])
	status, body = s.do("POST", "config/msgVpns/default/authorizationGroups", `{"authorizationGroupName":"g2","aclProfileName":"strict"}`)
	assert.Equal(t, 400, status)
	assert.Equal(t, "NOT_SUPPORTED", errStatusOf(body))
	status, _ = s.do("DELETE", "config/msgVpns/default/authorizationGroups/g1", "")
	assert.Equal(t, 200, status)
	status, body = s.do("GET", "config/msgVpns/default/authorizationGroups", "")
	require.Equal(t, 200, status)
	assert.Empty(t, listOf(body))
}

func jsonString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

// A login that names no issuer (no identifier, no iss claim) uses the VPN's
// default OAuth profile, set over SEMP.
func TestOAuthDefaultProfile(t *testing.T) {
	f := newOAuthFixture(t)
	require.NoError(t, f.b.UpdateOAuthProfile("default", "apis", func(p *OAuthProfile) { p.ResourceServerValidateIssuer = false }))
	tok := f.accessToken(t, map[string]any{"iss": nil, "sub": "dora"})
	require.Error(t, f.service(t, tok, "", "").Connect())

	s := newBrokerSEMP(t, f.b)
	status, body := s.do("PATCH", "config/msgVpns/default", `{"authenticationOauthDefaultProfileName":"apis"}`)
	require.Equal(t, 200, status, body)
	assert.Equal(t, "apis", dataOf(body)["authenticationOauthDefaultProfileName"])
	svc := f.service(t, tok, "", "")
	require.NoError(t, svc.Connect())
	info, err := f.b.Client("default", svc.GetApplicationID())
	require.NoError(t, err)
	assert.Equal(t, "dora", info.Username)

	// A token whose issuer has no profile is refused, default or not.
	require.Error(t, f.service(t, f.accessToken(t, map[string]any{"iss": "https://elsewhere.test"}), "", "").Connect())
}

// The broker caches a provider's key set; a token signed with a key the
// cache lacks makes it fetch the set again, so a rotation is picked up.
func TestOAuthKeyRotation(t *testing.T) {
	f := newOAuthFixture(t)
	require.NoError(t, f.service(t, "", f.idToken(t, nil), "").Connect())
	require.NoError(t, f.idp.RotateKey())
	svc := f.service(t, "", f.idToken(t, map[string]any{"sub": "eve"}), "")
	require.NoError(t, svc.Connect())
	info, err := f.b.Client("default", svc.GetApplicationID())
	require.NoError(t, err)
	assert.Equal(t, "eve", info.Username)
}
