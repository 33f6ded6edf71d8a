// Package session is the only package that speaks to the Solace Go client
// (solace.dev/go/messaging). It owns the connection configuration shared by the
// solace input and output, connecting with retries, connection-state events,
// publishers with per-message confirmations and the session pool. Plugins speak
// Benthos terms and call into this package.
package session

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/redpanda-data/benthos/v4/public/service"
	"solace.dev/go/messaging/pkg/solace/config"

	redacturl "github.com/connect-solace/connect-solace/internal/redact"
	"github.com/connect-solace/connect-solace/internal/secretfile"
)

// Connection field names, shared by the solace input and output.
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

	FieldAuth               = "auth"
	FieldAuthScheme         = "scheme"
	FieldAuthOAuth2         = "oauth2"
	FieldOAuth2AccessToken  = "access_token"
	FieldOAuth2AccessFile   = "access_token_file"
	FieldOAuth2IDToken      = "id_token"
	FieldOAuth2IDTokenFile  = "id_token_file"
	FieldOAuth2IssuerIDName = "issuer"

	FieldReconnectAttempts   = "reconnect_attempts"
	FieldReconnectInterval   = "reconnect_interval"
	FieldConnectRetries      = "connect_retries"
	FieldConnectRetryBackoff = "connect_retry_backoff"
	FieldBackoffInitial      = "initial_interval"
	FieldBackoffMultiplier   = "multiplier"
	FieldBackoffMax          = "max_interval"
	FieldConnectTimeout      = "connect_timeout"
)

// Authentication schemes accepted in auth.scheme.
const (
	AuthBasic             = "basic"
	AuthClientCertificate = "client_certificate"
	AuthOAuth2            = "oauth2"
)

// TLSConfig mirrors the Solace client's file-based TLS settings. The client
// cannot take a Go *tls.Config, so everything is a path on disk.
type TLSConfig struct {
	Enabled            bool
	TrustStorePath     string
	ValidateServerCert bool
	ValidateDate       bool
	ValidateServerName bool
	ClientCertFile     string
	ClientKeyFile      string
	ClientKeyPassword  string
	// ClientKeyPasswordFile, when set, names a file Connect reads
	// ClientKeyPassword from.
	ClientKeyPasswordFile string
}

// OAuth2Config holds OAuth2 / OIDC tokens for auth.scheme oauth2.
type OAuth2Config struct {
	AccessToken string
	IDToken     string
	Issuer      string
	// AccessTokenFile and IDTokenFile, when set, name files Connect reads
	// the tokens from.
	AccessTokenFile string
	IDTokenFile     string
}

// Backoff is the exponential policy between initial connect attempts.
type Backoff struct {
	Initial    time.Duration
	Multiplier float64
	// Max caps the wait; 0 means no cap.
	Max time.Duration
}

// exponential returns b as a cenkalti/backoff policy: Initial * Multiplier^n
// for retry n (0-based), capped at Max, without jitter (a fixed schedule is
// what the connect_retry_backoff fields document) and without a time limit
// (connect_retries bounds the attempts).
func (b Backoff) exponential() *backoff.ExponentialBackOff {
	maxWait := b.Max
	if maxWait <= 0 {
		maxWait = time.Duration(math.MaxInt64)
	}
	return backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(b.Initial),
		backoff.WithMultiplier(b.Multiplier),
		backoff.WithMaxInterval(maxWait),
		backoff.WithRandomizationFactor(0),
		backoff.WithMaxElapsedTime(0),
	)
}

