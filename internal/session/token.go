package session

// This file keeps an OAuth session's token fresh. The Solace client logs in
// again by itself when it reconnects (reconnect_attempts), with the token it
// was given, so a token that expired meanwhile would end the session at the
// next network blip. A tokenKeeper per refreshable token (one read from a
// file, or fetched with the client_credentials grant) renews the token ahead
// of its expiry and whenever the client reports reconnecting, and hands it
// to the client with MessagingService.UpdateProperty, which applies it to
// the next login. The same oauth.Source serves SEMP's Bearer token.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/config"

	"github.com/connect-solace/connect-solace/internal/oauth"
)

// oauth2Field prefixes the auth.oauth2 fields named in errors.
const oauth2Field = "auth.oauth2."

// TokenSources are the refreshable OAuth tokens of a config. They are
// shared by every Connect of the config (and by SEMP), so that their cache
// and backoff outlive one session.
type TokenSources struct {
	Access *oauth.Source // access_token_file or the client_credentials grant
	ID     *oauth.Source // id_token_file
}

// PrepareTokenSources builds c.OAuth2.Sources for an oauth2 config with a
// token file or a grant; it leaves other configs alone. ConfigFromParsed
// calls it; Connect calls it for a config that has none yet.
func (c *Config) PrepareTokenSources() error {
	if c.AuthScheme != AuthOAuth2 || c.OAuth2.Sources != nil {
		return nil
	}
	var ts TokenSources
	var err error
	switch {
	case c.OAuth2.Grant != nil:
		g := *c.OAuth2.Grant
		g.SecretFileField = oauth2Field + "client_secret_file"
		if ts.Access, err = oauth.New(oauth.Config{Grant: &g}); err != nil {
			return fmt.Errorf("field auth.oauth2.token_url: %w", err)
		}
	case c.OAuth2.AccessTokenFile != "":
		if ts.Access, err = oauth.New(oauth.Config{File: c.OAuth2.AccessTokenFile, FileField: oauth2Field + "access_token_file"}); err != nil {
			return err
		}
	}
	if c.OAuth2.IDTokenFile != "" {
		if ts.ID, err = oauth.New(oauth.Config{File: c.OAuth2.IDTokenFile, FileField: oauth2Field + "id_token_file"}); err != nil {
			return err
		}
	}
	if ts.Access != nil || ts.ID != nil {
		c.OAuth2.Sources = &ts
	}
	return nil
}

// BearerToken returns a function giving the access token c logs in with,
// for SEMP's "Authorization: Bearer": renewed by the token source of a file
// or the grant (call PrepareTokenSources first), else the static token.
func BearerToken(c Config) (func(ctx context.Context) (string, error), error) {
	switch {
	case c.AuthScheme != AuthOAuth2:
		return nil, errors.New("a Bearer token needs auth.scheme: oauth2")
	case c.OAuth2.Sources != nil && c.OAuth2.Sources.Access != nil:
		src := c.OAuth2.Sources.Access
		return func(ctx context.Context) (string, error) {
			tok, err := src.Token(ctx)
			return tok.Value, err
		}, nil
	case c.OAuth2.AccessToken != "":
		tok := c.OAuth2.AccessToken
		return func(context.Context) (string, error) { return tok, nil }, nil
	default:
		return nil, errors.New("a Bearer token needs an access token: set auth.oauth2.access_token, access_token_file or token_url")
	}
}

// oauthProblems are the contradictions of OAuth's fields.
func (c Config) oauthProblems() []error {
	if c.AuthScheme != AuthOAuth2 {
		return nil
	}
	var errs []error
	if !c.TLS.Enabled {
		errs = append(errs, errors.New("field auth.scheme: oauth2 needs TLS (the Solace client refuses OAuth on plain connections): set tls.enabled: true and use tcps:// urls"))
	}
	g := c.OAuth2.Grant
	if g == nil {
		return errs
	}
	if g.ClientID == "" {
		errs = append(errs, errors.New("field auth.oauth2.client_id: required with auth.oauth2.token_url"))
	}
	if g.ClientSecret == "" && g.ClientSecretFile == "" {
		errs = append(errs, errors.New("field auth.oauth2.client_secret: required with auth.oauth2.token_url (or auth.oauth2.client_secret_file)"))
	}
	if g.ClientSecret != "" && g.ClientSecretFile != "" {
		errs = append(errs, errors.New("fields auth.oauth2.client_secret and auth.oauth2.client_secret_file: both are set; keep one (prefer client_secret_file in streams mode)"))
	}
	if c.OAuth2.AccessToken != "" || c.OAuth2.AccessTokenFile != "" {
		errs = append(errs, errors.New("field auth.oauth2.token_url: the client_credentials grant fetches the access token; remove auth.oauth2.access_token and auth.oauth2.access_token_file"))
	}
	return errs
}

// withTokens returns cfg with the refreshable tokens taken from their
// sources (cached while fresh) and their file fields cleared.
func (c Config) withTokens(ctx context.Context) (Config, error) {
	ts := c.OAuth2.Sources
	if ts == nil {
		return c, nil
	}
	for _, p := range []struct {
		src  *oauth.Source
		dst  *string
		file *string
	}{{ts.Access, &c.OAuth2.AccessToken, &c.OAuth2.AccessTokenFile}, {ts.ID, &c.OAuth2.IDToken, &c.OAuth2.IDTokenFile}} {
		if p.src == nil {
			continue
		}
		tok, err := p.src.Token(ctx)
		if err != nil {
			return c, err
		}
		if tok.Expired(time.Now()) {
			return c, fmt.Errorf("the OAuth token from %s expired at %s; renew it there", p.src.Describe(), tok.Expiry.UTC().Format(time.RFC3339))
		}
		*p.dst, *p.file = tok.Value, ""
	}
	return c, nil
}

