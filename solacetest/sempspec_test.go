package solacetest

// A small Swagger 2.0 schema checker: it loads Solace's SEMPv2 specs
// (testdata/semp), finds the operation a request addresses, and checks the
// request body and the response body against the operation's schemas.
// Objects may only carry properties the schema declares, required ones must
// be present, and every value must have the declared JSON type, format range
// and enum value.

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type swaggerSchema struct {
	Ref                  string                    `json:"$ref"`
	Type                 string                    `json:"type"`
	Format               string                    `json:"format"`
	Enum                 []any                     `json:"enum"`
	Properties           map[string]*swaggerSchema `json:"properties"`
	Required             []string                  `json:"required"`
	Items                *swaggerSchema            `json:"items"`
	AdditionalProperties json.RawMessage           `json:"additionalProperties"`
}

type swaggerParam struct {
	Ref      string         `json:"$ref"`
	In       string         `json:"in"`
	Name     string         `json:"name"`
	Required bool           `json:"required"`
	Schema   *swaggerSchema `json:"schema"`
}

type swaggerOp struct {
	OperationID string                                     `json:"operationId"`
	Parameters  []swaggerParam                             `json:"parameters"`
	Responses   map[string]struct{ Schema *swaggerSchema } `json:"responses"`
}

type swaggerSpec struct {
	BasePath    string                                `json:"basePath"`
	Paths       map[string]map[string]json.RawMessage `json:"paths"`
	Definitions map[string]*swaggerSchema             `json:"definitions"`
}

var (
	specsOnce sync.Once
	specs     map[string]*swaggerSpec // by base path
	specsErr  error
)

// sempSpecs loads both specs once per test binary.
func sempSpecs(t testing.TB) map[string]*swaggerSpec {
	t.Helper()
	specsOnce.Do(func() {
		specs = map[string]*swaggerSpec{}
		for _, name := range []string{"semp-v2-config", "semp-v2-monitor", "semp-v2-action"} {
			sp, err := loadSpec("testdata/semp/" + name + ".json.gz")
			if err != nil {
				specsErr = err
				return
			}
			specs[sp.BasePath] = sp
		}
	})
	require.NoError(t, specsErr)
	return specs
}

func loadSpec(file string) (*swaggerSpec, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var sp swaggerSpec
	if err := json.NewDecoder(zr).Decode(&sp); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return &sp, nil
}

// operation finds the spec operation for method on escapedPath (the full
// request path), returning its path template.
func (sp *swaggerSpec) operation(method, escapedPath string) (*swaggerOp, string, error) {
	rest := strings.TrimPrefix(escapedPath, sp.BasePath)
	segs := strings.Split(rest, "/")
	for tmpl, ops := range sp.Paths {
		tsegs := strings.Split(tmpl, "/")
		if len(tsegs) != len(segs) {
			continue
		}
		match := true
		for i := range tsegs {
			if strings.HasPrefix(tsegs[i], "{") {
				match = match && segs[i] != ""
			} else {
				match = match && tsegs[i] == segs[i]
			}
		}
		if !match {
			continue
		}
		raw, ok := ops[strings.ToLower(method)]
		if !ok {
			return nil, tmpl, nil
		}
		var op swaggerOp
		if err := json.Unmarshal(raw, &op); err != nil {
			return nil, tmpl, err
		}
		return &op, tmpl, nil
	}
	return nil, "", nil
}

func (sp *swaggerSpec) resolve(s *swaggerSchema) (*swaggerSchema, error) {
	for s != nil && s.Ref != "" {
		name, ok := strings.CutPrefix(s.Ref, "#/definitions/")
		if !ok {
			return nil, fmt.Errorf("unsupported $ref %q", s.Ref)
		}
		next, ok := sp.Definitions[name]
		if !ok {
			return nil, fmt.Errorf("unknown definition %q", name)
		}
		s = next
	}
	return s, nil
}

