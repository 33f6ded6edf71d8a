package solacetest

// This file is client-certificate login and the objects it needs: the
// broker's client certificate authorities (SEMP's clientCertAuthorities) and
// a VPN's client usernames (SEMP's msgVpns/{vpn}/clientUsernames). A client
// that logs in over TLS with a certificate and no password is
// authenticated by that certificate when the VPN enables it: the chain must
// lead to a configured authority, and the username is the certificate's
// common name, or the one the client gave when the VPN allows that.

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"maps"
	"time"
)

// ClientUsername is a VPN's client-username object. With basic
// authentication "internal", an enabled client username with a password
// can log in, as can the users of Config.Users.
type ClientUsername struct {
	Name, Password string
	Enabled        bool
}

// AddCertAuthority adds a trusted authority for client certificates from
// PEM (one or more certificates).
func (b *Broker) AddCertAuthority(name, pemCerts string) error {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(pemCerts)) {
		return fmt.Errorf("client certificate authority %q: certContent holds no PEM certificate", name)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return addNamed(b.certAuthorities, name, pemCerts, ErrCertAuthorityExists, "")
}

// RemoveCertAuthority removes a client certificate authority.
func (b *Broker) RemoveCertAuthority(name string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return deleteNamed(b.certAuthorities, name, ErrUnknownCertAuthority, "")
}

// CertAuthorities returns the authorities' PEM by name.
func (b *Broker) CertAuthorities() map[string]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return maps.Clone(b.certAuthorities)
}

// CreateClientUsername adds a client username to a VPN.
func (b *Broker) CreateClientUsername(vpn string, u ClientUsername) error {
	if u.Name == "" {
		return errors.New("creating client username: empty name")
	}
	return changeInVPN(b, vpn, func(v *vpnState) error {
		return addNamed(v.usernames, u.Name, u, ErrClientUsernameExists, vpn)
	})
}

// DeleteClientUsername removes a client username.
func (b *Broker) DeleteClientUsername(vpn, name string) error {
	return changeInVPN(b, vpn, func(v *vpnState) error {
		return deleteNamed(v.usernames, name, ErrUnknownClientUsername, vpn)
	})
}

// ClientUsernames lists a VPN's client usernames, sorted by name.
func (b *Broker) ClientUsernames(vpn string) ([]ClientUsername, error) {
	return inVPN(b, vpn, func(v *vpnState) ([]ClientUsername, error) {
		return sortedValues(v.usernames, same), nil
	})
}

// peerCertificates returns the client's TLS certificate chain, if any.
func peerCertificates(c *conn) []*x509.Certificate {
	var tc *tls.Conn
	switch nc := c.nc.(type) {
	case *tls.Conn:
		tc = nc
	case *wsConn:
		tc, _ = nc.ws.UnderlyingConn().(*tls.Conn)
	}
	if tc == nil {
		return nil
	}
	return tc.ConnectionState().PeerCertificates
}

// certLoginLocked authenticates a client-certificate login and returns the
// refusal's status and text, or 0 and the client username.
func (b *Broker) certLoginLocked(v *vpnState, chain []*x509.Certificate, apiUser string) (uint32, string, string) {
	if !v.cfg.ClientCertAuthEnabled {
		return 401, "Client Certificate Authentication Is Shutdown", ""
	}
	roots := x509.NewCertPool()
	for _, p := range b.certAuthorities {
		roots.AppendCertsFromPEM([]byte(p))
	}
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	leaf := chain[0]
	now := time.Now()
	if now.After(leaf.NotAfter) {
		return 401, "Certificate Expired", ""
	}
	if now.Before(leaf.NotBefore) {
		return 401, "Certificate Not Yet Valid", ""
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
		b.log.Info("client certificate not trusted", "subject", leaf.Subject.String(), "error", err)
		return 401, "Untrusted Certificate", ""
	}
	user := leaf.Subject.CommonName
	if apiUser != "" && v.cfg.ClientCertAllowAPIProvidedUsername {
		user = apiUser
	}
	return 0, "", user
}
