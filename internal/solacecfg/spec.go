// Package solacecfg holds the Benthos-facing pieces the solace plugins
// share: the start of their specs (Spec), the connection fields, read into
// session.Config, the lint rule over them (which calls session.Config's own
// checks, so lint and the constructors say the same), the semp object
// (SEMPField, SEMPv2 access), the message attribute fields the output and
// the processor set (Attrs), and the solace_* metadata key names.
// internal/session itself speaks Solace, not Benthos.
package solacecfg

// This file is the connection fields and their reading into session.Config:
// ConfigFromParsed must fill every Config field the spec declares, and
// keeping the two side by side is what keeps them in step.

import (
	"strings"
	"sync"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connect-solace/connect-solace/internal/confread"
	"github.com/connect-solace/connect-solace/internal/lintmethod"
	"github.com/connect-solace/connect-solace/internal/secretfile"
	"github.com/connect-solace/connect-solace/internal/session"
)

// Field names: the connection fields, shared by the solace plugins, and the
// semp object.
const (
	FieldURLs         = "urls"
	FieldVPN          = "vpn"
	FieldUsername     = "username"
	FieldPassword     = "password"
	FieldPasswordFile = "password_file"
	FieldClientName   = "client_name"

	FieldTLS                   = "tls"
	FieldTLSEnabled            = "enabled"
	FieldTLSTrustStorePath     = "trust_store_path"
	FieldTLSValidateServerCert = "validate_server_cert"
	FieldTLSValidateDate       = "validate_date"
	FieldTLSValidateServerName = "validate_server_name"
	FieldTLSClientCertFile     = "client_certificate_file"
	FieldTLSClientKeyFile      = "client_key_file"
	FieldTLSClientKeyPassword  = "client_key_password"
	FieldTLSClientKeyPassFile  = "client_key_password_file"

	FieldAuth       = "auth"
	FieldAuthScheme = "scheme"

	// auth.oauth2 (spec_oauth.go): the tokens, then the
	// client_credentials grant.
	FieldAuthOAuth2             = "oauth2"
	FieldOAuth2AccessToken      = "access_token"
	FieldOAuth2AccessFile       = "access_token_file"
	FieldOAuth2IDToken          = "id_token"
	FieldOAuth2IDTokenFile      = "id_token_file"
	FieldOAuth2IssuerIDName     = "issuer"
	FieldOAuth2TokenURL         = "token_url"
	FieldOAuth2ClientID         = "client_id"
	FieldOAuth2ClientSecret     = "client_secret"
	FieldOAuth2ClientSecretFile = "client_secret_file"
	FieldOAuth2Scopes           = "scopes"
	FieldOAuth2Audience         = "audience"
	FieldOAuth2TokenTLS         = "tls"

	// auth.kerberos (spec_kerberos.go).
	FieldAuthKerberos        = "kerberos"
	FieldKerberosServiceName = "service_name"

	// semp, SEMPv2 access (spec_semp.go).
	FieldSEMP             = "semp"
	FieldSEMPURL          = "url"
	FieldSEMPUsername     = "username"
	FieldSEMPPassword     = "password"
	FieldSEMPPasswordFile = "password_file"
	FieldSEMPVPN          = "vpn"
	FieldSEMPTLS          = "tls"
	FieldSEMPOAuth2       = "oauth2"

	FieldReconnectAttempts   = "reconnect_attempts"
	FieldReconnectInterval   = "reconnect_interval"
	FieldConnectRetries      = "connect_retries"
	FieldConnectRetryBackoff = "connect_retry_backoff"
	FieldBackoffInitial      = "initial_interval"
	FieldBackoffMultiplier   = "multiplier"
	FieldBackoffMax          = "max_interval"
	FieldConnectTimeout      = "connect_timeout"
	FieldCompressionLevel    = "compression_level"
)

// Spec starts the spec of a solace plugin: its status and category, its
// summary and description, the connection fields, and the lint rule that
// checks them, extended by the plugin's own checks (see
// connectionLintRule). The plugin adds its own fields.
func Spec(summary, description string, checks ...string) *service.ConfigSpec {
	return service.NewConfigSpec().
		Beta().
		Categories("Services").
		Summary(summary).
		Description(description).
		Fields(ConnectionFields()...).
		LintRule(connectionLintRule(checks...))
}

