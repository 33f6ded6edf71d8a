package solacetest

// This file is the SEMP replay resources: the config API's
// msgVpns/{vpn}/replayLogs[/{name}] and the action API's
// msgVpns/{vpn}/queues/{queue}/startReplay.

import (
	"encoding/json"
	"errors"
	"time"
)

// replayLogs is the collection msgVpns/{vpn}/replayLogs.
var replayLogs = vpnCollection[ReplayLog, brokerAdmin]{
	path: "replayLogs", nameAttr: "replayLogName",
	name: func(l ReplayLog) string { return l.Name }, object: replayLogJSON, changes: replayLogChanges,
	// SEMP's defaults: both switches off.
	fresh: func(name string) ReplayLog { return ReplayLog{Name: name} },
	all:   brokerAdmin.ReplayLogs, create: brokerAdmin.CreateReplayLog,
	update: brokerAdmin.UpdateReplayLog, remove: brokerAdmin.DeleteReplayLog,
}

// replayLogChanges decodes a MsgVpnReplayLog body onto l.
func replayLogChanges(attrs map[string]json.RawMessage, l *ReplayLog) *sempErr {
	var topicFilter *bool
	if e := firstErr(
		decodeInto(attrs, "ingressEnabled", &l.IngressEnabled), decodeInto(attrs, "egressEnabled", &l.EgressEnabled),
		decodeAttr(attrs, "topicFilterEnabled", &topicFilter), decodeInto(attrs, "maxSpoolUsage", &l.MaxSpoolUsage),
	); e != nil {
		return e
	}
	if e := unknownAttr(attrs); e != nil {
		return e
	}
	switch {
	case topicFilter != nil && *topicFilter:
		return errNotSupported("the test broker does not implement replay-log topic filters")
	case l.MaxSpoolUsage < 0:
		return errInvalid("maxSpoolUsage %d is negative", l.MaxSpoolUsage)
	}
	return nil
}

func replayLogJSON(vpn string, l ReplayLog) map[string]any {
	return map[string]any{"egressEnabled": l.EgressEnabled, "ingressEnabled": l.IngressEnabled,
		"maxSpoolUsage": l.MaxSpoolUsage, "msgVpnName": vpn, "replayLogName": l.Name, "topicFilterEnabled": false}
}

// startReplay is the action msgVpns/{vpn}/queues/{queue}/startReplay.
func startReplay(c *sempCall, b brokerAdmin, vpn string) *sempErr {
	attrs, err := c.readBody()
	if err != nil {
		return err
	}
	var logName, afterMsg *string
	var fromTime *int64
	if e := firstErr(decodeAttr(attrs, "replayLogName", &logName), decodeAttr(attrs, "afterMsg", &afterMsg),
		decodeAttr(attrs, "fromTime", &fromTime)); e != nil {
		return e
	}
	if e := unknownAttr(attrs); e != nil {
		return e
	}
	if e := required("replayLogName", logName); e != nil {
		return e
	}
	var from time.Time
	if fromTime != nil {
		from = time.Unix(*fromTime, 0)
	}
	after := ""
	if afterMsg != nil {
		after = *afterMsg
	}
	if rerr := b.StartReplay(vpn, c.r.PathValue("queue"), *logName, from, after); rerr != nil {
		if errors.Is(rerr, ErrUnknownQueue) || errors.Is(rerr, ErrNoReplayLog) {
			return errNotFound("%s", rerr.Error())
		}
		return errInvalid("%s", rerr.Error())
	}
	return c.writeMetaOnly()
}
