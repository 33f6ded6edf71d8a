package solacetest

// This file is TLS downgrade to plain text. A client that logs in over TLS
// with downgrade on (the Go client's Downgradable transport security) says
// so in its login (ClientCtrl parameter 21, value 0). When the VPN allows it
// (tlsAllowDowngradeToPlainTextEnabled), the broker answers the login over
// TLS, then ends TLS with a close_notify alert each way, and the session
// goes on in plain text over the same TCP connection. When the VPN does not
// allow it, the login is refused.

import (
	"crypto/tls"
	"unsafe"
)

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
