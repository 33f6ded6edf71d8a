package solacetest

// This file is the SEMP client-profile resources:
// msgVpns/{vpn}/clientProfiles[/{profile}] (GET in config and monitor,
// PATCH in config).

import "encoding/json"

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

// clientProfiles is the collection msgVpns/{vpn}/clientProfiles. Profiles
// are not created or deleted: each VPN has its "default".
var clientProfiles = vpnCollection[ClientProfile, sempClientProfile, brokerAdmin]{
	path: "clientProfiles", nameAttr: "clientProfileName", monitor: true,
	name: func(p ClientProfile) string { return p.Name }, object: clientProfileJSON, changes: clientProfileChanges,
	all: brokerAdmin.ClientProfiles, update: brokerAdmin.UpdateClientProfile,
}

// clientProfileChanges reads a PATCH body. Attributes the broker does not
// model are refused, except the always-on permissions set to true.
func clientProfileChanges(attrs map[string]json.RawMessage) (func(*ClientProfile), *sempErr) {
	var durability *string
	var allowCreate, rejectNoMatch *bool
	if e := firstErr(
		decodeAttr(attrs, "allowGuaranteedEndpointCreateDurability", &durability),
		decodeAttr(attrs, "allowGuaranteedEndpointCreateEnabled", &allowCreate),
		decodeAttr(attrs, "rejectMsgToSenderOnNoSubscriptionMatchEnabled", &rejectNoMatch),
	); e != nil {
		return nil, e
	}
	for _, always := range []string{"allowBridgeConnectionsEnabled", "allowGuaranteedMsgReceiveEnabled", "allowGuaranteedMsgSendEnabled"} {
		var v *bool
		if err := decodeAttr(attrs, always, &v); err != nil {
			return nil, err
		}
		if v != nil && !*v {
			return nil, errNotSupported("the test broker always allows %s; it cannot be disabled", always)
		}
	}
	for attr := range attrs {
		return nil, errNotSupported("attribute %q of clientProfile is not supported by the test broker", attr)
	}
	if durability != nil && *durability != EndpointCreateAll && *durability != EndpointCreateDurable && *durability != EndpointCreateNonDurable {
		return nil, errInvalid("allowGuaranteedEndpointCreateDurability %q is not one of all, durable, non-durable", *durability)
	}
	return func(p *ClientProfile) {
		setIf(&p.EndpointCreateDurability, durability)
		setIf(&p.AllowGuaranteedEndpointCreate, allowCreate)
		setIf(&p.RejectMsgToSenderOnNoSubscriptionMatch, rejectNoMatch)
	}, nil
}
