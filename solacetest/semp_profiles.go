package solacetest

// This file is the SEMP client-profile resources:
// msgVpns/{vpn}/clientProfiles[/{profile}] (GET in config and monitor,
// PATCH in config).

// sempClientProfile is MsgVpnClientProfile with the attributes the broker
// models. Guaranteed send, receive and bridge connections are always
// allowed.
type sempClientProfile struct {
	AllowBridgeConnectionsEnabled                 bool   `json:"allowBridgeConnectionsEnabled"`
	AllowGuaranteedEndpointCreateDurability       string `json:"allowGuaranteedEndpointCreateDurability"`
	AllowGuaranteedEndpointCreateEnabled          bool   `json:"allowGuaranteedEndpointCreateEnabled"`
	AllowGuaranteedMsgReceiveEnabled              bool   `json:"allowGuaranteedMsgReceiveEnabled"`
	AllowGuaranteedMsgSendEnabled                 bool   `json:"allowGuaranteedMsgSendEnabled"`
	ClientProfileName                             string `json:"clientProfileName"`
	MsgVpnName                                    string `json:"msgVpnName"`
	RejectMsgToSenderOnNoSubscriptionMatchEnabled bool   `json:"rejectMsgToSenderOnNoSubscriptionMatchEnabled"`
}

func clientProfileJSON(vpn string, p ClientProfile) sempClientProfile {
	return sempClientProfile{
		AllowBridgeConnectionsEnabled:                 true,
		AllowGuaranteedEndpointCreateDurability:       p.EndpointCreateDurability,
		AllowGuaranteedEndpointCreateEnabled:          p.AllowGuaranteedEndpointCreate,
		AllowGuaranteedMsgReceiveEnabled:              true,
		AllowGuaranteedMsgSendEnabled:                 true,
		ClientProfileName:                             p.Name,
		MsgVpnName:                                    vpn,
		RejectMsgToSenderOnNoSubscriptionMatchEnabled: p.RejectMsgToSenderOnNoSubscriptionMatch,
	}
}

func (c *sempCall) clientProfileLink(vpn, name string) sempURILink {
	return sempURILink{URI: c.vpnObjectURI(vpn, "clientProfiles", name)}
}

func getClientProfile(c *sempCall, b brokerAdmin, vpn string) *sempErr {
	p, perr := b.ClientProfile(vpn, c.r.PathValue("profile"))
	if perr != nil {
		return adminErr(perr)
	}
	return c.writeObject(clientProfileJSON(vpn, p), c.clientProfileLink(vpn, p.Name), nil)
}

func listClientProfiles(c *sempCall, b brokerAdmin, vpn string) *sempErr {
	all, perr := b.ClientProfiles(vpn)
	if perr != nil {
		return adminErr(perr)
	}
	keys := make([]string, len(all))
	byName := map[string]ClientProfile{}
	for i, p := range all {
		keys[i], byName[p.Name] = p.Name, p
	}
	page, next, err := c.page(keys)
	if err != nil {
		return err
	}
	return writeEach(c, page, len(keys), next, func(k string) (any, sempURILink) {
		return clientProfileJSON(vpn, byName[k]), c.clientProfileLink(vpn, k)
	})
}

// updateClientProfile applies a PATCH. Attributes the broker does not model
// are refused, except the always-on permissions set to true.
func updateClientProfile(c *sempCall, b brokerAdmin, vpn string) *sempErr {
	name := c.r.PathValue("profile")
	attrs, err := c.readBody()
	if err != nil {
		return err
	}
	var bodyVPN, bodyName, durability *string
	var allowCreate, rejectNoMatch *bool
	for _, d := range []struct {
		attr string
		dst  **string
	}{{"msgVpnName", &bodyVPN}, {"clientProfileName", &bodyName}, {"allowGuaranteedEndpointCreateDurability", &durability}} {
		if err := decodeAttr(attrs, d.attr, d.dst); err != nil {
			return err
		}
	}
	for _, d := range []struct {
		attr string
		dst  **bool
	}{{"allowGuaranteedEndpointCreateEnabled", &allowCreate}, {"rejectMsgToSenderOnNoSubscriptionMatchEnabled", &rejectNoMatch}} {
		if err := decodeAttr(attrs, d.attr, d.dst); err != nil {
			return err
		}
	}
	for _, always := range []string{"allowBridgeConnectionsEnabled", "allowGuaranteedMsgReceiveEnabled", "allowGuaranteedMsgSendEnabled"} {
		var v *bool
		if err := decodeAttr(attrs, always, &v); err != nil {
			return err
		}
		if v != nil && !*v {
			return errNotSupported("the test broker always allows %s; it cannot be disabled", always)
		}
	}
	for attr := range attrs {
		return errNotSupported("attribute %q of clientProfile is not supported by the test broker", attr)
	}
	if e := firstErr(matchesPath("msgVpnName", bodyVPN, vpn), matchesPath("clientProfileName", bodyName, name)); e != nil {
		return e
	}
	if durability != nil && *durability != EndpointCreateAll && *durability != EndpointCreateDurable && *durability != EndpointCreateNonDurable {
		return errInvalid("allowGuaranteedEndpointCreateDurability %q is not one of all, durable, non-durable", *durability)
	}
	if uerr := b.UpdateClientProfile(vpn, name, func(p *ClientProfile) {
		if durability != nil {
			p.EndpointCreateDurability = *durability
		}
		if allowCreate != nil {
			p.AllowGuaranteedEndpointCreate = *allowCreate
		}
		if rejectNoMatch != nil {
			p.RejectMsgToSenderOnNoSubscriptionMatch = *rejectNoMatch
		}
	}); uerr != nil {
		return adminErr(uerr)
	}
	return getClientProfile(c, b, vpn)
}
