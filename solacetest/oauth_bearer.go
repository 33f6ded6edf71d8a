package solacetest

// This file is OAuth for SEMP and the clock skew of OAuth checks. As on
// PubSub+ with a broker-level OAuth profile enabled for SEMP, a SEMP
// request may carry an access token ("Authorization: Bearer <JWT>") in
// place of basic auth; the broker validates it like a resource-server
// profile validates a login's access token (signature from the profile's
// JWKS, typ, iss, aud, scope, expiry). Bearer requests get no session
// cookie: every request carries its token.

import (
	"context"
	"errors"
	"time"

	"github.com/go-jose/go-jose/v4/jwt"
)

// SetSEMPOAuthProfile makes SEMP accept Bearer access tokens checked by p
// (its resource-server checks; Role is taken as resource-server). A nil p
// turns Bearer tokens off again.
func (b *Broker) SetSEMPOAuthProfile(p *OAuthProfile) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if p == nil {
		b.oauthLocked().sempProfile = nil
		return nil
	}
	cp := *p
	cp.Role = OAuthRoleResourceServer
	if cp.Name == "" {
		cp.Name = "semp"
	}
	if err := cp.validate(); err != nil {
		return err
	}
	b.oauthLocked().sempProfile = &cp
	return nil
}

// SetOAuthClockSkew sets the clock skew allowed on tokens' exp, nbf and
// iat (a minute by default); tests of token expiry set it to 0.
func (b *Broker) SetOAuthClockSkew(d time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.oauthLocked().skew = d
}

// sempBearer checks a SEMP request's Bearer token.
func (b *Broker) sempBearer(ctx context.Context, raw string) error {
	b.mu.Lock()
	o := b.oauthLocked()
	prof, skew := o.sempProfile, o.skew
	roots := o.domainRootsLocked()
	b.mu.Unlock()
	if prof == nil || !prof.Enabled {
		return errors.New("SEMP OAuth is not enabled")
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	tok, err := jwt.ParseSigned(raw, signatureAlgs)
	if err != nil {
		return err
	}
	claims, extra, err := o.verifyToken(ctx, prof, roots, tok)
	if err != nil {
		b.log.Info("SEMP Bearer token refused", "reason", err.Error())
		return err
	}
	if err := checkClaims(prof, tok, claims, extra, skew); err != nil {
		b.log.Info("SEMP Bearer token refused", "reason", err.Error())
		return err
	}
	return nil
}
