package semp

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/semp/sempwire"
)

// TestQueueAttributesAreMsgVpnQueues keeps Queue, the client's partial view
// of a config API MsgVpnQueue, within the shared wire type: every attribute
// it sends or reads is one of sempwire.ConfigQueue's (which solacetest's spec
// test checks against the OpenAPI spec), with the same JSON type.
func TestQueueAttributesAreMsgVpnQueues(t *testing.T) {
	full := map[string]reflect.Type{}
	ft := reflect.TypeFor[sempwire.ConfigQueue]()
	for i := range ft.NumField() {
		name, _, _ := strings.Cut(ft.Field(i).Tag.Get("json"), ",")
		full[name] = ft.Field(i).Type
	}
	qt := reflect.TypeFor[Queue]()
	require.Positive(t, qt.NumField())
	for i := range qt.NumField() {
		f := qt.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		want, ok := full[name]
		require.True(t, ok, "Queue.%s: %q is not a MsgVpnQueue attribute", f.Name, name)
		got := f.Type
		if got.Kind() == reflect.Pointer {
			got = got.Elem()
		}
		require.Equal(t, jsonKind(want), jsonKind(got), "Queue.%s (%q)", f.Name, name)
	}
}

func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "boolean"
	case reflect.String:
		return "string"
	case reflect.Int, reflect.Int32, reflect.Int64:
		return "integer"
	}
	return t.String()
}