// Config is the parsed connection block. Its String method redacts secrets, so
// it is safe to log with %v.
type Config struct {
	URLs       []string
	VPN        string
	Username   string
	Password   string
	ClientName string
	// PasswordFile, when set, names a file Connect reads Password from on
	// every connect (see ResolveSecretFiles).
	PasswordFile string

	TLS        TLSConfig
	AuthScheme string
	OAuth2     OAuth2Config

	// ReconnectAttempts is how often the client re-establishes a session that
	// dropped after it was up; -1 means forever, 0 never.
	ReconnectAttempts int
	ReconnectInterval time.Duration
	// ConnectRetries is how often Connect retries a failed attempt, waiting
	// ConnectBackoff between retries. It is 0 by default: the plugins run
	// inside Benthos's connect loop, which retries forever, and a second
	// loop inside it would only hide failures from it for minutes (up to
	// ConnectRetries+1 times ConnectTimeout plus the waits).
	ConnectRetries int
	ConnectBackoff Backoff
	ConnectTimeout time.Duration
	// KeepAliveInterval and KeepAliveLimit tune how fast the client notices
	// a silent network (it gives a connection up after KeepAliveLimit
	// unanswered keepalives sent every KeepAliveInterval); zero keeps the
	// client's defaults (3 s and 3). Not a spec field: fault tests set them.
	KeepAliveInterval time.Duration
	KeepAliveLimit    int

	// SendTimestamps makes the client stamp every published message with
	// its send time (the SMF sender timestamp). It is not a shared field:
	// the output sets it from its sender_timestamp field.
	SendTimestamps bool
}

// String renders the config with secrets redacted.
func (c Config) String() string {
	red := func(s string) string {
		if s == "" {
			return ""
		}
		return "***"
	}
	s := fmt.Sprintf("{urls:%v vpn:%q username:%q password:%s client_name:%q auth:%s tls:%t",
		redacturl.URLs(c.URLs), c.VPN, c.Username, red(c.Password), c.ClientName, c.AuthScheme, c.TLS.Enabled)
	if c.PasswordFile != "" {
		s += fmt.Sprintf(" password_file:%q", c.PasswordFile)
	}
	return s + "}"
}

// GoString keeps %#v from printing secrets too.
func (c Config) GoString() string { return c.String() }

// ConnectionFields returns the connection config fields shared by the solace
// input and output. Add ConnectionLintRuleWith to the spec as well.
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
		service.NewStringField(FieldPassword).
			Description("The client password for `basic` authentication. Use an environment reference such as `${SOLACE_PASSWORD}`, or `password_file` in streams mode. Mutually exclusive with `password_file`.").
			Default("").Secret(),
		service.NewStringField(FieldPasswordFile).
			Description("A file holding the client password, read on every connect (so a rotated secret is used on the next reconnect); one trailing newline is trimmed. Use it instead of `password` with a Kubernetes Secret mounted as a file, and always in streams mode: there `GET /streams/{id}` returns the stream config with `${ENV}` references resolved, so a `password` is readable through the API, whereas this field only shows the path. Mutually exclusive with `password`.").
			Default("").Example("/var/run/secrets/solace/password"),
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
			service.NewStringEnumField(FieldAuthScheme, AuthBasic, AuthClientCertificate, AuthOAuth2).
				Description("The authentication scheme: `basic` (username and password), `client_certificate` (needs `tls.enabled`, `tls.client_certificate_file` and `tls.client_key_file`) or `oauth2` (needs `auth.oauth2.access_token` or `auth.oauth2.id_token`).").
				Default(AuthBasic),
			service.NewObjectField(FieldAuthOAuth2,
				service.NewStringField(FieldOAuth2AccessToken).
					Description("An OAuth2 access token. Mutually exclusive with `access_token_file`.").Default("").Secret(),
				service.NewStringField(FieldOAuth2AccessFile).
					Description("A file holding the OAuth2 access token, read on every connect, so a refreshed token is used on the next reconnect; one trailing newline is trimmed. Keeps the token out of the config, which the streams API returns with `${ENV}` references resolved. Mutually exclusive with `access_token`.").Default(""),
				service.NewStringField(FieldOAuth2IDToken).
					Description("An OpenID Connect ID token. Mutually exclusive with `id_token_file`.").Default("").Secret(),
				service.NewStringField(FieldOAuth2IDTokenFile).
					Description("A file holding the OpenID Connect ID token, read on every connect; one trailing newline is trimmed. Mutually exclusive with `id_token`.").Default(""),
				service.NewStringField(FieldOAuth2IssuerIDName).
					Description("The issuer identifier the broker uses to pick its OAuth profile; empty means the VPN's default profile.").Default(""),
			).Description("OAuth2 credentials for `scheme: oauth2`."),
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
	}
}

