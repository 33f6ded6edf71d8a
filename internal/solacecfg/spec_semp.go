package solacecfg

// This file is the semp object, SEMPv2 management access to the broker: its
// fields, their reading into the SEMP client's config, their rule, and the
// building of clients from them. A plugin that manages or inspects the
// broker adds the object with SEMPField and says what it needs SEMP for.

import (
	"fmt"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connect-solace/connect-solace/internal/confread"
	"github.com/connect-solace/connect-solace/internal/secretfile"
	"github.com/connect-solace/connect-solace/internal/semp"
	"github.com/connect-solace/connect-solace/internal/session"
)

// SEMPField is the optional semp object. description says what the plugin
// needs SEMP for, username what the SEMP user must be allowed, vpn which VPN
// the plugin manages.
func SEMPField(description, username, vpn string) *service.ConfigField {
	return service.NewObjectField(FieldSEMP,
		service.NewURLField(FieldSEMPURL).
			Description("The broker's SEMP endpoint, e.g. `http://broker:8080`."),
		service.NewStringField(FieldSEMPUsername).
			Description(username).
			Default("admin"),
		secretfile.PasswordField(FieldSEMPPassword, "The SEMP password."),
		secretfile.PasswordFileField(FieldSEMPPasswordFile, "the SEMP password", "/var/run/secrets/semp/password"),
		service.NewStringField(FieldSEMPVPN).
			Description(vpn).
			Default(""),
		service.NewTLSToggledField(FieldSEMPTLS),
		service.NewBoolField(FieldSEMPOAuth2).
			Description("Authenticate SEMP requests with the connection's OAuth access token (`auth.scheme: oauth2` with `access_token`, `access_token_file` or `token_url`), sent as `Authorization: Bearer`, in place of `username` and `password`. The token is the one the connection logs in with, renewed the same way; the broker must accept it for SEMP (an OAuth profile enabled for SEMP).").
			Default(false).Advanced(),
	).Description(description).
		Optional()
}

// SEMP is the semp object as written.
type SEMP struct {
	// Client holds url, username, password and tls.
	Client       semp.Config
	PasswordFile string
	VPN          string // "" means the connection's
	OAuth2       bool
}

// ReadSEMP reads the semp object of conf; nil when it is not set. It checks
// no rule; see Problems.
func ReadSEMP(conf *service.ParsedConfig) (*SEMP, error) {
	if !conf.Contains(FieldSEMP) {
		return nil, nil
	}
	s := &SEMP{}
	r := confread.New(conf.Namespace(FieldSEMP))
	r.String(&s.Client.URL, FieldSEMPURL)
	r.String(&s.Client.Username, FieldSEMPUsername)
	r.String(&s.Client.Password, FieldSEMPPassword)
	r.String(&s.PasswordFile, FieldSEMPPasswordFile)
	r.String(&s.VPN, FieldSEMPVPN)
	r.Bool(&s.OAuth2, FieldSEMPOAuth2)
	if err := r.Err(); err != nil {
		return nil, err
	}
	tlsConf, on, err := conf.Namespace(FieldSEMP).FieldTLSToggled(FieldSEMPTLS)
	if err != nil {
		return nil, err
	}
	if on {
		s.Client.TLS = tlsConf
	}
	return s, nil
}

// URL is semp.url; "" when s is nil.
func (s *SEMP) URL() string {
	if s == nil {
		return ""
	}
	return s.Client.URL
}

// Problems lists the contradictions among the fields; none when s is nil.
func (s *SEMP) Problems() []error {
	if s != nil && s.Client.Password != "" && s.PasswordFile != "" {
		return []error{secretfile.BothSetError(FieldSEMP+"."+FieldSEMPPassword, FieldSEMP+"."+FieldSEMPPasswordFile)}
	}
	return nil
}

// SEMPAccess is SEMP access to the broker of one connection, which builds
// the SEMP clients.
type SEMPAccess struct {
	conf         semp.Config
	passwordFile string
	// VPN is the VPN to manage: semp.vpn, or the connection's.
	VPN string
}

// Access is SEMP access for the connection conn: nil when s is nil or has no
// url. With oauth2 it authenticates with conn's access token.
func (s *SEMP) Access(conn session.Config) (*SEMPAccess, error) {
	if s.URL() == "" {
		return nil, nil
	}
	a := &SEMPAccess{conf: s.Client, passwordFile: s.PasswordFile, VPN: s.VPN}
	if a.VPN == "" {
		a.VPN = conn.VPN
	}
	if s.OAuth2 {
		bearer, err := session.BearerToken(conn)
		if err != nil {
			return nil, fmt.Errorf("field %s.%s: %w", FieldSEMP, FieldSEMPOAuth2, err)
		}
		a.conf.BearerToken, a.conf.Username, a.conf.Password, a.passwordFile = bearer, "", "", ""
	}
	return a, nil
}

// PasswordFromFile reports whether the password is read from a file: then
// every connect builds a new client, so a rotated password is used after a
// reconnect.
func (a *SEMPAccess) PasswordFromFile() bool { return a.passwordFile != "" }

// NewClient builds a SEMP client, reading the password file if one is set.
func (a *SEMPAccess) NewClient() (*semp.Client, error) {
	c := a.conf
	var err error
	if c.Password, err = secretfile.Resolve(c.Password, FieldSEMP+"."+FieldSEMPPasswordFile, a.passwordFile); err != nil {
		return nil, err
	}
	cli, err := semp.New(c)
	if err != nil {
		return nil, fmt.Errorf("field %s: %w", FieldSEMP, err)
	}
	return cli, nil
}
