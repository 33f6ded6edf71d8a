package session

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging"
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

// TestReadExtendedFromHandle checks the native-handle route for attributes
// the Go API hides, on an outbound message (same layout: the handle is the
// first word), so that a client upgrade that moves the handle is caught.
func TestReadExtendedFromHandle(t *testing.T) {
	svc, err := messaging.NewMessagingServiceBuilder().FromConfigurationProvider(config.ServicePropertyMap{
		config.TransportLayerPropertyHost:                "tcp://127.0.0.1:1",
		config.ServicePropertyVPNName:                    "default",
		config.AuthenticationPropertySchemeBasicUserName: "u",
		config.AuthenticationPropertySchemeBasicPassword: "p",
	}).Build()
	require.NoError(t, err)
	for _, ttl := range []int64{1234, 98765} {
		msg, err := svc.MessageBuilder().
			WithProperty(config.MessagePropertyPersistentTimeToLive, ttl).
			BuildWithByteArrayPayload([]byte("x"))
		require.NoError(t, err)
		ext, ok := readExtended(msg)
		require.True(t, ok, "the message handle must be readable for %T", msg)
		require.Equal(t, ttl, ext.ttl)
		msg.Dispose()
		_, ok = readExtended(msg)
		require.False(t, ok, "a disposed message must not be read")
	}
	require.False(t, layoutHoldsHandle(reflect.TypeOf(&struct{ A int }{})))
}

func TestRGMIDFormatting(t *testing.T) {
	// spooler id 0x0000be79ec5d8dc3, message id 1.
	const want = "rmid1:0000b-e79ec5d8dc3-00000000-00000001"
	be := [16]byte{0x00, 0x00, 0xbe, 0x79, 0xec, 0x5d, 0x8d, 0xc3, 0, 0, 0, 0, 0, 0, 0, 0x01}
	var le [16]byte
	for i := range 8 {
		le[i], le[8+i] = be[7-i], be[15-i]
	}
	tests := []struct {
		name   string
		raw    [16]byte
		layout rgmidLayout
	}{
		{"big-endian value", be, rgmidBigEndian},
		{"little-endian words", le, rgmidWordsLE},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, want, string(appendRGMID(nil, orderRGMID(tc.raw, tc.layout))))
			require.Len(t, want, rgmidStrLen)
		})
	}
	// A layout that reproduces nothing falls back to CCSMP's formatting.
	// (Checked on a copy of the state: the real one is learnt once.)
	saved := rgmidLayoutState.Swap(int32(rgmidUnknown))
	t.Cleanup(func() { rgmidLayoutState.Store(saved) })
	require.Equal(t, rgmidByCCSMP, learnRGMIDLayout(be, "rmid1:something-else"))
	rgmidLayoutState.Store(int32(rgmidUnknown))
	require.Equal(t, rgmidWordsLE, learnRGMIDLayout(le, want))
}