// ConnectionLintRuleWith returns a bloblang lint rule for contradictions in
// the connection fields, extended by the plugin's own checks (a spec holds a
// single lint rule: ConfigSpec.LintRule replaces the previous one). Each
// message names the field and the fix. Each check is a bloblang expression
// over `this` that yields a lint message or null, e.g.
//
//	`if this.topic.or("") == "" { "field topic: required" } else { null }`
//
// The linted object already holds the fields' defaults, so a check reads a
// field with a default as it is; only fields without one (optional fields,
// required ones such as urls) need .or(…).
func ConnectionLintRuleWith(checks ...string) string {
	var extra strings.Builder
	for _, c := range checks {
		extra.WriteString("  ")
		extra.WriteString(strings.TrimSpace(c))
		extra.WriteString(",\n")
	}
	return connectionLintHead + extra.String() + "].filter(e -> e != null)\n"
}

const connectionLintHead = `
let urls = this.urls.or([])
let tls_on = this.tls.enabled
let scheme = this.auth.scheme
let has_tcps = $urls.filter(u -> u.string().has_prefix("tcps://")).length() > 0
let has_tcp = $urls.filter(u -> u.string().has_prefix("tcp://")).length() > 0
let cred_urls = $urls.enumerated().filter(e -> e.value.string().contains("@")).map_each(e -> "urls[%v]".format(e.index))
let bad_urls = $urls.filter(u -> !u.string().contains("@") && !u.string().has_prefix("tcp://") && !u.string().has_prefix("tcps://"))
root = [
  if $urls.length() == 0 { "field urls: at least one broker url is required, e.g. urls: [ tcp://localhost:55555 ]" } else { null },
  if $bad_urls.length() > 0 { "field urls: %v must start with tcp:// or tcps://".format($bad_urls.join(", ")) } else { null },
  if $cred_urls.length() > 0 { "field %v: credentials (user:password@) in a Solace URL are not supported; give host and port only and set username and password (or password_file)".format($cred_urls.join(", ")) } else { null },
  if $has_tcps && !$tls_on { "field urls: tcps:// needs TLS: set tls.enabled: true" } else { null },
  if $has_tcp && $tls_on { "field tls.enabled: true but urls use tcp://: use tcps:// urls or set tls.enabled: false" } else { null },
  if $tls_on && this.tls.validate_server_cert && this.tls.trust_store_path == "" { "field tls.trust_store_path: required to validate the broker certificate; set it to a directory of CA PEM files or set tls.validate_server_cert: false (tests only)" } else { null },
  if (this.tls.client_certificate_file == "") != (this.tls.client_key_file == "") { "fields tls.client_certificate_file and tls.client_key_file: set both or neither" } else { null },
  if $scheme == "client_certificate" && (this.tls.client_certificate_file == "" || this.tls.client_key_file == "") { "field auth.scheme: client_certificate needs tls.client_certificate_file and tls.client_key_file" } else { null },
  if $scheme == "client_certificate" && !$tls_on { "field auth.scheme: client_certificate needs TLS: set tls.enabled: true and use tcps:// urls" } else { null },
  if $scheme == "oauth2" && this.auth.oauth2.access_token == "" && this.auth.oauth2.access_token_file == "" && this.auth.oauth2.id_token == "" && this.auth.oauth2.id_token_file == "" { "field auth.scheme: oauth2 needs auth.oauth2.access_token or auth.oauth2.id_token (or their _file fields)" } else { null },
  if this.password != "" && this.password_file != "" { "fields password and password_file: both are set; keep one (remove password to read it from the file, which keeps it out of the streams API)" } else { null },
  if this.tls.client_key_password != "" && this.tls.client_key_password_file != "" { "fields tls.client_key_password and tls.client_key_password_file: both are set; keep one (remove tls.client_key_password to read it from the file)" } else { null },
  if this.auth.oauth2.access_token != "" && this.auth.oauth2.access_token_file != "" { "fields auth.oauth2.access_token and auth.oauth2.access_token_file: both are set; keep one (remove auth.oauth2.access_token to read it from the file)" } else { null },
  if this.auth.oauth2.id_token != "" && this.auth.oauth2.id_token_file != "" { "fields auth.oauth2.id_token and auth.oauth2.id_token_file: both are set; keep one (remove auth.oauth2.id_token to read it from the file)" } else { null },
  if $scheme == "basic" && this.username == "" { "field username: required by auth.scheme basic" } else { null },
  if this.connect_retry_backoff.multiplier < 1 { "field connect_retry_backoff.multiplier: must be at least 1" } else { null },
  if this.connect_retries < 0 { "field connect_retries: must be 0 or more" } else { null },
  if this.reconnect_attempts < -1 { "field reconnect_attempts: must be -1 (forever), 0 or more" } else { null },
`

