package solacetest

// This file is the SEMP replay resources: the config API's
// msgVpns/{vpn}/replayLogs[/{name}] and the action API's
// msgVpns/{vpn}/queues/{queue}/startReplay.

import (
	"errors"
	"time"
)

type sempReplayLog struct {
	EgressEnabled      bool   `json:"egressEnabled"`
	IngressEnabled     bool   `json:"ingressEnabled"`
	MaxSpoolUsage      int64  `json:"maxSpoolUsage"`
	MsgVpnName         string `json:"msgVpnName"`
	ReplayLogName      string `json:"replayLogName"`
	TopicFilterEnabled bool   `json:"topicFilterEnabled"`
}

func (c *sempCall) replayLogLink(vpn, name string) sempURILink {
	return sempURILink{URI: c.vpnObjectURI(vpn, "replayLogs", name)}
}

// replayLogChanges reads a MsgVpnReplayLog body.
func replayLogChanges(c *sempCall, vpn string) (name *string, apply func(*ReplayLog), err *sempErr) {
	attrs, err := c.readBody()
	if err != nil {
		return nil, nil, err
	}
	var bodyVPN *string
	var ingress, egress, topicFilter *bool
	var quota *int64
	if e := firstErr(
		decodeAttr(attrs, "replayLogName", &name), decodeAttr(attrs, "msgVpnName", &bodyVPN),
		decodeAttr(attrs, "ingressEnabled", &ingress), decodeAttr(attrs, "egressEnabled", &egress),
		decodeAttr(attrs, "topicFilterEnabled", &topicFilter), decodeAttr(attrs, "maxSpoolUsage", &quota),
	); e != nil {
		return nil, nil, e
	}
	for attr := range attrs {
		return nil, nil, errInvalid("unknown attribute %q", attr)
	}
	if e := matchesPath("msgVpnName", bodyVPN, vpn); e != nil {
		return nil, nil, e
	}
	switch {
	case topicFilter != nil && *topicFilter:
		return nil, nil, errNotSupported("the test broker does not implement replay-log topic filters")
	case quota != nil && *quota < 0:
		return nil, nil, errInvalid("maxSpoolUsage %d is negative", *quota)
	}
	return name, func(l *ReplayLog) {
		if ingress != nil {
			l.IngressEnabled = *ingress
		}
		if egress != nil {
			l.EgressEnabled = *egress
		}
		if quota != nil {
			l.MaxSpoolUsage = *quota
		}
	}, nil
}

func replayLogJSON(vpn string, l ReplayLog) sempReplayLog {
	return sempReplayLog{EgressEnabled: l.EgressEnabled, IngressEnabled: l.IngressEnabled,
		MaxSpoolUsage: l.MaxSpoolUsage, MsgVpnName: vpn, ReplayLogName: l.Name}
}

func writeReplayLog(c *sempCall, vpn string, l ReplayLog) *sempErr {
	return c.writeObject(replayLogJSON(vpn, l), c.replayLogLink(vpn, l.Name), nil)
}

func createReplayLog(c *sempCall, b brokerAdmin, vpn string) *sempErr {
	name, apply, err := replayLogChanges(c, vpn)
	if err != nil {
		return err
	}
	if e := required("replayLogName", name); e != nil {
		return e
	}
	// SEMP's defaults: both switches off.
	l := ReplayLog{Name: *name}
	apply(&l)
	if cerr := b.CreateReplayLog(vpn, l); cerr != nil {
		return adminErr(cerr)
	}
	return writeReplayLog(c, vpn, l)
}

func findReplayLog(c *sempCall, b brokerAdmin, vpn string) (ReplayLog, *sempErr) {
	logs, err := b.ReplayLogs(vpn)
	return findIn(c, logs, err, func(l ReplayLog) string { return l.Name }, "replayLog", "name")
}

func getReplayLog(c *sempCall, b brokerAdmin, vpn string) *sempErr {
	l, err := findReplayLog(c, b, vpn)
	if err != nil {
		return err
	}
	return writeReplayLog(c, vpn, l)
}

func listReplayLogs(c *sempCall, b brokerAdmin, vpn string) *sempErr {
	logs, err := b.ReplayLogs(vpn)
	return writeAll(c, logs, err, func(l ReplayLog) (any, sempURILink) {
		return replayLogJSON(vpn, l), c.replayLogLink(vpn, l.Name)
	})
}

func updateReplayLog(c *sempCall, b brokerAdmin, vpn string) *sempErr {
	name, apply, err := replayLogChanges(c, vpn)
	if err != nil {
		return err
	}
	if e := matchesPath("replayLogName", name, c.r.PathValue("name")); e != nil {
		return e
	}
	if uerr := b.UpdateReplayLog(vpn, c.r.PathValue("name"), apply); uerr != nil {
		return adminErr(uerr)
	}
	return getReplayLog(c, b, vpn)
}

func deleteReplayLog(c *sempCall, b brokerAdmin, vpn string) *sempErr {
	return c.writeMetaOnlyOr(b.DeleteReplayLog(vpn, c.r.PathValue("name")), adminErr)
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
