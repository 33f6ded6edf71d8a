package solacetest

// This file is Kerberos login. Facts from the Go client's own traffic
// (v1.10.1, CCSMP 7.33, with a ticket from MIT krb5 1.20): a client that
// logs in with AUTHENTICATION_SCHEME_GSS_KRB sets ClientCtrl p17 = 0x02 and
// sends the GSS-API initial context token of the Kerberos mechanism (RFC
// 1964/4121: [APPLICATION 0] { OID 1.2.840.113554.1.2.2, tok_id 01 00,
// AP-REQ }) as extended parameter 0x28 of the login's P31, a variable-length
// entry (format 6). Its service ticket is for <instance>/<host>@REALM, the
// instance name being the client's kerberos instance-name property
// (default "solace") and the host the one of the URL as written (with
// rdns and hostname canonicalisation off in krb5.conf). An API-provided
// username travels as the usual SMF username parameter. The AP-REQ asks
// for mutual authentication: the client refuses a 200 login response
// without a token ("empty token rejected by API"), so the broker answers
// with the GSS-API token of an AP-REP (tok_id 02 00; EncAPRepPart with the
// authenticator's ctime, cusec and sequence number, encrypted with the
// ticket's session key, key usage 12) as extended parameter 0x28 of the
// response's P31.
//
// As on PubSub+, the VPN must enable Kerberos (authenticationKerberosEnabled;
// otherwise 403 "Kerberos Authentication Is Shutdown": the client maps that
// text to KERBEROS_AUTHENTICATION_IS_SHUTDOWN with 403, not with 401), and
// the broker
// verifies the AP-REQ against its keytab (EnableKerberos, the devbroker's
// --kerberos-keytab) with gokrb5: ticket decrypted with the service key,
// authenticator, clock skew, replay. The client username is the client
// principal's name without the realm, or the API-provided username when the
// VPN allows it (authenticationKerberosAllowApiProvidedUsernameEnabled).
// Any failure is 401 "Unauthorized", which the client reports as a login
// failure.

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/jcmturner/gofork/encoding/asn1"
	"github.com/jcmturner/gokrb5/v8/asn1tools"
	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/iana/msgtype"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/service"
	"github.com/jcmturner/gokrb5/v8/spnego"
	"github.com/jcmturner/gokrb5/v8/types"
)

// Kerberos login on the wire.
const (
	authSchemeGSSKrb = 0x02
	extGSSToken      = 0x28
)

// kerberosShutdownText is the refusal of a Kerberos login to a VPN that
// does not enable Kerberos; the client maps it to
// KerberosAuthenticationIsShutdown.
const kerberosShutdownText = "Kerberos Authentication Is Shutdown"

// KerberosConfig is the broker's Kerberos service side.
type KerberosConfig struct {
	// Keytab holds the keys of the service principal(s) clients get
	// tickets for.
	Keytab *keytab.Keytab
	// Principal, when set, is the one service principal accepted (e.g.
	// "solace/localhost"); empty accepts any principal of the keytab the
	// ticket names.
	Principal string
}

// LoadKerberosKeytab reads a keytab file (MIT format).
func LoadKerberosKeytab(path string) (*keytab.Keytab, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading keytab: %w", err)
	}
	kt := keytab.New()
	if err := kt.Unmarshal(b); err != nil {
		return nil, fmt.Errorf("keytab %s: %w", path, err)
	}
	return kt, nil
}