// ConfigFromParsed reads the fields of ConnectionFields.
func ConfigFromParsed(conf *service.ParsedConfig) (Config, error) {
	var c Config
	var err error
	if c.URLs, err = conf.FieldStringList(FieldURLs); err != nil {
		return c, err
	}
	if c.VPN, err = conf.FieldString(FieldVPN); err != nil {
		return c, err
	}
	if c.Username, err = conf.FieldString(FieldUsername); err != nil {
		return c, err
	}
	if c.Password, err = conf.FieldString(FieldPassword); err != nil {
		return c, err
	}
	if c.PasswordFile, err = conf.FieldString(FieldPasswordFile); err != nil {
		return c, err
	}
	if c.ClientName, err = conf.FieldString(FieldClientName); err != nil {
		return c, err
	}
	t := conf.Namespace(FieldTLS)
	if c.TLS.Enabled, err = t.FieldBool(FieldTLSEnabled); err != nil {
		return c, err
	}
	if c.TLS.TrustStorePath, err = t.FieldString(FieldTLSTrustStorePath); err != nil {
		return c, err
	}
	if c.TLS.ValidateServerCert, err = t.FieldBool(FieldTLSValidateServerCert); err != nil {
		return c, err
	}
	if c.TLS.ValidateDate, err = t.FieldBool(FieldTLSValidateDate); err != nil {
		return c, err
	}
	if c.TLS.ValidateServerName, err = t.FieldBool(FieldTLSValidateServerName); err != nil {
		return c, err
	}
	if c.TLS.ClientCertFile, err = t.FieldString(FieldTLSClientCertFile); err != nil {
		return c, err
	}
	if c.TLS.ClientKeyFile, err = t.FieldString(FieldTLSClientKeyFile); err != nil {
		return c, err
	}
	if c.TLS.ClientKeyPassword, err = t.FieldString(FieldTLSClientKeyPassword); err != nil {
		return c, err
	}
	if c.TLS.ClientKeyPasswordFile, err = t.FieldString(FieldTLSClientKeyPassFile); err != nil {
		return c, err
	}
	a := conf.Namespace(FieldAuth)
	if c.AuthScheme, err = a.FieldString(FieldAuthScheme); err != nil {
		return c, err
	}
	o := a.Namespace(FieldAuthOAuth2)
	if c.OAuth2.AccessToken, err = o.FieldString(FieldOAuth2AccessToken); err != nil {
		return c, err
	}
	if c.OAuth2.IDToken, err = o.FieldString(FieldOAuth2IDToken); err != nil {
		return c, err
	}
	if c.OAuth2.AccessTokenFile, err = o.FieldString(FieldOAuth2AccessFile); err != nil {
		return c, err
	}
	if c.OAuth2.IDTokenFile, err = o.FieldString(FieldOAuth2IDTokenFile); err != nil {
		return c, err
	}
	if c.OAuth2.Issuer, err = o.FieldString(FieldOAuth2IssuerIDName); err != nil {
		return c, err
	}
	if c.ReconnectAttempts, err = conf.FieldInt(FieldReconnectAttempts); err != nil {
		return c, err
	}
	if c.ReconnectInterval, err = conf.FieldDuration(FieldReconnectInterval); err != nil {
		return c, err
	}
	if c.ConnectRetries, err = conf.FieldInt(FieldConnectRetries); err != nil {
		return c, err
	}
	b := conf.Namespace(FieldConnectRetryBackoff)
	if c.ConnectBackoff.Initial, err = b.FieldDuration(FieldBackoffInitial); err != nil {
		return c, err
	}
	if c.ConnectBackoff.Multiplier, err = b.FieldFloat(FieldBackoffMultiplier); err != nil {
		return c, err
	}
	if c.ConnectBackoff.Max, err = b.FieldDuration(FieldBackoffMax); err != nil {
		return c, err
	}
	if c.ConnectTimeout, err = conf.FieldDuration(FieldConnectTimeout); err != nil {
		return c, err
	}
	return c, c.Validate()
}

