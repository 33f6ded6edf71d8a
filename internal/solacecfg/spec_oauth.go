package solacecfg

// This file is the spec and reading of the client_credentials grant fields
// inside auth.oauth2 (the token source itself is internal/oauth).

import (
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connect-solace/connect-solace/internal/oauth"
)

// Field names of the client_credentials grant, inside auth.oauth2.
const (
	FieldOAuth2TokenURL         = "token_url"
	FieldOAuth2ClientID         = "client_id"
	FieldOAuth2ClientSecret     = "client_secret"
	FieldOAuth2ClientSecretFile = "client_secret_file"
	FieldOAuth2Scopes           = "scopes"
	FieldOAuth2Audience         = "audience"
	FieldOAuth2TokenTLS         = "tls"
)

// oauth2GrantFields are the client_credentials fields of auth.oauth2.
func oauth2GrantFields() []*service.ConfigField {
	return []*service.ConfigField{
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
	}
}

// readGrant reads the client_credentials fields of the auth.oauth2
// namespace o; nil without a token_url.
func readGrant(o *service.ParsedConfig) (*oauth.ClientCredentials, error) {
	url, err := o.FieldString(FieldOAuth2TokenURL)
	if err != nil || url == "" {
		return nil, err
	}
	g := &oauth.ClientCredentials{TokenURL: url}
	for _, f := range []struct {
		name string
		dst  *string
	}{{FieldOAuth2ClientID, &g.ClientID}, {FieldOAuth2ClientSecret, &g.ClientSecret},
		{FieldOAuth2ClientSecretFile, &g.ClientSecretFile}, {FieldOAuth2Audience, &g.Audience}} {
		if *f.dst, err = o.FieldString(f.name); err != nil {
			return nil, err
		}
	}
	if g.Scopes, err = o.FieldStringList(FieldOAuth2Scopes); err != nil {
		return nil, err
	}
	tlsConf, on, err := o.FieldTLSToggled(FieldOAuth2TokenTLS)
	if err != nil {
		return nil, err
	}
	if on {
		g.TLS = tlsConf
	}
	return g, nil
}
