package solacetest

// This file is the TLS transport: server certificates from PEM files, the
// TLS details the client monitor reports, and TLS downgrade to plain text
// after the login.

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"unsafe"
)

// LoadTLSCertificate reads a server certificate and its private key from PEM
// files, which may be one file holding both, as PubSub+'s server
// certificate files do. An encrypted key (legacy "Proc-Type: 4,ENCRYPTED"
// PEM) is decrypted with passphrase.
func LoadTLSCertificate(certFile, keyFile, passphrase string) (tls.Certificate, error) {
	if keyFile == "" {
		keyFile = certFile
	}
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("reading the TLS certificate: %w", err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("reading the TLS key: %w", err)
	}
	var certs, key []byte
	for rest := certPEM; ; {
		var blk *pem.Block
		if blk, rest = pem.Decode(rest); blk == nil {
			break
		}
		if blk.Type == "CERTIFICATE" {
			certs = append(certs, pem.EncodeToMemory(blk)...)
		}
	}
	for rest := keyPEM; ; {
		var blk *pem.Block
		if blk, rest = pem.Decode(rest); blk == nil {
			break
		}
		if blk.Type != "CERTIFICATE" {
			//lint:ignore SA1019 PubSub+ certificate files use legacy PEM encryption; there is no replacement in the standard library.
			if x509.IsEncryptedPEMBlock(blk) { //nolint:staticcheck // see above
				if passphrase == "" {
					return tls.Certificate{}, fmt.Errorf("the TLS key in %s is encrypted: give its passphrase", keyFile)
				}
				der, err := x509.DecryptPEMBlock(blk, []byte(passphrase)) //nolint:staticcheck // see above
				if err != nil {
					return tls.Certificate{}, fmt.Errorf("decrypting the TLS key in %s: %w", keyFile, err)
				}
				blk = &pem.Block{Type: blk.Type, Bytes: der}
			}
			key = pem.EncodeToMemory(blk)
			break
		}
	}
	if certs == nil {
		return tls.Certificate{}, fmt.Errorf("no certificate in %s", certFile)
	}
	if key == nil {
		return tls.Certificate{}, errors.New("no private key in " + keyFile)
	}
	cert, err := tls.X509KeyPair(certs, key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("loading the TLS certificate and key: %w", err)
	}
	return cert, nil
}

// tlsInfo describes a client connection's TLS session as SEMP reports it
// (tlsVersion, tlsCipherDescription), or zero values for plain connections.
func tlsInfo(nc net.Conn) (version, cipher string) {
	var tc *tls.Conn
	switch c := nc.(type) {
	case *tls.Conn:
		tc = c
	case *wsConn:
		tc, _ = c.ws.UnderlyingConn().(*tls.Conn)
	}
	if tc == nil {
		return "", ""
	}
	st := tc.ConnectionState()
	switch st.Version {
	case tls.VersionTLS10:
		version = "TLSv1"
	case tls.VersionTLS11:
		version = "TLSv1.1"
	case tls.VersionTLS12:
		version = "TLSv1.2"
	case tls.VersionTLS13:
		version = "TLSv1.3"
	}
	name := tls.CipherSuiteName(st.CipherSuite)
	if o, ok := opensslCipherNames[name]; ok {
		name = o
	}
	return version, name
}