// validate checks v (decoded with UseNumber) against s; at names the
// position for messages.
func (sp *swaggerSpec) validate(s *swaggerSchema, v any, at string) []string {
	s, err := sp.resolve(s)
	if err != nil {
		return []string{at + ": " + err.Error()}
	}
	if s == nil {
		return nil
	}
	typ := s.Type
	if typ == "" && s.Properties != nil {
		typ = "object"
	}
	var errs []string
	bad := func(format string, args ...any) []string {
		return append(errs, at+": "+fmt.Sprintf(format, args...))
	}
	switch typ {
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			return bad("want object, got %T", v)
		}
		for _, req := range s.Required {
			if _, ok := obj[req]; !ok {
				errs = bad("missing required property %q", req)
			}
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			ps, ok := s.Properties[k]
			if !ok {
				if len(s.AdditionalProperties) > 0 && string(s.AdditionalProperties) != "false" {
					continue
				}
				errs = bad("property %q is not in the schema", k)
				continue
			}
			errs = append(errs, sp.validate(ps, obj[k], at+"."+k)...)
		}
	case "array":
		arr, ok := v.([]any)
		if !ok {
			return bad("want array, got %T", v)
		}
		for i, item := range arr {
			errs = append(errs, sp.validate(s.Items, item, fmt.Sprintf("%s[%d]", at, i))...)
		}
	case "string":
		str, ok := v.(string)
		if !ok {
			return bad("want string, got %T", v)
		}
		if len(s.Enum) > 0 && !slices.Contains(s.Enum, any(str)) {
			errs = bad("%q is not one of %v", str, s.Enum)
		}
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return bad("want integer, got %T", v)
		}
		i, err := strconv.ParseInt(n.String(), 10, 64)
		if err != nil {
			return bad("%s is not an int64", n)
		}
		if s.Format == "int32" && (i < math.MinInt32 || i > math.MaxInt32) {
			errs = bad("%d overflows int32", i)
		}
	case "number":
		if _, ok := v.(json.Number); !ok {
			return bad("want number, got %T", v)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return bad("want boolean, got %T", v)
		}
	default:
		return bad("schema type %q not supported by the checker", typ)
	}
	return errs
}

