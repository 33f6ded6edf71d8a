package solacetest

// This file is message-VPN configuration: whether a VPN is enabled and how
// its clients authenticate, as SEMP's msgVpns/{vpn} resource sets them.

import (
	"fmt"
	"maps"
	"slices"
)

// Basic authentication types (SEMP's authenticationBasicType).
const (
	// AuthBasicInternal checks the username and password against the
	// broker's users (Config.Users).
	AuthBasicInternal = "internal"
	// AuthBasicNone accepts any username and password.
	AuthBasicNone = "none"
)

// VPNConfig is a message VPN's configuration.
type VPNConfig struct {
	Name string
	// Enabled is false for a shut-down VPN: its clients are disconnected and
	// logins to it fail with 503 "Message VPN Unavailable".
	Enabled bool
	// BasicAuthEnabled allows basic (username and password) logins; when
	// false they fail with 401.
	BasicAuthEnabled bool
	// BasicAuthType is AuthBasicInternal or AuthBasicNone.
	BasicAuthType string
	// ClientCertAuthEnabled and ClientCertAllowAPIProvidedUsername govern
	// client-certificate login (certauth.go), OAuthEnabled OAuth login
	// (oauth.go), TLSAllowDowngradeToPlainText TLS downgrade (tls.go),
	// the Kerberos settings Kerberos login (kerberos.go).
	ClientCertAuthEnabled              bool
	ClientCertAllowAPIProvidedUsername bool
	TLSAllowDowngradeToPlainText       bool
	OAuthEnabled                       bool
	// OAuthDefaultProfile is the OAuth profile for logins that name no
	// issuer (no issuer identifier, no token with an "iss" claim).
	OAuthDefaultProfile              string
	KerberosAuthEnabled              bool
	KerberosAllowAPIProvidedUsername bool
}

// defaultVPNConfig is a VPN as the broker starts it.
func defaultVPNConfig(name string) VPNConfig {
	return VPNConfig{Name: name, Enabled: true, BasicAuthEnabled: true, BasicAuthType: AuthBasicInternal}
}

// VPN returns a message VPN's configuration.
func (b *Broker) VPN(vpn string) (VPNConfig, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	v, err := b.vpnLocked(vpn)
	if err != nil {
		return VPNConfig{}, err
	}
	return v.cfg, nil
}

// UpdateVPN changes a message VPN's configuration. Disabling a VPN
// disconnects its clients.
func (b *Broker) UpdateVPN(vpn string, update func(*VPNConfig)) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	v, err := b.vpnLocked(vpn)
	if err != nil {
		return err
	}
	cfg := v.cfg
	update(&cfg)
	cfg.Name = vpn
	if cfg.BasicAuthType != AuthBasicInternal && cfg.BasicAuthType != AuthBasicNone {
		return fmt.Errorf("%w: authenticationBasicType %q (want %q or %q)", ErrUnsupportedVPNSetting,
			cfg.BasicAuthType, AuthBasicInternal, AuthBasicNone)
	}
	if v.cfg.Enabled && !cfg.Enabled {
		for _, c := range v.clients {
			c.close()
		}
	}
	v.cfg = cfg
	b.log.Info("message VPN updated", "vpn", vpn, "enabled", cfg.Enabled, "basic_auth", cfg.BasicAuthType)
	return nil
}

// authenticateLocked checks a basic login to v and returns the refusal's
// status and text, or 0.
func (b *Broker) authenticateLocked(v *vpnState, user, pass string) (uint32, string) {
	switch {
	case !v.cfg.Enabled:
		return 503, "Message VPN Unavailable"
	case !v.cfg.BasicAuthEnabled:
		return 401, "Basic Authentication Is Shutdown"
	case v.cfg.BasicAuthType == AuthBasicNone:
		return 0, ""
	}
	if want, ok := b.cfg.Users[user]; ok && want == pass {
		return 0, ""
	}
	if u, ok := v.usernames[user]; ok && u.Enabled && u.Password == pass {
		return 0, ""
	}
	return 401, "Unauthorized"
}

// VPNs lists the broker's message VPNs, sorted.
func (b *Broker) VPNs() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Sorted(maps.Keys(b.vpns))
}
