package sempwire

import (
	"compress/gzip"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// specDir holds Solace's SEMPv2 OpenAPI specs; solacetest's spec test reads
// the same copies.
const specDir = "../../../solacetest/testdata/semp/"

type specProp struct {
	Type   string   `json:"type"`
	Format string   `json:"format"`
	Ref    string   `json:"$ref"`
	Enum   []string `json:"enum"`
}

type specDef struct {
	Properties map[string]specProp `json:"properties"`
}

func loadDefs(t *testing.T, api string) map[string]specDef {
	t.Helper()
	f, err := os.Open(specDir + "semp-v2-" + api + ".json.gz")
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	var spec struct {
		Definitions map[string]specDef `json:"definitions"`
	}
	require.NoError(t, json.NewDecoder(zr).Decode(&spec))
	return spec.Definitions
}

// TestTypesMatchTheSpecs checks every field of the shared wire types against
// the definition it stands for: the attribute exists, with the JSON type and
// integer width the spec gives, and nested objects name the right
// definition. The broker's spec test checks the values it writes; this one
// also covers what only the client reads.
func TestTypesMatchTheSpecs(t *testing.T) {
	defs := map[string]map[string]specDef{"config": loadDefs(t, "config"), "monitor": loadDefs(t, "monitor")}
	for _, tc := range []struct {
		api, def string
		typ      reflect.Type
	}{
		{"config", "MsgVpnQueue", reflect.TypeFor[ConfigQueue]()},
		{"config", "EventThreshold", reflect.TypeFor[EventThreshold]()},
		{"config", "MsgVpnQueueSubscription", reflect.TypeFor[QueueSubscription]()},
		{"monitor", "MsgVpnQueue", reflect.TypeFor[MonitorQueue]()},
		{"monitor", "MsgVpnQueueCollections", reflect.TypeFor[MonitorQueueCollections]()},
		{"monitor", "MsgVpnQueueCollectionsMsgs", reflect.TypeFor[Count]()},
		{"monitor", "MsgVpnQueueSubscription", reflect.TypeFor[QueueSubscription]()},
		{"config", "SempMeta", reflect.TypeFor[Meta]()},
		{"monitor", "SempMeta", reflect.TypeFor[Meta]()},
		{"config", "SempError", reflect.TypeFor[Error]()},
		{"config", "SempPaging", reflect.TypeFor[Paging]()},
		{"config", "SempRequest", reflect.TypeFor[Request]()},
	} {
		t.Run(tc.api+"/"+tc.def, func(t *testing.T) {
			def, ok := defs[tc.api][tc.def]
			require.True(t, ok, "no definition %s in the %s spec", tc.def, tc.api)
			for i := range tc.typ.NumField() {
				f := tc.typ.Field(i)
				name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
				p, ok := def.Properties[name]
				require.True(t, ok, "%s.%s: %q is not a property of %s", tc.typ.Name(), f.Name, name, tc.def)
				ft := f.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				switch ft.Kind() {
				case reflect.String:
					require.Equal(t, "string", p.Type, "%s.%s", tc.typ.Name(), f.Name)
				case reflect.Bool:
					require.Equal(t, "boolean", p.Type, "%s.%s", tc.typ.Name(), f.Name)
				case reflect.Int32:
					require.Equal(t, []string{"integer", "int32"}, []string{p.Type, p.Format}, "%s.%s", tc.typ.Name(), f.Name)
				case reflect.Int64:
					require.Equal(t, []string{"integer", "int64"}, []string{p.Type, p.Format}, "%s.%s", tc.typ.Name(), f.Name)
				case reflect.Int:
					require.Equal(t, "integer", p.Type, "%s.%s", tc.typ.Name(), f.Name)
				case reflect.Struct:
					require.NotEmpty(t, p.Ref, "%s.%s: the spec has no object here", tc.typ.Name(), f.Name)
				default:
					t.Fatalf("%s.%s: unexpected Go type %s", tc.typ.Name(), f.Name, ft)
				}
			}
		})
	}
}

// TestEnumerationsMatchTheSpec checks the attribute values this package
// names against the enums of the config API's MsgVpnQueue.
func TestEnumerationsMatchTheSpec(t *testing.T) {
	q := loadDefs(t, "config")["MsgVpnQueue"].Properties
	require.ElementsMatch(t, []string{AccessExclusive, AccessNonExclusive}, q["accessType"].Enum)
	require.Equal(t, Permissions, q["permission"].Enum)
	require.Equal(t, RejectOnDiscardBehaviors, q["rejectMsgToSenderOnDiscardBehavior"].Enum)
}
