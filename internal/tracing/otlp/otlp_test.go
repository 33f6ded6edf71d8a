package otlp

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/require"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// receiver records the spans that reach a fake collector.
type receiver struct {
	mu       sync.Mutex
	requests int
	spans    []string
	services []string
}

func (r *receiver) record(req *coltrace.ExportTraceServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests++
	for _, rs := range req.GetResourceSpans() {
		for _, a := range rs.GetResource().GetAttributes() {
			if a.GetKey() == "service.name" {
				r.services = append(r.services, a.GetValue().GetStringValue())
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				r.spans = append(r.spans, s.GetName())
			}
		}
	}
}

func (r *receiver) snapshot() (int, []string, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests, append([]string(nil), r.spans...), append([]string(nil), r.services...)
}

// newHTTPReceiver is an OTLP/HTTP collector on 127.0.0.1 decoding protobuf
// POSTs to /v1/traces.
func newHTTPReceiver(t *testing.T) (*receiver, string) {
	t.Helper()
	rec := &receiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" {
			http.NotFound(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var req coltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rec.record(&req)
		w.Header().Set("Content-Type", "application/x-protobuf")
		out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	return rec, strings.TrimPrefix(srv.URL, "http://")
}

type grpcTraceService struct {
	coltrace.UnimplementedTraceServiceServer
	rec *receiver
}

func (g *grpcTraceService) Export(_ context.Context, req *coltrace.ExportTraceServiceRequest) (*coltrace.ExportTraceServiceResponse, error) {
	g.rec.record(req)
	return &coltrace.ExportTraceServiceResponse{}, nil
}

// newGRPCReceiver is an OTLP/gRPC collector on 127.0.0.1.
func newGRPCReceiver(t *testing.T) (*receiver, string) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	rec := &receiver{}
	srv := grpc.NewServer()
	coltrace.RegisterTraceServiceServer(srv, &grpcTraceService{rec: rec})
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return rec, lis.Addr().String()
}

func TestTracerExportsSpans(t *testing.T) {
	httpRec, httpAddr := newHTTPReceiver(t)
	grpcRec, grpcAddr := newGRPCReceiver(t)

	tests := []struct {
		name string
		conf string
		recs []*receiver
	}{
		{name: "http", conf: "http: [{address: " + httpAddr + "}]", recs: []*receiver{httpRec}},
		{name: "grpc", conf: "grpc: [{address: " + grpcAddr + "}]", recs: []*receiver{grpcRec}},
		{
			name: "both with tags",
			conf: "service: orders\nhttp: [{address: " + httpAddr + "}]\ngrpc: [{address: " + grpcAddr + "}]\ntags: {env: test}",
			recs: []*receiver{httpRec, grpcRec},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := make([]int, len(tt.recs))
			for i, r := range tt.recs {
				before[i], _, _ = r.snapshot()
			}
			pConf, err := Spec().ParseYAML(tt.conf, nil)
			require.NoError(t, err)
			tp, err := NewFromParsed(t.Context(), pConf)
			require.NoError(t, err)
			_, span := tp.Tracer("test").Start(t.Context(), "span-"+tt.name)
			span.End()
			// Shutdown is what Benthos calls on exit: it must flush.
			require.NoError(t, tp.Shutdown(t.Context()))
			for i, r := range tt.recs {
				n, spans, services := r.snapshot()
				require.Greater(t, n, before[i], "no export request reached the receiver")
				require.Contains(t, spans, "span-"+tt.name)
				if strings.Contains(tt.conf, "service: orders") {
					require.Contains(t, services, "orders")
				} else {
					require.Contains(t, services, "connect-solace")
				}
			}
		})
	}
}

func TestTracerSampling(t *testing.T) {
	rec, addr := newHTTPReceiver(t)
	pConf, err := Spec().ParseYAML("http: [{address: "+addr+"}]\nsampling: {enabled: true, ratio: 0}", nil)
	require.NoError(t, err)
	tp, err := NewFromParsed(t.Context(), pConf)
	require.NoError(t, err)
	for range 20 {
		_, span := tp.Tracer("test").Start(t.Context(), "dropped")
		span.End()
	}
	require.NoError(t, tp.Shutdown(t.Context()))
	_, spans, _ := rec.snapshot()
	require.Empty(t, spans, "a ratio of 0 must drop every root span")
}

func TestTracerRejectsBadConfig(t *testing.T) {
	for _, conf := range []string{
		"http: [{address: ''}]",
		"grpc: [{address: 127.0.0.1:1}]\nsampling: {enabled: true}",
		"grpc: [{address: 127.0.0.1:1}]\nsampling: {enabled: true, ratio: 2}",
	} {
		t.Run(conf, func(t *testing.T) {
			pConf, err := Spec().ParseYAML(conf, nil)
			require.NoError(t, err)
			_, err = NewFromParsed(t.Context(), pConf)
			require.Error(t, err)
		})
	}
}

func TestTracerLintRules(t *testing.T) {
	tests := []struct {
		conf string
		want string
	}{
		{conf: "{}", want: "no collector configured"},
		{conf: "grpc: [{address: localhost:4317}]\nsampling: {enabled: true}", want: "sampling.ratio is required"},
		{conf: "grpc: [{address: localhost:4317}]\nsampling: {enabled: true, ratio: 1.5}", want: "between 0 and 1"},
		{conf: "grpc: [{address: localhost:4317}]\nsampling: {enabled: true, ratio: 0.5}"},
	}
	env := service.NewEnvironment()
	for _, tt := range tests {
		t.Run(tt.conf, func(t *testing.T) {
			indented := "    " + strings.ReplaceAll(tt.conf, "\n", "\n    ")
			lints, err := env.FullConfigSchema("", "").NewStreamConfigLinter().
				LintYAML([]byte("tracer:\n  " + TracerName + ":\n" + indented + "\n"))
			require.NoError(t, err)
			if tt.want == "" {
				require.Empty(t, lints)
				return
			}
			require.Len(t, lints, 1, "%v", lints)
			require.Contains(t, lints[0].What, tt.want)
		})
	}
}
