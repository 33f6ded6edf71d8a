package session

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace/config"
	"solace.dev/go/messaging/pkg/solace/message/sdt"
	"solace.dev/go/messaging/pkg/solace/resource"
)

func TestConvertSDT(t *testing.T) {
	tests := []struct {
		in   sdt.Data
		want any
	}{
		{int8(-3), int64(-3)},
		{int16(300), int64(300)},
		{int32(7), int64(7)},
		{uint8(200), int64(200)},
		{uint16(65000), int64(65000)},
		{uint32(4_000_000_000), int64(4_000_000_000)},
		{uint64(1 << 63), uint64(1 << 63)},
		{float32(1.5), float64(1.5)},
		{sdt.WChar('é'), "é"},
		{true, true},
		{nil, nil},
		{[]byte{1, 2}, []byte{1, 2}},
		{sdt.Map{"a": int32(1), "b": sdt.Stream{"x", uint8(2)}}, map[string]any{"a": int64(1), "b": []any{"x", int64(2)}}},
		{resource.TopicOf("a/b"), "a/b"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%T", tc.in), func(t *testing.T) {
			require.Equal(t, tc.want, convertSDT(tc.in))
		})
	}
}

// A Delivery is allocated for every received message: with a pointer in its
// slot (the solace input's) it fills the 256-byte size class exactly
// (Inbound.strBuf takes what the fields leave), so a field added without
// taking its room from strBuf shows here rather than as a silent step to the
// 288-byte class.
func TestDeliverySize(t *testing.T) {
	require.EqualValues(t, 256, unsafe.Sizeof(Delivery[*int]{}))
}

func TestDestinationTypeOf(t *testing.T) {
	for name, want := range map[string]string{
		"orders/eu/new":         DestinationTopic,
		"#P2P/QUE/q1":           DestinationQueue,
		"#P2P/QTMP/router/uuid": DestinationTempQueue,
		"#P2P/TTMP/router/uuid": DestinationTempTopic,
	} {
		require.Equal(t, want, destinationTypeOf(name), name)
	}
}

func TestOutcomeNative(t *testing.T) {
	require.Equal(t, config.PersistentReceiverAcceptedOutcome, Accepted.native())
	require.Equal(t, config.PersistentReceiverFailedOutcome, Failed.native())
	require.Equal(t, config.PersistentReceiverRejectedOutcome, Rejected.native())
	require.Equal(t, "rejected", Rejected.String())
}