// EnableKerberos lets clients log in with Kerberos tickets for the keytab's
// service principal; a VPN must also enable Kerberos
// (VPNConfig.KerberosAuthEnabled).
func (b *Broker) EnableKerberos(cfg KerberosConfig) error {
	if cfg.Keytab == nil {
		return errors.New("kerberos: no keytab")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.krb = &cfg
	return nil
}

// kerberosLogin checks a Kerberos login's GSS token. It returns a refusal
// (code != 0) or the client principal's name. It runs outside Broker.mu
// apart from copying the configuration.
func (b *Broker) kerberosLogin(vpn string, f *frame) oauthResult {
	b.mu.Lock()
	cfg := b.krb
	v, found := b.vpns[vpn]
	enabled := found && v.cfg.KerberosAuthEnabled
	b.mu.Unlock()
	deny, refused, ok := b.tokenLogin("Kerberos", vpn, found, enabled, oauthResult{code: 403, text: kerberosShutdownText})
	if !ok {
		return refused
	}
	if cfg == nil {
		return deny("the broker has no keytab")
	}
	var token []byte
	if raw, ok := f.param(pExtendedStream); ok {
		if ext, err := decodeExtStream(raw); err == nil {
			for _, e := range ext {
				if e.Type == extGSSToken {
					token = e.Value
				}
			}
		}
	}
	if token == nil {
		return deny("no GSS-API token in the login")
	}
	var kt spnego.KRB5Token
	if err := kt.Unmarshal(token); err != nil {
		return deny("GSS-API token: %v", err)
	}
	if !kt.IsAPReq() {
		return deny("the GSS-API token is not an AP-REQ")
	}
	sname := kt.APReq.Ticket.SName.PrincipalNameString()
	if cfg.Principal != "" && sname != cfg.Principal {
		return deny("ticket for %q, the broker is %q", sname, cfg.Principal)
	}
	settings := service.NewSettings(cfg.Keytab, service.DecodePAC(false), service.KeytabPrincipal(sname))
	ok, creds, err := service.VerifyAPREQ(&kt.APReq, settings)
	if err != nil || !ok {
		return deny("ticket for %q: %v", sname, err)
	}
	rep, err := gssAPRep(&kt.APReq)
	if err != nil {
		return deny("building the AP-REP: %v", err)
	}
	return oauthResult{user: strings.TrimSuffix(creds.UserName(), "@"+creds.Domain()), gssReply: rep}
}

// encAPRepPart is RFC 4120's EncAPRepPart without the optional subkey.
type encAPRepPart struct {
	CTime     time.Time `asn1:"generalized,explicit,tag:0"`
	Cusec     int       `asn1:"explicit,tag:1"`
	SeqNumber int64     `asn1:"explicit,optional,tag:3"`
}

// apRep is RFC 4120's AP-REP.
type apRep struct {
	PVNO    int                 `asn1:"explicit,tag:0"`
	MsgType int                 `asn1:"explicit,tag:1"`
	EncPart types.EncryptedData `asn1:"explicit,tag:2"`
}

// gssAPRep builds the GSS-API token of the AP-REP that answers a verified
// AP-REQ (VerifyAPREQ decrypted its ticket and authenticator), for mutual
// authentication. Encryption is gokrb5's.
func gssAPRep(req *messages.APReq) ([]byte, error) {
	a := req.Authenticator
	part, err := asn1.Marshal(encAPRepPart{CTime: a.CTime.UTC(), Cusec: a.Cusec, SeqNumber: a.SeqNumber})
	if err != nil {
		return nil, err
	}
	ed, err := crypto.GetEncryptedData(asn1tools.AddASNAppTag(part, 27), req.Ticket.DecryptedEncPart.Key, keyusage.AP_REP_ENCPART, 0)
	if err != nil {
		return nil, err
	}
	rep, err := asn1.Marshal(apRep{PVNO: 5, MsgType: msgtype.KRB_AP_REP, EncPart: ed})
	if err != nil {
		return nil, err
	}
	oid, err := asn1.Marshal(gssapi.OIDKRB5.OID())
	if err != nil {
		return nil, err
	}
	tok := append(oid, 0x02, 0x00) // tok_id KRB_AP_REP
	tok = append(tok, asn1tools.AddASNAppTag(rep, 15)...)
	return asn1tools.AddASNAppTag(tok, 0), nil
}
