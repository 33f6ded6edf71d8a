package solacetest

// This file is the SEMP message-VPN resource msgVpns/{vpn}: GET in the config
// and monitor APIs, PATCH in the config API.

import (
	"net/url"
)

// sempVPN is MsgVpn with the attributes the broker models; the monitor API
// adds state.
type sempVPN struct {
	AuthenticationBasicEnabled                              bool   `json:"authenticationBasicEnabled"`
	AuthenticationBasicType                                 string `json:"authenticationBasicType"`
	AuthenticationClientCertAllowAPIProvidedUsernameEnabled bool   `json:"authenticationClientCertAllowApiProvidedUsernameEnabled"`
	AuthenticationClientCertEnabled                         bool   `json:"authenticationClientCertEnabled"`
	AuthenticationKerberosAllowAPIProvidedUsernameEnabled   bool   `json:"authenticationKerberosAllowApiProvidedUsernameEnabled"`
	AuthenticationKerberosEnabled                           bool   `json:"authenticationKerberosEnabled"`
	AuthenticationOauthDefaultProfileName                   string `json:"authenticationOauthDefaultProfileName"`
	AuthenticationOauthEnabled                              bool   `json:"authenticationOauthEnabled"`
	Enabled                                                 bool   `json:"enabled"`
	MsgVpnName                                              string `json:"msgVpnName"`
	State                                                   string `json:"state,omitempty"`
	TLSAllowDowngradeToPlainTextEnabled                     bool   `json:"tlsAllowDowngradeToPlainTextEnabled"`
}

func vpnJSON(cfg VPNConfig, monitor bool) sempVPN {
	v := sempVPN{
		AuthenticationBasicEnabled:                              cfg.BasicAuthEnabled,
		AuthenticationBasicType:                                 cfg.BasicAuthType,
		AuthenticationClientCertAllowAPIProvidedUsernameEnabled: cfg.ClientCertAllowAPIProvidedUsername,
		AuthenticationClientCertEnabled:                         cfg.ClientCertAuthEnabled,
		AuthenticationKerberosAllowAPIProvidedUsernameEnabled:   cfg.KerberosAllowAPIProvidedUsername,
		AuthenticationKerberosEnabled:                           cfg.KerberosAuthEnabled,
		AuthenticationOauthDefaultProfileName:                   cfg.OAuthDefaultProfile,
		AuthenticationOauthEnabled:                              cfg.OAuthEnabled,
		Enabled:                                                 cfg.Enabled,
		MsgVpnName:                                              cfg.Name,
		TLSAllowDowngradeToPlainTextEnabled:                     cfg.TLSAllowDowngradeToPlainText,
	}
	if monitor {
		v.State = "down"
		if cfg.Enabled {
			v.State = "up"
		}
	}
	return v
}

type sempVPNLinks struct {
	QueuesURI string `json:"queuesUri"`
	URI       string `json:"uri"`
}

func (c *sempCall) vpnLinks(vpn string) sempVPNLinks {
	u := c.baseURL() + c.api + "/msgVpns/" + url.PathEscape(vpn)
	return sempVPNLinks{QueuesURI: u + "/queues", URI: u}
}

func getVPN(c *sempCall, b brokerAdmin, vpn string) *sempErr {
	cfg, verr := b.VPN(vpn)
	if verr != nil {
		return adminErr(verr)
	}
	return c.writeObject(vpnJSON(cfg, c.api == sempMonitorBase), c.vpnLinks(vpn), nil)
}

// updateVPN applies a MsgVpn PATCH. Attributes the broker does not model
// are refused, naming the attribute, rather than silently ignored.
func updateVPN(c *sempCall, b brokerAdmin, vpn string) *sempErr {
	attrs, err := c.readBody()
	if err != nil {
		return err
	}
	var name, basicType, oauthDefault *string
	if err := decodeAttr(attrs, "msgVpnName", &name); err != nil {
		return err
	}
	if err := decodeAttr(attrs, "authenticationOauthDefaultProfileName", &oauthDefault); err != nil {
		return err
	}
	if e := matchesPath("msgVpnName", name, vpn); e != nil {
		return e
	}
	if err := decodeAttr(attrs, "authenticationBasicType", &basicType); err != nil {
		return err
	}
	bools := []struct {
		attr string
		set  func(*VPNConfig, bool)
	}{
		{"enabled", func(v *VPNConfig, x bool) { v.Enabled = x }},
		{"authenticationBasicEnabled", func(v *VPNConfig, x bool) { v.BasicAuthEnabled = x }},
		{"authenticationClientCertEnabled", func(v *VPNConfig, x bool) { v.ClientCertAuthEnabled = x }},
		{"authenticationClientCertAllowApiProvidedUsernameEnabled", func(v *VPNConfig, x bool) { v.ClientCertAllowAPIProvidedUsername = x }},
		{"authenticationKerberosEnabled", func(v *VPNConfig, x bool) { v.KerberosAuthEnabled = x }},
		{"authenticationKerberosAllowApiProvidedUsernameEnabled", func(v *VPNConfig, x bool) { v.KerberosAllowAPIProvidedUsername = x }},
		{"authenticationOauthEnabled", func(v *VPNConfig, x bool) { v.OAuthEnabled = x }},
		{"tlsAllowDowngradeToPlainTextEnabled", func(v *VPNConfig, x bool) { v.TLSAllowDowngradeToPlainText = x }},
	}
	var sets []func(*VPNConfig)
	for _, bl := range bools {
		var v *bool
		if err := decodeAttr(attrs, bl.attr, &v); err != nil {
			return err
		}
		if v != nil {
			set, x := bl.set, *v
			sets = append(sets, func(cfg *VPNConfig) { set(cfg, x) })
		}
	}
	for name := range attrs {
		return errNotSupported("attribute %q of msgVpn is not supported by the test broker", name)
	}
	if uerr := b.UpdateVPN(vpn, func(cfg *VPNConfig) {
		if basicType != nil {
			cfg.BasicAuthType = *basicType
		}
		if oauthDefault != nil {
			cfg.OAuthDefaultProfile = *oauthDefault
		}
		for _, set := range sets {
			set(cfg)
		}
	}); uerr != nil {
		return adminErr(uerr)
	}
	return getVPN(c, b, vpn)
}