func decodeJSONNumbers(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// specRecorder validates exchanges and remembers which operations it saw.
type specRecorder struct {
	t  testing.TB
	mu sync.Mutex
	// seen holds "METHOD template status" for each validated exchange.
	seen map[string]bool
}

func newSpecRecorder(t testing.TB) *specRecorder {
	return &specRecorder{t: t, seen: map[string]bool{}}
}

// check validates one exchange and returns the problems found.
func (rec *specRecorder) check(method, escapedPath string, reqBody []byte, status int, header http.Header, respBody []byte) []string {
	var problems []string
	if isSEMPHelp(escapedPath) {
		// The help pages are HTML for people, outside the API's schemas.
		if ct := header.Get("Content-Type"); status == http.StatusOK && !strings.HasPrefix(ct, "text/html") {
			problems = append(problems, fmt.Sprintf("%s %s: help page with Content-Type %q", method, escapedPath, ct))
		}
		return problems
	}
	var sp *swaggerSpec
	for base, s := range sempSpecs(rec.t) {
		if strings.HasPrefix(escapedPath, base+"/") {
			sp = s
		}
	}
	if sp == nil {
		// Outside the API: only a SEMP error envelope is right.
		sp = sempSpecs(rec.t)["/SEMP/v2/config"]
		if status < 400 {
			problems = append(problems, fmt.Sprintf("%s %s is under no SEMP base path but answered %d", method, escapedPath, status))
		}
	}
	op, tmpl, err := sp.operation(method, escapedPath)
	if err != nil {
		return []string{err.Error()}
	}
	respSchema := &swaggerSchema{Ref: "#/definitions/SempMetaOnlyResponse"}
	key := method + " " + strings.TrimPrefix(sp.BasePath, "/SEMP/v2/") + tmpl
	if op == nil {
		// Not an operation the spec has: only an error answer is right.
		if status < 400 {
			problems = append(problems, fmt.Sprintf("%s %s answered %d but the spec has no such operation", method, escapedPath, status))
		}
		key = method + " (no operation)"
	} else {
		if r, ok := op.Responses[strconv.Itoa(status)]; ok {
			respSchema = r.Schema
		} else if r, ok := op.Responses["default"]; ok && status >= 400 {
			respSchema = r.Schema
		} else {
			problems = append(problems, fmt.Sprintf("%s %s: status %d is not a documented response", method, tmpl, status))
		}
		// A request the spec forbids must not succeed; refusing it is right.
		if len(reqBody) > 0 && status < 300 {
			for _, p := range op.Parameters {
				if p.In != "body" {
					continue
				}
				v, err := decodeJSONNumbers(reqBody)
				if err != nil {
					problems = append(problems, "request body is not JSON: "+err.Error())
					break
				}
				for _, e := range sp.validate(p.Schema, v, "request") {
					problems = append(problems, method+" "+tmpl+": accepted invalid "+e)
				}
			}
		}
	}
	if ct := header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		problems = append(problems, fmt.Sprintf("%s %s: Content-Type %q", method, escapedPath, ct))
	}
	v, err := decodeJSONNumbers(respBody)
	if err != nil {
		return append(problems, fmt.Sprintf("%s %s: response is not JSON: %v", method, escapedPath, err))
	}
	for _, e := range sp.validate(respSchema, v, "response") {
		problems = append(problems, fmt.Sprintf("%s %s (%d): %s", method, tmpl, status, e))
	}
	if m, ok := v.(map[string]any); ok {
		if meta, ok := m["meta"].(map[string]any); ok {
			if rc, _ := meta["responseCode"].(json.Number); rc.String() != strconv.Itoa(status) {
				problems = append(problems, fmt.Sprintf("%s %s: meta.responseCode %v differs from HTTP %d", method, escapedPath, meta["responseCode"], status))
			}
			if status >= 400 && meta["error"] == nil {
				problems = append(problems, fmt.Sprintf("%s %s: HTTP %d without meta.error", method, escapedPath, status))
			}
		}
	}
	rec.mu.Lock()
	rec.seen[fmt.Sprintf("%s %d", key, status)] = true
	rec.mu.Unlock()
	return problems
}

// wrap returns h with every exchange checked against the spec; problems
// fail the test.
func (rec *specRecorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reqBody, err := io.ReadAll(r.Body)
		if err != nil {
			rec.t.Errorf("reading request body: %v", err)
		}
		r.Body = io.NopCloser(bytes.NewReader(reqBody))
		rr := httptest.NewRecorder()
		h.ServeHTTP(rr, r)
		for _, p := range rec.check(r.Method, r.URL.EscapedPath(), reqBody, rr.Code, rr.Header(), rr.Body.Bytes()) {
			rec.t.Errorf("SEMP spec violation: %s\nresponse: %s", p, rr.Body.String())
		}
		for k, vs := range rr.Header() {
			w.Header()[k] = vs
		}
		w.WriteHeader(rr.Code)
		_, _ = w.Write(rr.Body.Bytes())
	})
}

// transport returns an http.RoundTripper that checks every exchange it
// carries against the spec, from the client's side. It lets tests validate a
// server they cannot wrap, such as a running Broker.
func (rec *specRecorder) transport(next http.RoundTripper) http.RoundTripper {
	return specTransport{rec: rec, next: next}
}

type specTransport struct {
	rec  *specRecorder
	next http.RoundTripper
}

