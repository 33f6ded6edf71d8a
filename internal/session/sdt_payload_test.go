package session

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace/message/sdt"
)

func TestToSDTKeepsIntegers(t *testing.T) {
	tests := []struct {
		in   any
		want sdt.Data
	}{
		{json.Number("3"), int64(3)},
		{json.Number("9007199254740993"), int64(9007199254740993)},
		{json.Number("1.5"), 1.5},
		{float64(4), int64(4)},
		{4.25, 4.25},
		{int(7), int64(7)},
		{uint64(1 << 63), uint64(1 << 63)},
		{"s", "s"},
		{nil, nil},
		{[]byte{1}, []byte{1}},
		{map[string]any{"a": []any{json.Number("1"), true}}, sdt.Map{"a": sdt.Stream{int64(1), true}}},
	}
	for _, tc := range tests {
		got, err := ToSDT(tc.in)
		require.NoError(t, err, "%#v", tc.in)
		require.Equal(t, tc.want, got, "%#v", tc.in)
	}
	_, err := ToSDT(map[string]any{"a": []any{struct{}{}}})
	require.ErrorContains(t, err, "the payload at a[0]: a struct {} has no SDT form")
}