// Validate reports contradictions that would make every connect fail; it
// repeats the lint rule for configs built in code.
func (c Config) Validate() error {
	var errs []error
	if len(c.URLs) == 0 {
		errs = append(errs, errors.New("urls: at least one broker url is required"))
	}
	for _, raw := range c.URLs {
		u := redacturl.URL(raw)
		switch {
		case redacturl.HasUserinfo(raw):
			errs = append(errs, fmt.Errorf("urls: %q: credentials (user:password@) in a Solace URL are not supported; give host and port only and set username and password (or password_file)", u))
		case strings.HasPrefix(u, "tcps://"):
			if !c.TLS.Enabled {
				errs = append(errs, fmt.Errorf("urls: %q uses tcps:// but tls.enabled is false", u))
			}
		case strings.HasPrefix(u, "tcp://"):
			if c.TLS.Enabled {
				errs = append(errs, fmt.Errorf("urls: %q uses tcp:// but tls.enabled is true", u))
			}
		default:
			errs = append(errs, fmt.Errorf("urls: %q must start with tcp:// or tcps://", u))
		}
	}
	switch c.AuthScheme {
	case AuthBasic, "":
		if c.Username == "" {
			errs = append(errs, errors.New("username: required by auth.scheme basic"))
		}
	case AuthClientCertificate:
		if c.TLS.ClientCertFile == "" || c.TLS.ClientKeyFile == "" {
			errs = append(errs, errors.New("auth.scheme client_certificate needs tls.client_certificate_file and tls.client_key_file"))
		}
		if !c.TLS.Enabled {
			errs = append(errs, errors.New("auth.scheme client_certificate needs tls.enabled: true"))
		}
	case AuthOAuth2:
		if c.OAuth2.AccessToken == "" && c.OAuth2.IDToken == "" && c.OAuth2.AccessTokenFile == "" && c.OAuth2.IDTokenFile == "" {
			errs = append(errs, errors.New("auth.scheme oauth2 needs auth.oauth2.access_token or auth.oauth2.id_token (or their _file fields)"))
		}
	default:
		errs = append(errs, fmt.Errorf("auth.scheme: unknown scheme %q", c.AuthScheme))
	}
	for _, p := range c.secretFiles() {
		if *p.value != "" && p.path != "" {
			errs = append(errs, secretfile.BothSetError(p.field, p.fileField))
		}
	}
	if c.ConnectRetries < 0 {
		errs = append(errs, errors.New("connect_retries: must be 0 or more"))
	}
	if c.ReconnectAttempts < -1 {
		errs = append(errs, errors.New("reconnect_attempts: must be -1, 0 or more"))
	}
	if c.ConnectBackoff.Multiplier < 1 {
		errs = append(errs, errors.New("connect_retry_backoff.multiplier: must be at least 1"))
	}
	return errors.Join(errs...)
}

// secretFile pairs a secret of Config with the file it may be read from.
type secretFile struct {
	field, fileField string
	value            *string
	path             string
}

// secretFiles lists the secrets of c that have a _file field, pointing into c.
func (c *Config) secretFiles() []secretFile {
	return []secretFile{
		{FieldPassword, FieldPasswordFile, &c.Password, c.PasswordFile},
		{FieldTLS + "." + FieldTLSClientKeyPassword, FieldTLS + "." + FieldTLSClientKeyPassFile, &c.TLS.ClientKeyPassword, c.TLS.ClientKeyPasswordFile},
		{FieldAuth + "." + FieldAuthOAuth2 + "." + FieldOAuth2AccessToken, FieldAuth + "." + FieldAuthOAuth2 + "." + FieldOAuth2AccessFile, &c.OAuth2.AccessToken, c.OAuth2.AccessTokenFile},
		{FieldAuth + "." + FieldAuthOAuth2 + "." + FieldOAuth2IDToken, FieldAuth + "." + FieldAuthOAuth2 + "." + FieldOAuth2IDTokenFile, &c.OAuth2.IDToken, c.OAuth2.IDTokenFile},
	}
}

