package solacetest

// This file is the broker's view of its connected clients, as SEMP's monitor
// API shows them (msgVpns/{vpn}/clients): what each client said about itself
// at login, its subscriptions, its message and byte counters, and the
// administrative disconnect.

import (
	"cmp"
	"fmt"
	"net"
	"slices"
	"sync/atomic"
	"time"
)

// ClientCtrl login parameters that describe the client (smf-wire-notes §2.1).
const (
	ccSoftwareDate = 1
	ccPlatform     = 2
	ccDescription  = 4
)

// ClientInfo is one connected client as the broker sees it.
type ClientInfo struct {
	Name     string // the client name (the Go API's application id)
	Username string
	VPN      string
	Address  string // remote "host:port"
	// SoftwareVersion, SoftwareDate, Platform and Description are what the
	// client's API reported at login.
	SoftwareVersion, SoftwareDate, Platform, Description string
	ConnectedAt                                          time.Time
	// TLSVersion ("TLSv1.2") and TLSCipher (OpenSSL's name) describe a TLS
	// connection; both are "" for plain ones.
	TLSVersion, TLSCipher string
	// TLSDowngradedToPlainText is true for a TLS client that went on in
	// plain text after its login.
	TLSDowngradedToPlainText bool
	// Data counters count data messages (direct and guaranteed) and their
	// SMF bytes on the wire, received from (Rx) and sent to (Tx) the client.
	DataRxMsgs, DataRxBytes, DataTxMsgs, DataTxBytes int64
	// Control counters count every other SMF frame.
	ControlRxMsgs, ControlRxBytes, ControlTxMsgs, ControlTxBytes int64
	// Subscriptions are the client's direct topic subscriptions, sorted.
	Subscriptions []string
	// Flows counts the client's bound consumer flows.
	Flows int
}

// connStats are a connection's counters. They are atomic so that the write
// loop and the read loop update them without Broker.mu.
type connStats struct {
	dataRxMsgs, dataRxBytes, dataTxMsgs, dataTxBytes             atomic.Int64
	controlRxMsgs, controlRxBytes, controlTxMsgs, controlTxBytes atomic.Int64
}

// countRx counts one frame read from the client.
func (s *connStats) countRx(f *frame) {
	n := int64(f.Wire)
	if f.Proto == protoTrMsg {
		s.dataRxMsgs.Add(1)
		s.dataRxBytes.Add(n)
		return
	}
	s.controlRxMsgs.Add(1)
	s.controlRxBytes.Add(n)
}

// countTx counts one frame sent to the client.
func (s *connStats) countTx(data bool, n int) {
	if data {
		s.dataTxMsgs.Add(1)
		s.dataTxBytes.Add(int64(n))
		return
	}
	s.controlTxMsgs.Add(1)
	s.controlTxBytes.Add(int64(n))
}

// sendData queues a data message (a direct or guaranteed delivery) for the
// client and counts it.
func (c *conn) sendData(b []byte) {
	c.stats.countTx(true, len(b))
	c.send(b)
}

// clientLocked finds a logged-in client of a VPN.
func (b *Broker) clientLocked(vpn, name string) (*conn, error) {
	v, err := b.vpnLocked(vpn)
	if err != nil {
		return nil, err
	}
	c := v.clients[name]
	if c == nil || !c.loggedIn {
		return nil, fmt.Errorf("%w %q in VPN %q", ErrUnknownClient, name, vpn)
	}
	return c, nil
}

// Client describes a connected client, after the broker has processed what
// the client had sent by then (rxbarrier.go).
func (b *Broker) Client(vpn, name string) (ClientInfo, error) {
	b.mu.Lock()
	c, err := b.clientLocked(vpn, name)
	b.mu.Unlock()
	if err != nil {
		return ClientInfo{}, err
	}
	c.settleRx()
	b.mu.Lock()
	defer b.mu.Unlock()
	if c, err = b.clientLocked(vpn, name); err != nil {
		return ClientInfo{}, err
	}
	return c.infoLocked(), nil
}