// explainLogin says whether a refused OAuth login's token had expired (and
// could not be renewed) or the broker refused a token that was still valid.
func (c Config) explainLogin(err error) error {
	var ae *solace.AuthenticationError
	if !errors.As(err, &ae) {
		return err
	}
	if c.AuthScheme == AuthKerberos {
		return fmt.Errorf("the Kerberos login failed (the client reads its tickets from the credentials cache KRB5CCNAME or a client keytab KRB5_CLIENT_KTNAME, and the realm from KRB5_CONFIG; renew the ticket with kinit when it expired): %w", err)
	}
	if c.AuthScheme != AuthOAuth2 {
		return err
	}
	ts := c.OAuth2.Sources
	if ts == nil || ts.Access == nil && ts.ID == nil {
		return fmt.Errorf("the broker refused the OAuth login (a static token cannot be renewed; use a token file or the client_credentials grant): %w", err)
	}
	for _, src := range []*oauth.Source{ts.Access, ts.ID} {
		if src == nil {
			continue
		}
		tok, fetchErr := src.Current()
		src.Invalidate(tok) // the next connect fetches a new one
		if tok.Expired(time.Now()) {
			if fetchErr != nil {
				return fmt.Errorf("the OAuth token expired at %s and could not be renewed (%v): %w", tok.Expiry.UTC().Format(time.RFC3339), fetchErr, err)
			}
			return fmt.Errorf("the OAuth token expired at %s: %w", tok.Expiry.UTC().Format(time.RFC3339), err)
		}
		if !tok.Expiry.IsZero() {
			return fmt.Errorf("the broker refused the OAuth login with a token from %s valid until %s (check the broker's OAuth profile: issuer, audience, scope, signing keys): %w", src.Describe(), tok.Expiry.UTC().Format(time.RFC3339), err)
		}
	}
	return fmt.Errorf("the broker refused the OAuth login: %w", err)
}

// tokenKeeper renews one token of a session and hands it to the client.
type tokenKeeper struct {
	src   *oauth.Source
	prop  config.ServiceProperty
	svc   solace.MessagingService
	warn  func(format string, args ...any)
	kick  chan struct{}
	given string
}

// newKeepers makes a keeper per refreshable token of cfg, before the
// client's listeners can fire (they read s.keepers without a lock); cfg
// holds the tokens the session logs in with.
func (s *Session) newKeepers(cfg Config) {
	ts := cfg.OAuth2.Sources
	if ts == nil {
		return
	}
	for _, k := range []*tokenKeeper{
		{src: ts.Access, prop: config.AuthenticationPropertySchemeOAuth2AccessToken, given: cfg.OAuth2.AccessToken},
		{src: ts.ID, prop: config.AuthenticationPropertySchemeOAuth2OIDCIDToken, given: cfg.OAuth2.IDToken},
	} {
		if k.src == nil {
			continue
		}
		k.svc, k.warn, k.kick = s.svc, s.log.Warnf, make(chan struct{}, 1)
		s.keepers = append(s.keepers, k)
	}
}

// startKeepers runs the keepers of a connected session until it is down.
func (s *Session) startKeepers() {
	for _, k := range s.keepers {
		go k.run(s.down)
	}
}

// kickTokens asks every keeper to renew now; the client is reconnecting.
// It does not block (listeners run on the client's event goroutine).
func (s *Session) kickTokens() {
	for _, k := range s.keepers {
		select {
		case k.kick <- struct{}{}:
		default:
		}
	}
}

// minRenewGap keeps a reconnect storm from fetching a token per attempt: a
// token fetched less than this long ago is handed out again.
const minRenewGap = time.Second

func (k *tokenKeeper) run(stop <-chan struct{}) {
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		cur, lastErr := k.src.Current()
		at := oauth.RenewAt(cur)
		if r := k.src.RetryAt(); lastErr != nil && r.After(at) {
			at = r
		}
		t.Reset(max(time.Until(at), 10*time.Millisecond))
		kicked := false
		select {
		case <-stop:
			return
		case <-k.kick:
			kicked = true
		case <-t.C:
		}
		if kicked && lastErr != nil && time.Now().Before(k.src.RetryAt()) {
			continue // the failure was reported; the timer retries after the backoff
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		var tok oauth.Token
		var err error
		if kicked && time.Since(cur.Fetched) >= minRenewGap {
			tok, err = k.src.Renew(ctx)
		} else {
			tok, err = k.src.Token(ctx)
		}
		cancel()
		if err != nil {
			k.warn("Renewing the OAuth token failed, the client keeps the %v: %v", cur, err)
			continue
		}
		if tok.Value == k.given {
			continue
		}
		if err := k.svc.UpdateProperty(k.prop, tok.Value); err != nil {
			var ise *solace.IllegalStateError
			if errors.As(err, &ise) { // the session ended
				return
			}
			k.warn("Handing the renewed OAuth token to the Solace client failed: %v", err)
			continue
		}
		k.given = tok.Value
	}
}