func (st specTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	var reqBody []byte
	if r.Body != nil {
		var err error
		if reqBody, err = io.ReadAll(r.Body); err != nil {
			return nil, err
		}
		_ = r.Body.Close()
		r.Body = io.NopCloser(bytes.NewReader(reqBody))
	}
	resp, err := st.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	respBody, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(respBody))
	for _, p := range st.rec.check(r.Method, r.URL.EscapedPath(), reqBody, resp.StatusCode, resp.Header, respBody) {
		st.rec.t.Errorf("SEMP spec violation: %s\nresponse: %s", p, respBody)
	}
	return resp, nil
}

// covered lists the validated "METHOD template status" keys.
func (rec *specRecorder) covered() []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	out := make([]string, 0, len(rec.seen))
	for k := range rec.seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestSpecCheckerCatchesViolations proves the checker fails what it must.
func TestSpecCheckerCatchesViolations(t *testing.T) {
	const path = "/SEMP/v2/config/msgVpns/default/queues/q"
	meta := `"meta":{"request":{"method":"GET","uri":"http://x` + path + `"},"responseCode":200}`
	tests := []struct {
		name   string
		method string
		path   string
		req    string
		status int
		body   string
		want   string // "" means valid
	}{
		{name: "valid", method: "GET", path: path, status: 200, body: `{"data":{"queueName":"q","maxMsgSize":5},` + meta + `}`},
		{name: "unknown field", method: "GET", path: path, status: 200, body: `{"data":{"queueName":"q","bindCount":1},` + meta + `}`, want: `property "bindCount" is not in the schema`},
		{name: "wrong type", method: "GET", path: path, status: 200, body: `{"data":{"queueName":"q","ingressEnabled":"true"},` + meta + `}`, want: "want boolean"},
		{name: "integer as float", method: "GET", path: path, status: 200, body: `{"data":{"maxBindCount":1.5},` + meta + `}`, want: "is not an int64"},
		{name: "int32 overflow", method: "GET", path: path, status: 200, body: `{"data":{"maxMsgSize":3000000000},` + meta + `}`, want: "overflows int32"},
		{name: "bad enum", method: "GET", path: path, status: 200, body: `{"data":{"accessType":"shared"},` + meta + `}`, want: `"shared" is not one of`},
		{name: "missing meta", method: "GET", path: path, status: 200, body: `{"data":{}}`, want: `missing required property "meta"`},
		{name: "missing error code", method: "GET", path: path, status: 404, body: `{"meta":{"error":{"status":"NOT_FOUND","description":"x"},"request":{"method":"GET"},"responseCode":404}}`, want: `missing required property "code"`},
		{name: "error without meta.error", method: "GET", path: path, status: 404, body: `{"meta":{"request":{"method":"GET"},"responseCode":404}}`, want: "without meta.error"},
		{name: "responseCode mismatch", method: "GET", path: path, status: 200, body: `{` + meta[:len(meta)-4] + `201}}`, want: "differs from HTTP 200"},
		{name: "bad request body", method: "POST", path: "/SEMP/v2/config/msgVpns/default/queues", req: `{"queueName":"q","ingressEnabled":1}`, status: 200, body: `{"data":{"queueName":"q"},` + meta + `}`, want: "request.ingressEnabled: want boolean"},
		{name: "monitor field in config", method: "GET", path: path, status: 200, body: `{"data":{"spooledMsgCount":1},` + meta + `}`, want: `"spooledMsgCount" is not in the schema`},
		{name: "monitor", method: "GET", path: "/SEMP/v2/monitor/msgVpns/default/queues/q", status: 200, body: `{"data":{"spooledMsgCount":1},"collections":{"txFlows":{"count":2}},` + meta + `}`},
		{name: "undocumented success", method: "POST", path: path, status: 200, body: `{` + meta + `}`, want: "no such operation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := newSpecRecorder(t)
			h := http.Header{"Content-Type": {"application/json"}}
			problems := rec.check(tt.method, tt.path, []byte(tt.req), tt.status, h, []byte(tt.body))
			if tt.want == "" {
				assert.Empty(t, problems)
				return
			}
			assert.Contains(t, strings.Join(problems, "\n"), tt.want)
		})
	}
}
