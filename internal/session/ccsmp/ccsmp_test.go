package ccsmp

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging"
	"solace.dev/go/messaging/pkg/solace/config"
)

// TestNativeProbe checks the start-up check of the native read: the linked
// client passes it (so a client upgrade that moves the handle or changes the
// prototypes is caught here), and a version it was not verified with is
// refused with a reason.
func TestNativeProbe(t *testing.T) {
	svc, err := messaging.NewMessagingServiceBuilder().FromConfigurationProvider(config.ServicePropertyMap{
		config.TransportLayerPropertyHost:                "tcp://127.0.0.1:1",
		config.ServicePropertyVPNName:                    "default",
		config.AuthenticationPropertySchemeBasicUserName: "u",
		config.AuthenticationPropertySchemeBasicPassword: "p",
	}).Build()
	require.NoError(t, err)

	require.NoError(t, Probe(svc), "the linked client must pass the native probe")
	require.ErrorContains(t, probe("99.0.0", svc), `version "99.0.0", not one the native read was verified with`)

	msg, err := svc.MessageBuilder().BuildWithByteArrayPayload([]byte("x"))
	require.NoError(t, err)
	_, ok := HandleOf(msg)
	require.True(t, ok, "the message handle must be readable for %T", msg)
	require.NoError(t, SetReply(msg))
	msg.Dispose()
	_, ok = HandleOf(msg)
	require.False(t, ok, "a disposed message must not be read")
	require.Error(t, SetReply(msg), "a disposed message must not be written")
	require.False(t, layoutHoldsHandle(reflect.TypeOf(&struct{ A int }{})))
	require.Equal(t, -1, findDisposed(reflect.TypeOf(&struct{ A int }{})))
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

// typeMemo answers from its last entry or its map, computing once per type,
// and never answers for one type with another's value.
func TestTypeMemo(t *testing.T) {
	var m typeMemo[string]
	calls := map[reflect.Type]int{}
	compute := func(rt reflect.Type) string { calls[rt]++; return rt.String() }
	a, b := reflect.TypeOf(0), reflect.TypeOf("")
	for _, rt := range []reflect.Type{a, a, b, a, b, b} {
		require.Equal(t, rt.String(), m.get(rt, compute))
	}
	require.Equal(t, map[reflect.Type]int{a: 1, b: 1}, calls)
}
