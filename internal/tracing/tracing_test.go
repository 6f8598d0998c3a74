package tracing

import (
	"context"
	"strings"
	"testing"
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
