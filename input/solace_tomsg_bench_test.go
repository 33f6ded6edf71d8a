package input

import (
	"fmt"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connect-solace/connect-solace/internal/session"
	"github.com/connect-solace/connect-solace/internal/solacecfg"
)

// BenchmarkSolaceInputToMessage measures building the Benthos message of a
// converted Solace message, with the attributes the benchmark broker's
// messages carry (the 10 metadata keys BenchmarkSolaceInputVsRawReceiver
// reports). It cycles through 64 messages, each with its own replication
// group message id and receive time, sharing their destination and (boxed
// once, as the receiver's caches do) sender timestamp.
//
// Sub-benchmark benthos_floor is the least any input pays Benthos for such a
// message through its public API: a Copy of a message holding the same keys
// and values, the payload, and the two values that differ per message (the
// first write clones the metadata map). input/benthos_floor is the building's
// own overhead.
// tomsgSink keeps the built messages escaping, as they do to the pipeline.
var tomsgSink *service.Message

func BenchmarkSolaceInputToMessage(b *testing.B) {
	var dest any = "bench/topic"
	var sent any = time.UnixMilli(1_700_000_000_000)
	ins := make([]*session.Inbound, 64)
	for i := range ins {
		received := time.Now().Add(time.Duration(i) * time.Microsecond)
		in := &session.Inbound{Payload: make([]byte, 1024), SenderTimestamp: sent.(time.Time), ReceiveTimestamp: received}
		in.Meta = []session.MetaField{
			{Key: session.MetaDestination, Value: dest},
			{Key: session.MetaDestinationType, Value: session.DestinationTopic},
			{Key: session.MetaPriority, Value: int64(4)},
			{Key: session.MetaRedelivered, Value: false},
			{Key: session.MetaDeliveryCount, Value: int64(1)},
			{Key: session.MetaSenderTimestamp, Value: sent},
			{Key: session.MetaReceiveTimestamp, Value: any(received)},
			{Key: session.MetaReplicationGroupMsgID, Value: any(fmt.Sprintf("rmid1:3a2b1-0c4d5e6f708-%08x-%08x", i, i))},
			{Key: session.MetaClassOfService, Value: int64(0)},
		}
		ins[i] = in
	}
	b.Run("input", func(b *testing.B) {
		r := &solaceReader{tsMode: siTimestampSender}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			m := r.toMessage(ins[i%len(ins)])
			_, _ = m.AsBytes()
			tomsgSink = m
			i++
		}
	})
	b.Run("benthos_floor", func(b *testing.B) {
		tmpl := (&solaceReader{tsMode: siTimestampSender}).toMessage(ins[0])
		rcvKey := solacecfg.MetaKeys[session.MetaReceiveTimestamp]
		idKey := solacecfg.MetaKeys[session.MetaReplicationGroupMsgID]
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			in := ins[i%len(ins)]
			m := tmpl.Copy()
			m.SetBytes(in.Payload)
			m.MetaSetMut(rcvKey, in.Meta[6].Value)
			m.MetaSetMut(idKey, in.Meta[7].Value)
			_, _ = m.AsBytes()
			tomsgSink = m
			i++
		}
	})
}