// Clients lists a VPN's connected clients, sorted by name.
func (b *Broker) Clients(vpn string) ([]ClientInfo, error) {
	return inVPN(b, vpn, func(v *vpnState) ([]ClientInfo, error) {
		out := make([]ClientInfo, 0, len(v.clients))
		for _, c := range v.clients {
			if c.loggedIn {
				out = append(out, c.infoLocked())
			}
		}
		slices.SortFunc(out, func(a, b ClientInfo) int { return cmp.Compare(a.Name, b.Name) })
		return out, nil
	})
}

// DisconnectClient closes a client's connection, as SEMP's disconnect action
// does on a real broker. A client with reconnection enabled comes back.
//
// Like PubSub+'s, it returns once the client has gone: the broker closes its
// side of the connection, waits (at most disconnectWait) for the client to
// close its own, and then gives the client's API a moment to report it, so
// that a caller who asks right afterwards sees the client disconnected.
func (b *Broker) DisconnectClient(vpn, name string) error {
	b.mu.Lock()
	c, err := b.clientLocked(vpn, name)
	b.mu.Unlock()
	if err != nil {
		return err
	}
	b.log.Info("disconnecting client on request", "vpn", vpn, "client", name)
	if hc, ok := c.nc.(interface{ CloseWrite() error }); ok && hc.CloseWrite() == nil {
		select {
		case <-c.readDone:
		case <-time.After(disconnectWait):
		}
	}
	c.close()
	select {
	case <-c.readDone:
	case <-time.After(disconnectWait):
	}
	time.Sleep(disconnectSettle)
	return nil
}

// disconnectWait bounds how long DisconnectClient waits for the client to
// close its side; disconnectSettle is the time its API gets to notice.
const (
	disconnectWait   = time.Second
	disconnectSettle = 50 * time.Millisecond
)

func (c *conn) infoLocked() ClientInfo {
	subs := append(make([]string, 0, len(c.subs)), c.subs...) // empty, not nil, with no subscriptions
	slices.Sort(subs)
	st := &c.stats
	return ClientInfo{
		Name: c.clientName, Username: c.user, VPN: c.vpn.name, Address: c.nc.RemoteAddr().String(),
		SoftwareVersion: c.login.softwareVersion, SoftwareDate: c.login.softwareDate,
		Platform: c.login.platform, Description: c.login.description, ConnectedAt: c.login.at,
		DataRxMsgs: st.dataRxMsgs.Load(), DataRxBytes: st.dataRxBytes.Load(),
		DataTxMsgs: st.dataTxMsgs.Load(), DataTxBytes: st.dataTxBytes.Load(),
		ControlRxMsgs: st.controlRxMsgs.Load(), ControlRxBytes: st.controlRxBytes.Load(),
		ControlTxMsgs: st.controlTxMsgs.Load(), ControlTxBytes: st.controlTxBytes.Load(),
		Subscriptions: subs, Flows: len(c.flows), TLSVersion: c.login.tlsVersion, TLSCipher: c.login.tlsCipher,
		TLSDowngradedToPlainText: c.login.tlsDowngraded,
	}
}

// loginInfo is what a client said about itself at login.
type loginInfo struct {
	softwareVersion, softwareDate, platform, description string
	at                                                   time.Time
	tlsVersion, tlsCipher                                string
	tlsDowngraded                                        bool // went on in plain text after the login (tls.go)
}

func newLoginInfo(cc *clientCtrl, nc net.Conn) loginInfo {
	v, cipher := tlsInfo(nc)
	return loginInfo{
		tlsVersion: v, tlsCipher: cipher,
		softwareVersion: trimNUL(cc.Params[ccSoftwareVersion]),
		softwareDate:    trimNUL(cc.Params[ccSoftwareDate]),
		platform:        trimNUL(cc.Params[ccPlatform]),
		description:     trimNUL(cc.Params[ccDescription]),
		at:              time.Now(),
	}
}
