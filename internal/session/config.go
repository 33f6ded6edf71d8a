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
	"solace.dev/go/messaging/pkg/solace/config"

	"github.com/connect-solace/connect-solace/internal/oauth"
	redacturl "github.com/connect-solace/connect-solace/internal/redact"
	"github.com/connect-solace/connect-solace/internal/secretfile"
)

// Authentication schemes accepted in auth.scheme.
const (
	AuthBasic             = "basic"
	AuthClientCertificate = "client_certificate"
	AuthOAuth2            = "oauth2"
	AuthKerberos          = "kerberos"
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
	// Grant, when set, fetches the access token with the client_credentials
	// grant (token.go).
	Grant *oauth.ClientCredentials
	// Sources renew the tokens of a file or the grant; PrepareTokenSources
	// builds them.
	Sources *TokenSources
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
	// KerberosServiceName is the first part of the broker's service
	// principal, <name>/<host>@REALM, for auth.scheme kerberos; empty
	// means the client's default, "solace".
	KerberosServiceName string

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
	// CompressionLevel is the client's transport compression, 1 (fastest)
	// to 9 (smallest), or 0 for none. A compressing client speaks to the
	// broker's compressed port (55003 on PubSub+), which its URLs must
	// name.
	CompressionLevel int
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

// Validate reports every contradiction that would make each connect fail,
// each naming the field and the fix. It is the one home of these rules: the
// spec's lint rule reports the same list through the solace_connection_lint
// Bloblang method (internal/solacecfg), and solacecfg.ConfigFromParsed and
// Connect call Validate for configs that were not linted or were built in
// code.
func (c Config) Validate() error { return errors.Join(c.Problems()...) }

// Problems is Validate's list, one error per contradiction, as lint reports
// them.
func (c Config) Problems() []error {
	var errs []error
	if len(c.URLs) == 0 {
		errs = append(errs, errors.New("field urls: at least one broker url is required, e.g. urls: [ tcp://localhost:55555 ]"))
	}
	var hasTCP, hasTCPS bool
	for i, raw := range c.URLs {
		u := redacturl.URL(raw)
		switch {
		case redacturl.HasUserinfo(raw):
			errs = append(errs, fmt.Errorf("field urls[%d]: credentials (user:password@) in a Solace URL are not supported, in %q; give host and port only and set username and password (or password_file)", i, u))
		case strings.HasPrefix(u, "tcps://"):
			hasTCPS = true
		case strings.HasPrefix(u, "tcp://"):
			hasTCP = true
		default:
			errs = append(errs, fmt.Errorf("field urls: %q must start with tcp:// or tcps://", u))
		}
	}
	if c.CompressionLevel < 0 || c.CompressionLevel > 9 {
		errs = append(errs, fmt.Errorf("field compression_level: must be 0 (off) to 9, got %d", c.CompressionLevel))
	}
	if hasTCPS && !c.TLS.Enabled {
		errs = append(errs, errors.New("field urls: tcps:// needs TLS: set tls.enabled: true"))
	}
	if hasTCP && c.TLS.Enabled {
		errs = append(errs, errors.New("field tls.enabled: true but urls use tcp://: use tcps:// urls or set tls.enabled: false"))
	}
	if c.TLS.Enabled && c.TLS.ValidateServerCert && c.TLS.TrustStorePath == "" {
		errs = append(errs, errors.New("field tls.trust_store_path: required to validate the broker certificate; set it to a directory of CA PEM files or set tls.validate_server_cert: false (tests only)"))
	}
	if (c.TLS.ClientCertFile == "") != (c.TLS.ClientKeyFile == "") {
		errs = append(errs, errors.New("fields tls.client_certificate_file and tls.client_key_file: set both or neither"))
	}
	switch c.AuthScheme {
	case AuthBasic, "":
		if c.Username == "" {
			errs = append(errs, errors.New("field username: required by auth.scheme basic"))
		}
	case AuthClientCertificate:
		if c.TLS.ClientCertFile == "" || c.TLS.ClientKeyFile == "" {
			errs = append(errs, errors.New("field auth.scheme: client_certificate needs tls.client_certificate_file and tls.client_key_file"))
		}
		if !c.TLS.Enabled {
			errs = append(errs, errors.New("field auth.scheme: client_certificate needs TLS: set tls.enabled: true and use tcps:// urls"))
		}
	case AuthOAuth2:
		if c.OAuth2.AccessToken == "" && c.OAuth2.IDToken == "" && c.OAuth2.AccessTokenFile == "" && c.OAuth2.IDTokenFile == "" && c.OAuth2.Grant == nil {
			errs = append(errs, errors.New("field auth.scheme: oauth2 needs auth.oauth2.access_token or auth.oauth2.id_token (or their _file fields), or auth.oauth2.token_url for the client_credentials grant"))
		}
		errs = append(errs, c.oauthProblems()...)
	case AuthKerberos:
	default:
		errs = append(errs, fmt.Errorf("field auth.scheme: unknown scheme %q", c.AuthScheme))
	}
	for _, p := range c.secretFiles() {
		if *p.value != "" && p.path != "" {
			errs = append(errs, secretfile.BothSetError(p.field, p.fileField))
		}
	}
	if c.ConnectBackoff.Multiplier < 1 {
		errs = append(errs, errors.New("field connect_retry_backoff.multiplier: must be at least 1"))
	}
	if c.ConnectRetries < 0 {
		errs = append(errs, errors.New("field connect_retries: must be 0 or more"))
	}
	if c.ReconnectAttempts < -1 {
		errs = append(errs, errors.New("field reconnect_attempts: must be -1 (forever), 0 or more"))
	}
	return errs
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
		{"password", "password_file", &c.Password, c.PasswordFile},
		{"tls.client_key_password", "tls.client_key_password_file", &c.TLS.ClientKeyPassword, c.TLS.ClientKeyPasswordFile},
		{"auth.oauth2.access_token", "auth.oauth2.access_token_file", &c.OAuth2.AccessToken, c.OAuth2.AccessTokenFile},
		{"auth.oauth2.id_token", "auth.oauth2.id_token_file", &c.OAuth2.IDToken, c.OAuth2.IDTokenFile},
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
	if c.CompressionLevel > 0 {
		p[config.TransportLayerPropertyCompressionLevel] = c.CompressionLevel
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
	case AuthKerberos:
		p[config.AuthenticationPropertyScheme] = config.AuthenticationSchemeKerberos
		if c.KerberosServiceName != "" {
			p[config.AuthenticationPropertySchemeKerberosInstanceName] = c.KerberosServiceName
		}
		if c.Username != "" {
			p[config.AuthenticationPropertySchemeKerberosUserName] = c.Username
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