// ResolveSecretFiles returns c with every secret whose _file field is set
// read from its file (one trailing newline trimmed) and the _file fields
// cleared. Connect calls it on every connect, so a rotated secret is picked
// up on reconnect. Errors name the field and the path, never the contents.
func (c Config) ResolveSecretFiles() (Config, error) {
	for _, p := range c.secretFiles() {
		if p.path == "" {
			continue
		}
		s, err := secretfile.Read(p.fileField, p.path)
		if err != nil {
			return c, err
		}
		*p.value = s
	}
	c.PasswordFile, c.TLS.ClientKeyPasswordFile = "", ""
	c.OAuth2.AccessTokenFile, c.OAuth2.IDTokenFile = "", ""
	return c, nil
}

// serviceProperties maps the config to Solace client properties. Connect
// retries are done by Connect itself (with backoff and ctx), so the client's
// own connection-retries is 0.
func (c Config) serviceProperties() config.ServicePropertyMap {
	p := config.ServicePropertyMap{
		config.TransportLayerPropertyHost:                             strings.Join(c.URLs, ","),
		config.ServicePropertyVPNName:                                 c.VPN,
		config.TransportLayerPropertyConnectionRetries:                0,
		config.TransportLayerPropertyReconnectionAttempts:             c.ReconnectAttempts,
		config.TransportLayerPropertyReconnectionAttemptsWaitInterval: c.ReconnectInterval,
		config.ServicePropertyGenerateSendTimestamps:                  c.SendTimestamps,
	}
	if c.ConnectTimeout > 0 {
		p[config.TransportLayerPropertyConnectionAttemptsTimeout] = c.ConnectTimeout
	}
	if c.KeepAliveInterval > 0 {
		p[config.TransportLayerPropertyKeepAliveInterval] = c.KeepAliveInterval
	}
	if c.KeepAliveLimit > 0 {
		p[config.TransportLayerPropertyKeepAliveWithoutResponseLimit] = c.KeepAliveLimit
	}
	if c.ClientName != "" {
		p[config.ClientPropertyName] = c.ClientName
	}
	switch c.AuthScheme {
	case AuthClientCertificate:
		p[config.AuthenticationPropertyScheme] = config.AuthenticationSchemeClientCertificate
		p[config.AuthenticationPropertySchemeSSLClientCertFile] = c.TLS.ClientCertFile
		p[config.AuthenticationPropertySchemeSSLClientPrivateKeyFile] = c.TLS.ClientKeyFile
		if c.TLS.ClientKeyPassword != "" {
			p[config.AuthenticationPropertySchemeClientCertPrivateKeyFilePassword] = c.TLS.ClientKeyPassword
		}
		if c.Username != "" {
			p[config.AuthenticationPropertySchemeClientCertUserName] = c.Username
		}
	case AuthOAuth2:
		p[config.AuthenticationPropertyScheme] = config.AuthenticationSchemeOAuth2
		if c.OAuth2.AccessToken != "" {
			p[config.AuthenticationPropertySchemeOAuth2AccessToken] = c.OAuth2.AccessToken
		}
		if c.OAuth2.IDToken != "" {
			p[config.AuthenticationPropertySchemeOAuth2OIDCIDToken] = c.OAuth2.IDToken
		}
		if c.OAuth2.Issuer != "" {
			p[config.AuthenticationPropertySchemeOAuth2IssuerIdentifier] = c.OAuth2.Issuer
		}
	default:
		p[config.AuthenticationPropertyScheme] = config.AuthenticationSchemeBasic
		p[config.AuthenticationPropertySchemeBasicUserName] = c.Username
		p[config.AuthenticationPropertySchemeBasicPassword] = c.Password
	}
	if c.TLS.Enabled {
		p[config.TransportLayerSecurityPropertyCertValidated] = c.TLS.ValidateServerCert
		p[config.TransportLayerSecurityPropertyCertRejectExpired] = c.TLS.ValidateDate
		p[config.TransportLayerSecurityPropertyCertValidateServername] = c.TLS.ValidateServerName
		if c.TLS.TrustStorePath != "" {
			p[config.TransportLayerSecurityPropertyTrustStorePath] = c.TLS.TrustStorePath
		}
	}
	return p
}