// ConnectionFields returns the connection config fields shared by the solace
// plugins, which Spec starts their specs with.
func ConnectionFields() []*service.ConfigField {
	return []*service.ConfigField{
		service.NewURLListField(FieldURLs).
			Description("Broker URLs, `tcp://host:port` or `tcps://host:port`. Several URLs form a failover list: the client tries them in order on connect and reconnect.").
			Example([]string{"tcp://localhost:55555"}).
			Example([]string{"tcps://primary.example.com:55443", "tcps://backup.example.com:55443"}),
		service.NewStringField(FieldVPN).
			Description("The message VPN to log in to.").
			Default("default"),
		service.NewStringField(FieldUsername).
			Description("The client username. Required by `basic` authentication; optional for `client_certificate` (the certificate's common name is used when empty).").
			Default(""),
		secretfile.PasswordField(FieldPassword, "The client password for `basic` authentication. Use an environment reference such as `${SOLACE_PASSWORD}`, or `password_file` in streams mode."),
		secretfile.PasswordFileField(FieldPasswordFile, "the client password", "/var/run/secrets/solace/password"),
		service.NewStringField(FieldClientName).
			Description("The client name shown by the broker. Empty lets the client generate a unique one. A fixed name must be unique per session: with `clients` > 1 a suffix `-<n>` is appended.").
			Default("").Advanced(),
		service.NewObjectField(FieldTLS,
			service.NewBoolField(FieldTLSEnabled).
				Description("Whether to use TLS. Required by `tcps://` URLs and by `client_certificate` authentication.").
				Default(false),
			service.NewStringField(FieldTLSTrustStorePath).
				Description("A directory holding the PEM files of the trusted CA certificates (the Solace client reads a directory, not a single file). Required when `validate_server_cert` is true.").
				Default("").Example("/etc/ssl/solace-trust"),
			service.NewBoolField(FieldTLSValidateServerCert).
				Description("Whether to validate the broker's certificate against the trust store. Turning this off is insecure and meant for tests only.").
				Default(true),
			service.NewBoolField(FieldTLSValidateDate).
				Description("Whether to reject expired or not-yet-valid broker certificates.").
				Default(true).Advanced(),
			service.NewBoolField(FieldTLSValidateServerName).
				Description("Whether the broker certificate must match the host name of the URL.").
				Default(true).Advanced(),
			service.NewStringField(FieldTLSClientCertFile).
				Description("A PEM client certificate file, for `client_certificate` authentication.").
				Default(""),
			service.NewStringField(FieldTLSClientKeyFile).
				Description("The PEM private key file of the client certificate.").
				Default(""),
			service.NewStringField(FieldTLSClientKeyPassword).
				Description("The password of an encrypted client key file. Mutually exclusive with `client_key_password_file`.").
				Default("").Secret().Advanced(),
			service.NewStringField(FieldTLSClientKeyPassFile).
				Description("A file holding the password of the client key file, read on every connect; one trailing newline is trimmed. Keeps the password out of the config, which the streams API returns with `${ENV}` references resolved. Mutually exclusive with `client_key_password`.").
				Default("").Advanced(),
		).Description("TLS settings, mapped to the file-based settings of the Solace client. A Go TLS configuration (in-memory certificates, custom cipher objects) cannot be passed to the client.").
			Advanced(),
		service.NewObjectField(FieldAuth,
			service.NewStringEnumField(FieldAuthScheme, session.AuthBasic, session.AuthClientCertificate, session.AuthOAuth2, session.AuthKerberos).
				Description("The authentication scheme: `basic` (username and password), `client_certificate` (needs `tls.enabled`, `tls.client_certificate_file` and `tls.client_key_file`), `oauth2` (needs TLS and `auth.oauth2.access_token`, `auth.oauth2.id_token`, their `_file` fields or `auth.oauth2.token_url`) or `kerberos` (a ticket from the host's Kerberos credentials cache; `username`, when set, is sent as the API-provided username, which the broker uses only where its VPN allows it). See `auth.kerberos` for what the host needs.").
				Default(session.AuthBasic),
			oauth2Field(),
			kerberosField(),
		).Description("How the client authenticates.").Advanced(),
		service.NewIntField(FieldReconnectAttempts).
			Description("How often the client itself tries to restore a session that dropped after it was up, before giving up and letting Benthos reconnect; `-1` retries forever, `0` never. While the client reconnects, unconfirmed persistent messages are re-sent by the client, not lost.").
			Default(3).Advanced(),
		service.NewDurationField(FieldReconnectInterval).
			Description("The wait between the client's reconnect attempts.").
			Default("3s").Advanced(),
		service.NewIntField(FieldConnectRetries).
			Description("How often a failed connect is retried inside one connect, waiting `connect_retry_backoff`, before it fails. Benthos itself calls connect again for as long as the pipeline runs (backing off up to 1 s), so the default 0 keeps a single retry layer and lets every failure show in Benthos's connection status and metrics at once. Set it only to ride out short outages quietly with a longer backoff, e.g. `4` for Beam's SolaceIO policy (waits of 1 s, 2 s, 4 s and 8 s); every attempt may take up to `connect_timeout`.").
			Default(0).Advanced(),
		service.NewObjectField(FieldConnectRetryBackoff,
			service.NewDurationField(FieldBackoffInitial).Description("The wait before the first retry.").Default("1s"),
			service.NewFloatField(FieldBackoffMultiplier).Description("The factor applied to the wait after every retry; at least 1.").Default(2.0),
			service.NewDurationField(FieldBackoffMax).Description("The longest wait between retries.").Default("10s"),
		).Description("The backoff between connect retries.").Advanced(),
		service.NewDurationField(FieldConnectTimeout).
			Description("The time allowed for one connect attempt (TCP connect and login) to all hosts.").
			Default("30s").Advanced(),
		service.NewIntField(FieldCompressionLevel).
			Description("Compresses the whole connection (ZLIB): 1 (fastest) to 9 (smallest), 0 off. A PubSub+ broker serves compressed connections on its own port, 55003 by default (the SMF compressed listen port), so `urls` must name that port, e.g. `tcp://broker:55003`. It trades client and broker CPU for bandwidth: worth it over slow or metered links with compressible payloads.").
			Default(0).Advanced(),
	}
}

