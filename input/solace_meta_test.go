package input

import (
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/session"
)

// metaAll is every metadata entry of msg.
func metaAll(t *testing.T, msg *service.Message) map[string]any {
	t.Helper()
	m := map[string]any{}
	require.NoError(t, msg.MetaWalkMut(func(k string, v any) error { m[k] = v; return nil }))
	return m
}

// A message built from the template (only the values that differ from the
// template's written) has exactly the metadata of one built key by key, and
// a pipeline writing to one message's metadata changes no other message.
func TestSolaceMessagesFromTemplateMatchKeyByKey(t *testing.T) {
	sent := time.UnixMilli(1_700_000_000_000)
	inbound := func(dest, rgmid string, redelivered bool, received time.Time, withSent bool) *session.Inbound {
		in := &session.Inbound{Payload: []byte(rgmid), ReceiveTimestamp: received, Redelivered: redelivered}
		in.Meta = []session.MetaField{
			{Key: session.MetaDestination, Value: dest},
			{Key: session.MetaDestinationType, Value: session.DestinationQueue},
			{Key: session.MetaRedelivered, Value: redelivered},
		}
		if withSent {
			in.SenderTimestamp = sent
			in.Meta = append(in.Meta, session.MetaField{Key: session.MetaSenderTimestamp, Value: sent})
		}
		in.Meta = append(in.Meta,
			session.MetaField{Key: session.MetaReceiveTimestamp, Value: received},
			session.MetaField{Key: session.MetaReplicationGroupMsgID, Value: rgmid},
			session.MetaField{Key: session.MetaClassOfService, Value: int64(0)},
		)
		return in
	}
	now := time.Now()
	ins := []*session.Inbound{
		inbound("q/a", "rmid1:1", false, now, true),                      // a first miss: key by key
		inbound("q/a", "rmid1:2", false, now, true),                      // the second: the template, differing in the id
		inbound("q/b", "rmid1:3", true, now.Add(time.Millisecond), true), // same keys, other values
		inbound("q/a", "rmid1:4", false, now, false),                     // other keys: a miss
		inbound("q/a", "rmid1:4", false, now, false),                     // again: a new template of its values
		inbound("q/a", "rmid1:4", false, now, false),                     // equal to the template in everything
		inbound("q/a", "rmid1:5", false, now, true),
	}
	for _, mode := range []string{siTimestampSender, siTimestampReceive} {
		t.Run(mode, func(t *testing.T) {
			r := &solaceReader{tsMode: mode}
			var msgs []*service.Message
			for i, in := range ins {
				msg := r.toMessage(in)
				want := metaAll(t, r.setMeta(service.NewMessage(nil), in, nil))
				require.Equal(t, want, metaAll(t, msg), "message %d", i)
				b, err := msg.AsBytes()
				require.NoError(t, err)
				require.Equal(t, in.Payload, b)
				// A pipeline writing to this message's metadata.
				msg.MetaSetMut("solace_destination", "changed")
				msg.MetaSetMut("added", true)
				msgs = append(msgs, msg)
			}
			for i, msg := range msgs {
				m := metaAll(t, msg)
				require.Equal(t, "changed", m["solace_destination"], "message %d", i)
				require.Len(t, m, len(ins[i].Meta)+2, "message %d", i)
			}
			m := metaAll(t, r.toMessage(ins[0]))
			require.Equal(t, "q/a", m["solace_destination"])
			require.NotContains(t, m, "added")
		})
	}
}
