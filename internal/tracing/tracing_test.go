package tracing

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
)

func TestEnabled(t *testing.T) {
	tests := []struct {
		name     string
		endpoint string
		env      map[string]string
		want     bool
	}{
		{"nothing", "", nil, false},
		{"flag", "http://127.0.0.1:4318", nil, true},
		{"OTEL_EXPORTER_OTLP_ENDPOINT", "", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, true},
		{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, true},
		{"other variables alone", "", map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "a=b"}, false},
		{"OTEL_SDK_DISABLED wins", "http://127.0.0.1:4318", map[string]string{"OTEL_SDK_DISABLED": "TRUE"}, false},
	}
	for _, tt := range tests {
		got := Enabled(Options{Endpoint: tt.endpoint, Getenv: func(k string) string { return tt.env[k] }})
		if got != tt.want {
			t.Errorf("%s: Enabled = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestEndpointURL(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{in: "http://127.0.0.1:4318", want: "http://127.0.0.1:4318/v1/traces"},
		{in: "https://otel.example:4318/", want: "https://otel.example:4318/v1/traces"},
		{in: "http://c:4318/custom/traces", want: "http://c:4318/custom/traces"},
		{in: "127.0.0.1:4318", err: "want an http or https URL"},
		{in: "grpc://c:4317", err: "want an http or https URL"},
	}
	for _, tt := range tests {
		got, err := EndpointURL(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("EndpointURL(%q) = %q, %v; want an error saying %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("EndpointURL(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// Off, Start returns nil, and a nil Tracing's methods do nothing.
func TestStartOff(t *testing.T) {
	tr, err := Start(context.Background(), Options{Getenv: func(string) string { return "" }})
	if tr != nil || err != nil {
		t.Fatalf("Start = %v, %v; want nil, nil", tr, err)
	}
	if tr.TracerOrNil() != nil || tr.Shutdown(context.Background()) != nil {
		t.Error("a nil Tracing has a tracer or fails to shut down")
	}
}

// grpcCollector is an OTLP/gRPC trace receiver keeping span names.
type grpcCollector struct {
	coltracepb.UnimplementedTraceServiceServer
	mu    sync.Mutex
	names []string
}

func (c *grpcCollector) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				c.names = append(c.names, s.Name)
			}
		}
	}
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// With OTEL_EXPORTER_OTLP_PROTOCOL=grpc the spans go to a gRPC
// collector; Shutdown sends those not sent yet.
func TestStartGRPC(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &grpcCollector{}
	gs := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(gs, c)
	go func() { _ = gs.Serve(ln) }()
	defer gs.Stop()
	env := map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}
	tr, err := Start(context.Background(), Options{Endpoint: "http://" + ln.Addr().String(), Getenv: func(k string) string { return env[k] }})
	if err != nil || tr == nil {
		t.Fatalf("Start = %v, %v", tr, err)
	}
	if !strings.HasPrefix(tr.Endpoint, "grpc ") {
		t.Errorf("Endpoint %q, want it to say grpc", tr.Endpoint)
	}
	_, sp := tr.Tracer.Start(context.Background(), "probe")
	sp.End()
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.names) != 1 || c.names[0] != "probe" {
		t.Errorf("the collector got %v, want [probe]", c.names)
	}
}

func TestStartUnknownProtocol(t *testing.T) {
	env := map[string]string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json"}
	if _, err := Start(context.Background(), Options{Endpoint: "http://127.0.0.1:4318", Getenv: func(k string) string { return env[k] }}); err == nil ||
		!strings.Contains(err.Error(), `"http/json"`) {
		t.Errorf("Start = %v, want an error naming the protocol", err)
	}
}