// opensslCipherNames maps Go's (IANA) cipher-suite names to the OpenSSL
// names PubSub+ reports; TLS 1.3 suites have the same name in both.
var opensslCipherNames = map[string]string{
	"TLS_RSA_WITH_AES_128_CBC_SHA":                  "AES128-SHA",
	"TLS_RSA_WITH_AES_256_CBC_SHA":                  "AES256-SHA",
	"TLS_RSA_WITH_AES_128_CBC_SHA256":               "AES128-SHA256",
	"TLS_RSA_WITH_AES_128_GCM_SHA256":               "AES128-GCM-SHA256",
	"TLS_RSA_WITH_AES_256_GCM_SHA384":               "AES256-GCM-SHA384",
	"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA":            "ECDHE-RSA-AES128-SHA",
	"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA":            "ECDHE-RSA-AES256-SHA",
	"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256":         "ECDHE-RSA-AES128-SHA256",
	"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256":         "ECDHE-RSA-AES128-GCM-SHA256",
	"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384":         "ECDHE-RSA-AES256-GCM-SHA384",
	"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256":   "ECDHE-RSA-CHACHA20-POLY1305",
	"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA":          "ECDHE-ECDSA-AES128-SHA",
	"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA":          "ECDHE-ECDSA-AES256-SHA",
	"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256":       "ECDHE-ECDSA-AES128-SHA256",
	"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256":       "ECDHE-ECDSA-AES128-GCM-SHA256",
	"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384":       "ECDHE-ECDSA-AES256-GCM-SHA384",
	"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-ECDSA-CHACHA20-POLY1305",
}

// ServerTLSConfig is a TLS server configuration for cert that accepts what
// PubSub+ accepts: TLS 1.2 up to maxVersion (tls.VersionTLS12 or
// tls.VersionTLS13; 0 means 1.3) and every cipher suite Go implements
// without known weaknesses, plus the AES suites with RSA key exchange, which
// Go leaves out by default.
func ServerTLSConfig(cert tls.Certificate, maxVersion uint16) *tls.Config {
	var suites []uint16
	for _, s := range tls.CipherSuites() {
		suites = append(suites, s.ID)
	}
	// Go counts RSA key exchange as insecure (no forward secrecy), but
	// PubSub+ offers the AES ones and Solace clients may ask for them.
	for _, s := range tls.InsecureCipherSuites() {
		if strings.HasPrefix(s.Name, "TLS_RSA_WITH_AES_") {
			suites = append(suites, s.ID)
		}
	}
	// Client certificates are requested, not required: basic logins over
	// TLS present none, and the broker checks those that come at login
	// against its client certificate authorities (certauth.go).
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, MaxVersion: maxVersion,
		CipherSuites: suites, ClientAuth: tls.RequestClientCert}
}

// ---- TLS downgrade to plain text ----
//
// A client that logs in over TLS with downgrade on (the Go client's
// Downgradable transport security) says so in its login (ClientCtrl
// parameter 21, value 0). When the VPN allows it
// (tlsAllowDowngradeToPlainTextEnabled), the broker answers the login over
// TLS, then ends TLS with a close_notify alert each way, and the session goes
// on in plain text over the same TCP connection. When the VPN does not allow
// it, the login is refused.

// connPlainText is ClientCtrl parameter 21's value asking for plain text
// after the login (compress.go has the parameter and its value for
// compression).
const connPlainText = 0

// downgradeRefusedText is the refusal when the VPN does not allow downgrade;
// PubSub+'s exact wording is not known here.
const downgradeRefusedText = "TLS Downgrade To Plain Text Not Allowed"

// downgradeMark is the writer's marker (c.enqueue) for "end TLS here".
var downgradeMark = make([]byte, 0, 1)

func isDowngradeMark(b []byte) bool {
	return len(b) == 0 && cap(b) == 1 && unsafe.SliceData(b) == unsafe.SliceData(downgradeMark)
}

// wantsDowngrade reports whether a TLS client's login asks for plain text.
func (c *conn) wantsDowngrade(cc *clientCtrl) bool {
	v, ok := cc.Params[ccConnectionType]
	return ok && c.overTLS() && len(v) == 1 && v[0] == connPlainText
}

// startDowngrade ends TLS after the login response. The client ends it
// first: when its close_notify arrives, the read loop goes on in plain text
// and calls endTLS, so that the writer answers with the broker's
// close_notify and writes plain text from then on. (Sending the broker's
// close_notify right after the login response instead crashed the Go
// client's C library now and then.)
func (c *conn) startDowngrade() { c.downgradeNext = true }

func (c *conn) endTLS() { c.enqueue(downgradeMark) }

// tlsConn is the client's TLS connection (nil for other transports).
func (c *conn) tlsConn() *tls.Conn {
	tc, _ := c.nc.(*tls.Conn)
	return tc
}
