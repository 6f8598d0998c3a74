// Package tracing owns orchd's OpenTelemetry set-up: whether traces are
// on (--otel-endpoint, or the standard OTEL_EXPORTER_OTLP_* environment
// variables), the OTLP/HTTP exporter, the batching tracer provider and
// its resource (service.name orchd unless OTEL_SERVICE_NAME says
// otherwise), and flushing it at shutdown. The spans themselves are made
// where the work is: internal/soap (an exchange, a partner call's trace
// context) and internal/process (runs, partner calls, REST calls,
// commits), through the trace.Tracer this package hands out.
//
// It imports no orchd package; nothing imports it but cmd.
package tracing
