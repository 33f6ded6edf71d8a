package input

import (
	"fmt"
	"testing"
	"time"

	"github.com/connect-solace/connect-solace/internal/session"
)

// BenchmarkSolaceInputToMessage measures building the Benthos message of a
// converted Solace message, with the attributes the benchmark broker's
// messages carry. It cycles through 64 messages, each with its own
// replication group message id and receive time, sharing their destination
// and (boxed once, as the receiver's caches do) sender timestamp.
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
			{Key: session.MetaRedelivered, Value: false},
			{Key: session.MetaDeliveryCount, Value: int64(1)},
			{Key: session.MetaSenderTimestamp, Value: sent},
			{Key: session.MetaReceiveTimestamp, Value: received},
			{Key: session.MetaReplicationGroupMsgID, Value: fmt.Sprintf("rmid1:3a2b1-0c4d5e6f708-%08x-%08x", i, i)},
			{Key: session.MetaClassOfService, Value: int64(0)},
		}
		ins[i] = in
	}
	r := &solaceReader{tsMode: siTimestampSender}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		m := r.toMessage(ins[i%len(ins)])
		_, _ = m.AsBytes()
		i++
	}
}
