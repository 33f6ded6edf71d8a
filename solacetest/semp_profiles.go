package solacetest

// This file is the SEMP client-profile resources:
// msgVpns/{vpn}/clientProfiles[/{profile}] (GET in config and monitor,
// PATCH in config).

import "encoding/json"

// clientProfileJSON is MsgVpnClientProfile with the attributes the broker
// models. Guaranteed send, receive and bridge connections are always
// allowed.
func clientProfileJSON(vpn string, p ClientProfile) map[string]any {
	return map[string]any{
		"allowBridgeConnectionsEnabled":                 true,
		"allowGuaranteedEndpointCreateDurability":       p.EndpointCreateDurability,
		"allowGuaranteedEndpointCreateEnabled":          p.AllowGuaranteedEndpointCreate,
		"allowGuaranteedMsgReceiveEnabled":              true,
		"allowGuaranteedMsgSendEnabled":                 true,
		"clientProfileName":                             p.Name,
		"msgVpnName":                                    vpn,
		"rejectMsgToSenderOnNoSubscriptionMatchEnabled": p.RejectMsgToSenderOnNoSubscriptionMatch,
	}
}

// clientProfiles is the collection msgVpns/{vpn}/clientProfiles. Profiles
// are not created or deleted: each VPN has its "default".
var clientProfiles = vpnCollection[ClientProfile, brokerAdmin]{
	path: "clientProfiles", nameAttr: "clientProfileName", monitor: true,
	name: func(p ClientProfile) string { return p.Name }, object: clientProfileJSON, changes: clientProfileChanges,
	all: brokerAdmin.ClientProfiles, update: brokerAdmin.UpdateClientProfile,
}

// clientProfileChanges decodes a PATCH body onto p. Attributes the broker
// does not model are refused, except the always-on permissions set to true.
func clientProfileChanges(attrs map[string]json.RawMessage, p *ClientProfile) *sempErr {
	if e := firstErr(
		decodeInto(attrs, "allowGuaranteedEndpointCreateDurability", &p.EndpointCreateDurability),
		decodeInto(attrs, "allowGuaranteedEndpointCreateEnabled", &p.AllowGuaranteedEndpointCreate),
		decodeInto(attrs, "rejectMsgToSenderOnNoSubscriptionMatchEnabled", &p.RejectMsgToSenderOnNoSubscriptionMatch),
	); e != nil {
		return e
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
	if d := p.EndpointCreateDurability; d != EndpointCreateAll && d != EndpointCreateDurable && d != EndpointCreateNonDurable {
		return errInvalid("allowGuaranteedEndpointCreateDurability %q is not one of all, durable, non-durable", d)
	}
	return nil
}