// connectionLintRule returns a bloblang lint rule for contradictions in
// the connection fields, extended by the plugin's own checks (a spec holds a
// single lint rule: ConfigSpec.LintRule replaces the previous one). The
// connection's rules are Config.Validate's, reached through the
// solace_connection_lint method, so they live in one place. Each check is a
// bloblang expression over `this` that yields a lint message (or a list of
// them) or null, e.g.
//
//	`if this.topic.or("") == "" { "field topic: required" } else { null }`
func connectionLintRule(checks ...string) string {
	var extra strings.Builder
	for _, c := range checks {
		extra.WriteString("  ")
		extra.WriteString(strings.TrimSpace(c))
		extra.WriteString(",\n")
	}
	return "root = [\n  this.solace_connection_lint(),\n" + extra.String() + "].flatten().filter(e -> e != null)\n"
}

// connectionSpec holds the connection fields alone, for linting them.
var connectionSpec = sync.OnceValue(func() *service.ConfigSpec {
	return service.NewConfigSpec().Fields(ConnectionFields()...)
})

// The lint rule calls Config.Validate through this method.
var _ = lintmethod.RegisterRead("solace_connection_lint",
	"Internal to the solace plugins' lint rules: the contradictions in the connection fields of the linted config, as a list of messages.",
	connectionSpec, readConfig, session.Config.Problems)

// ConfigFromParsed reads the fields of ConnectionFields and validates them.
func ConfigFromParsed(conf *service.ParsedConfig) (session.Config, error) {
	c, err := readConfig(conf)
	if err != nil {
		return c, err
	}
	if err := c.Validate(); err != nil {
		return c, err
	}
	return c, c.PrepareTokenSources()
}

// readConfig reads the fields of ConnectionFields.
func readConfig(conf *service.ParsedConfig) (session.Config, error) {
	var c session.Config
	r := confread.New(conf)
	if r.Contains(FieldURLs) { // required: Validate reports it missing
		r.StringList(&c.URLs, FieldURLs)
	}
	r.String(&c.VPN, FieldVPN)
	r.String(&c.Username, FieldUsername)
	r.String(&c.Password, FieldPassword)
	r.String(&c.PasswordFile, FieldPasswordFile)
	r.String(&c.ClientName, FieldClientName)
	t := r.In(FieldTLS)
	t.Bool(&c.TLS.Enabled, FieldTLSEnabled)
	t.String(&c.TLS.TrustStorePath, FieldTLSTrustStorePath)
	t.Bool(&c.TLS.ValidateServerCert, FieldTLSValidateServerCert)
	t.Bool(&c.TLS.ValidateDate, FieldTLSValidateDate)
	t.Bool(&c.TLS.ValidateServerName, FieldTLSValidateServerName)
	t.String(&c.TLS.ClientCertFile, FieldTLSClientCertFile)
	t.String(&c.TLS.ClientKeyFile, FieldTLSClientKeyFile)
	t.String(&c.TLS.ClientKeyPassword, FieldTLSClientKeyPassword)
	t.String(&c.TLS.ClientKeyPasswordFile, FieldTLSClientKeyPassFile)
	a := r.In(FieldAuth)
	a.String(&c.AuthScheme, FieldAuthScheme)
	if err := r.Err(); err != nil {
		return c, err
	}
	var err error
	if c.OAuth2, err = readOAuth2(conf.Namespace(FieldAuth, FieldAuthOAuth2)); err != nil {
		return c, err
	}
	a.String(&c.KerberosServiceName, FieldAuthKerberos, FieldKerberosServiceName)
	r.Int(&c.ReconnectAttempts, FieldReconnectAttempts)
	r.Duration(&c.ReconnectInterval, FieldReconnectInterval)
	r.Int(&c.ConnectRetries, FieldConnectRetries)
	b := r.In(FieldConnectRetryBackoff)
	b.Duration(&c.ConnectBackoff.Initial, FieldBackoffInitial)
	b.Float(&c.ConnectBackoff.Multiplier, FieldBackoffMultiplier)
	b.Duration(&c.ConnectBackoff.Max, FieldBackoffMax)
	r.Duration(&c.ConnectTimeout, FieldConnectTimeout)
	r.Int(&c.CompressionLevel, FieldCompressionLevel)
	return c, r.Err()
}
