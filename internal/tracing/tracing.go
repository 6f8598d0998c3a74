package tracing

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Options configure Start.
type Options struct {
	// Endpoint is the OTLP/HTTP collector's base URL (http or https,
	// e.g. http://127.0.0.1:4318): spans go to its /v1/traces unless it
	// names a path of its own. Empty means the standard environment
	// variables' (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
	// OTEL_EXPORTER_OTLP_ENDPOINT), and none of those: tracing is off.
	Endpoint string
	// Version is orchd's version, the resource's service.version.
	Version string
	// Getenv reads the environment for the choices orchd makes (on or
	// off, the protocol); nil means os.Getenv. The exporter reads its
	// own settings from the process's environment.
	Getenv func(string) string
	// Logger is told where spans go; nil discards it.
	Logger *slog.Logger
}

// Tracing is a running tracer provider.
type Tracing struct {
	tp *sdktrace.TracerProvider
	// Tracer makes orchd's spans.
	Tracer trace.Tracer
	// Endpoint says where spans go, for the log ("environment" when the
	// environment variables name it).
	Endpoint string
}

// Enabled reports whether opts turn tracing on: an endpoint, or one in
// the environment, and OTEL_SDK_DISABLED not true.
func Enabled(opts Options) bool {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false
	}
	return opts.Endpoint != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
}

// Start starts exporting spans as opts say; it returns nil (and no
// error) when tracing is off (Enabled). The exporter also reads the
// other OTEL_EXPORTER_OTLP_* variables (headers, timeout, certificate,
// compression), the provider OTEL_TRACES_SAMPLER (default: sample
// every trace whose parent is sampled, and every new one).
func Start(ctx context.Context, opts Options) (*Tracing, error) {
	if !Enabled(opts) {
		return nil, nil
	}
	exp, where, err := exporter(ctx, opts)
	if err != nil {
		return nil, err
	}
	attrs := []attribute.KeyValue{attribute.String("service.name", "orchd")}
	if opts.Version != "" {
		attrs = append(attrs, attribute.String("service.version", opts.Version))
	}
	// The environment's attributes (OTEL_SERVICE_NAME,
	// OTEL_RESOURCE_ATTRIBUTES) come last and win.
	res, err := resource.New(ctx, resource.WithAttributes(attrs...), resource.WithHost(), resource.WithFromEnv())
	if err != nil {
		return nil, fmt.Errorf("OpenTelemetry resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	if opts.Logger != nil {
		opts.Logger.Info("OpenTelemetry traces", slog.String("endpoint", where))
	}
	return &Tracing{tp: tp, Tracer: tp.Tracer("github.com/orchd/orchd"), Endpoint: where}, nil
}

// exporter is the OTLP exporter opts and the environment ask for: over
// gRPC when OTEL_EXPORTER_OTLP_TRACES_PROTOCOL (or
// OTEL_EXPORTER_OTLP_PROTOCOL) says grpc, else over HTTP; and where it
// sends, for the log.
func exporter(ctx context.Context, opts Options) (sdktrace.SpanExporter, string, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	proto := getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if proto == "" {
		proto = getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	where := "environment"
	var (
		exp sdktrace.SpanExporter
		err error
	)
	switch proto {
	case "grpc":
		var gopts []otlptracegrpc.Option
		if opts.Endpoint != "" {
			if _, err := EndpointURL(opts.Endpoint); err != nil {
				return nil, "", err
			}
			gopts, where = append(gopts, otlptracegrpc.WithEndpointURL(opts.Endpoint)), opts.Endpoint
		}
		exp, err = otlptracegrpc.New(ctx, gopts...)
		where = "grpc " + where
	case "", "http/protobuf":
		var hopts []otlptracehttp.Option
		if opts.Endpoint != "" {
			u, err := EndpointURL(opts.Endpoint)
			if err != nil {
				return nil, "", err
			}
			hopts, where = append(hopts, otlptracehttp.WithEndpointURL(u)), u
		}
		exp, err = otlptracehttp.New(ctx, hopts...)
	default:
		return nil, "", fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL %q: orchd exports http/protobuf or grpc", proto)
	}
	if err != nil {
		return nil, "", fmt.Errorf("OpenTelemetry exporter: %w", err)
	}
	return exp, where, nil
}

// EndpointURL is the traces URL of an OTLP/HTTP base URL: its
// /v1/traces when it has no path.
func EndpointURL(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("--otel-endpoint %q: want an http or https URL of an OTLP/HTTP collector, such as http://127.0.0.1:4318", base)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/traces"
	}
	return u.String(), nil
}

// Close is Shutdown bounded by closeWait, its failure logged.
func (t *Tracing) Close(log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), closeWait)
	defer cancel()
	if err := t.Shutdown(ctx); err != nil {
		log.Warn("spans lost", slog.Any("err", err))
	}
}

// closeWait bounds how long Close waits for the collector.
const closeWait = 5 * time.Second

// Shutdown sends the spans not sent yet and stops the provider; ctx
// bounds the wait. A nil Tracing has nothing to do.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	if err := t.tp.Shutdown(ctx); err != nil {
		return fmt.Errorf("OpenTelemetry: sending the last spans: %w", err)
	}
	return nil
}

// TracerOrNil is t's tracer, nil for a nil Tracing (tracing off).
func (t *Tracing) TracerOrNil() trace.Tracer {
	if t == nil {
		return nil
	}
	return t.Tracer
}
