package solacetest

// This file is the SEMP client resources: the monitor API's
// msgVpns/{vpn}/clients (with their subscriptions) and the action API's
// disconnect.

import (
	"net/url"
	"time"

	"github.com/connect-solace/connect-solace/internal/semp/sempwire"
)

// sempMonitorClient is the monitor API's MsgVpnClient, with the attributes
// the broker knows. Byte and message counters are SMF frames on the wire.
type sempMonitorClient struct {
	ACLProfileName           string `json:"aclProfileName"`
	ClientAddress            string `json:"clientAddress"`
	ClientName               string `json:"clientName"`
	ClientProfileName        string `json:"clientProfileName"`
	ClientUsername           string `json:"clientUsername"`
	ControlRxByteCount       int64  `json:"controlRxByteCount"`
	ControlRxMsgCount        int64  `json:"controlRxMsgCount"`
	ControlTxByteCount       int64  `json:"controlTxByteCount"`
	ControlTxMsgCount        int64  `json:"controlTxMsgCount"`
	DataRxByteCount          int64  `json:"dataRxByteCount"`
	DataRxMsgCount           int64  `json:"dataRxMsgCount"`
	DataTxByteCount          int64  `json:"dataTxByteCount"`
	DataTxMsgCount           int64  `json:"dataTxMsgCount"`
	Description              string `json:"description"`
	MsgVpnName               string `json:"msgVpnName"`
	Platform                 string `json:"platform"`
	RxByteCount              int64  `json:"rxByteCount"`
	RxMsgCount               int64  `json:"rxMsgCount"`
	SoftwareDate             string `json:"softwareDate"`
	SoftwareVersion          string `json:"softwareVersion"`
	TLSCipherDescription     string `json:"tlsCipherDescription"`
	TLSDowngradedToPlainText bool   `json:"tlsDowngradedToPlainText"`
	TLSVersion               string `json:"tlsVersion"`
	TxByteCount              int64  `json:"txByteCount"`
	TxMsgCount               int64  `json:"txMsgCount"`
	Uptime                   int32  `json:"uptime"`
	User                     string `json:"user"`
	VirtualRouter            string `json:"virtualRouter"`
}

func monitorClientJSON(ci ClientInfo, now time.Time) sempMonitorClient {
	return sempMonitorClient{
		ACLProfileName: "default", ClientAddress: ci.Address, ClientName: ci.Name, ClientProfileName: "default",
		ClientUsername:     ci.Username,
		ControlRxByteCount: ci.ControlRxBytes, ControlRxMsgCount: ci.ControlRxMsgs,
		ControlTxByteCount: ci.ControlTxBytes, ControlTxMsgCount: ci.ControlTxMsgs,
		DataRxByteCount: ci.DataRxBytes, DataRxMsgCount: ci.DataRxMsgs,
		DataTxByteCount: ci.DataTxBytes, DataTxMsgCount: ci.DataTxMsgs,
		Description: ci.Description, MsgVpnName: ci.VPN, Platform: ci.Platform,
		RxByteCount: ci.DataRxBytes + ci.ControlRxBytes, RxMsgCount: ci.DataRxMsgs + ci.ControlRxMsgs,
		SoftwareDate: ci.SoftwareDate, SoftwareVersion: ci.SoftwareVersion,
		TLSVersion: ci.TLSVersion, TLSCipherDescription: ci.TLSCipher, TLSDowngradedToPlainText: ci.TLSDowngradedToPlainText,
		TxByteCount: ci.DataTxBytes + ci.ControlTxBytes, TxMsgCount: ci.DataTxMsgs + ci.ControlTxMsgs,
		Uptime: int32(now.Sub(ci.ConnectedAt) / time.Second), User: ci.Username, VirtualRouter: "primary",
	}
}

type sempClientLinks struct {
	SubscriptionsURI string `json:"subscriptionsUri"`
	URI              string `json:"uri"`
}

type sempClientCollections struct {
	Subscriptions sempwire.Count `json:"subscriptions"`
	TxFlows       sempwire.Count `json:"txFlows"`
}

type sempClientSubscription struct {
	ClientName        string `json:"clientName"`
	MsgVpnName        string `json:"msgVpnName"`
	SubscriptionTopic string `json:"subscriptionTopic"`
}

func (c *sempCall) clientURI(vpn, name string) string {
	return c.vpnObjectURI(vpn, "clients", name)
}

func (c *sempCall) clientLinks(vpn, name string) sempClientLinks {
	u := c.clientURI(vpn, name)
	return sempClientLinks{SubscriptionsURI: u + "/subscriptions", URI: u}
}

func getClient(c *sempCall, b brokerAdmin, vpn string) *sempErr {
	ci, cerr := b.Client(vpn, c.r.PathValue("client"))
	if cerr != nil {
		return adminErr(cerr)
	}
	return c.writeObject(monitorClientJSON(ci, time.Now()), c.clientLinks(vpn, ci.Name),
		sempClientCollections{Subscriptions: sempwire.Count{Count: int64(len(ci.Subscriptions))}, TxFlows: sempwire.Count{Count: int64(ci.Flows)}})
}

func listClients(c *sempCall, b brokerAdmin, vpn string) *sempErr {
	all, cerr := b.Clients(vpn)
	if cerr != nil {
		return adminErr(cerr)
	}
	byName := map[string]ClientInfo{}
	keys := make([]string, 0, len(all))
	for _, ci := range all {
		byName[ci.Name] = ci
		keys = append(keys, ci.Name)
	}
	page, next, err := c.page(keys)
	if err != nil {
		return err
	}
	now := time.Now()
	var data, links, cols []any
	for _, name := range page {
		ci := byName[name]
		data = append(data, monitorClientJSON(ci, now))
		links = append(links, c.clientLinks(vpn, name))
		cols = append(cols, sempClientCollections{Subscriptions: sempwire.Count{Count: int64(len(ci.Subscriptions))}, TxFlows: sempwire.Count{Count: int64(ci.Flows)}})
	}
	return c.writeList(data, links, cols, len(keys), next)
}

func listClientSubscriptions(c *sempCall, b brokerAdmin, vpn string) *sempErr {
	ci, cerr := b.Client(vpn, c.r.PathValue("client"))
	if cerr != nil {
		return adminErr(cerr)
	}
	page, next, err := c.page(ci.Subscriptions)
	if err != nil {
		return err
	}
	base := c.clientURI(vpn, ci.Name) + "/subscriptions/"
	return writeEach(c, page, len(ci.Subscriptions), next, func(t string) (any, sempURILink) {
		return sempClientSubscription{ClientName: ci.Name, MsgVpnName: vpn, SubscriptionTopic: t}, sempURILink{URI: base + url.PathEscape(t)}
	})
}

func disconnectClient(c *sempCall, b brokerAdmin, vpn string) *sempErr {
	if err := noAttributes(c); err != nil {
		return err
	}
	return c.writeMetaOnlyOr(b.DisconnectClient(vpn, c.r.PathValue("client")), adminErr)
}
