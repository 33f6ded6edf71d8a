package solacecfg

// This file is the spec and reading of auth.oauth2: the tokens, or the
// client_credentials grant that fetches them (the token source itself is
// internal/oauth).

import (
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connect-solace/connect-solace/internal/confread"
	"github.com/connect-solace/connect-solace/internal/oauth"
	"github.com/connect-solace/connect-solace/internal/session"
)

// oauth2Field is auth.oauth2.
func oauth2Field() *service.ConfigField {
	return service.NewObjectField(FieldAuthOAuth2,
		service.NewStringField(FieldOAuth2AccessToken).
			Description("An OAuth2 access token. Mutually exclusive with `access_token_file`.").Default("").Secret(),
		service.NewStringField(FieldOAuth2AccessFile).
			Description("A file holding the OAuth2 access token, kept fresh by something else (a sidecar, a projected token). It is read again ahead of the token's `exp` (at three quarters of its lifetime; every 30 s for a token that is not a JWT) and whenever the Solace client reconnects, and a new token is handed to the client for its next login; one trailing newline is trimmed. Keeps the token out of the config, which the streams API returns with `${ENV}` references resolved. Mutually exclusive with `access_token`.").Default(""),
		service.NewStringField(FieldOAuth2IDToken).
			Description("An OpenID Connect ID token. Mutually exclusive with `id_token_file`.").Default("").Secret(),
		service.NewStringField(FieldOAuth2IDTokenFile).
			Description("A file holding the OpenID Connect ID token, read again ahead of its `exp` and whenever the Solace client reconnects, like `access_token_file`; one trailing newline is trimmed. Mutually exclusive with `id_token`.").Default(""),
		service.NewStringField(FieldOAuth2IssuerIDName).
			Description("The issuer identifier the broker uses to pick its OAuth profile; empty means the VPN's default profile.").Default(""),
		service.NewStringField(FieldOAuth2TokenURL).
			Description("The token endpoint of an OAuth 2.0 provider. When set, the plugin fetches its access token with the `client_credentials` grant, caches it, renews it ahead of its expiry (at three quarters of its lifetime, at least 5 s before `exp`) and when the Solace client reconnects, and hands the new token to the client for its next login; failed fetches back off from 1 s to 30 s. Mutually exclusive with `access_token` and `access_token_file`.").
			Default("").Example("https://idp.example.com/oauth2/token"),
		service.NewStringField(FieldOAuth2ClientID).
			Description("The client id of the `client_credentials` grant.").Default(""),
		service.NewStringField(FieldOAuth2ClientSecret).
			Description("The client secret of the `client_credentials` grant, sent with HTTP basic authentication. Mutually exclusive with `client_secret_file`.").
			Default("").Secret(),
		service.NewStringField(FieldOAuth2ClientSecretFile).
			Description("A file holding the client secret, read on every token request (so a rotated secret is used at once); one trailing newline is trimmed. Use it in streams mode, where the API shows `client_secret` with `${ENV}` references resolved. Mutually exclusive with `client_secret`.").
			Default(""),
		service.NewStringListField(FieldOAuth2Scopes).
			Description("The scopes to request.").Default([]any{}),
		service.NewStringField(FieldOAuth2Audience).
			Description("The `audience` parameter of the token request, which providers such as Auth0, Okta and Keycloak use to pick the resource server (the broker's OAuth profile then checks it); empty sends none.").
			Default(""),
		service.NewTLSToggledField(FieldOAuth2TokenTLS).
			Description("TLS settings for the token endpoint (https `token_url`)."),
	).Description("OAuth2 credentials for `scheme: oauth2`.")
}

// readOAuth2 reads the auth.oauth2 namespace o: the tokens, and the
// client_credentials grant when token_url is set (Grant nil without it).
func readOAuth2(o *service.ParsedConfig) (session.OAuth2Config, error) {
	var c session.OAuth2Config
	var g oauth.ClientCredentials
	r := confread.New(o)
	r.String(&c.AccessToken, FieldOAuth2AccessToken)
	r.String(&c.IDToken, FieldOAuth2IDToken)
	r.String(&c.AccessTokenFile, FieldOAuth2AccessFile)
	r.String(&c.IDTokenFile, FieldOAuth2IDTokenFile)
	r.String(&c.Issuer, FieldOAuth2IssuerIDName)
	r.String(&g.TokenURL, FieldOAuth2TokenURL)
	r.String(&g.ClientID, FieldOAuth2ClientID)
	r.String(&g.ClientSecret, FieldOAuth2ClientSecret)
	r.String(&g.ClientSecretFile, FieldOAuth2ClientSecretFile)
	r.String(&g.Audience, FieldOAuth2Audience)
	r.StringList(&g.Scopes, FieldOAuth2Scopes)
	if err := r.Err(); err != nil || g.TokenURL == "" {
		return c, err
	}
	tlsConf, on, err := o.FieldTLSToggled(FieldOAuth2TokenTLS)
	if err != nil {
		return c, err
	}
	if on {
		g.TLS = tlsConf
	}
	c.Grant = &g
	return c, nil
}
