// Command poref serves the purchase-order process of the workload contract
// written by hand in Go, with no engine (internal/reference): the reference
// that "orchd bench --vs" compares orchd with.
//
// Usage:
//
//	poref [--listen 127.0.0.1:8090] [--crm URL] [--erp URL]
//
// It serves POST /processes/PurchaseOrder and calls the CRM and ERP
// partners (by default the mock partners of "orchd mock-partners").
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/orchd/orchd/internal/reference"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("poref", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:8090", "address to serve /processes/PurchaseOrder on")
	crm := fs.String("crm", reference.DefaultCRMURL, "CRM partner endpoint")
	erp := fs.String("erp", reference.DefaultERPURL, "ERP partner endpoint")
	idle := fs.Duration("idle-timeout", 30*time.Second, "close keep-alive connections idle this long")
	level := fs.String("log-level", "info", "log level: debug, info, warn, error")
	floor := fs.Bool("transport-only", false, "measuring floor: do the exchange's HTTP legs with fixed messages and no XML work (see reference.Options.TransportOnly)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var l slog.Level
	if err := l.UnmarshalText([]byte(*level)); err != nil {
		fmt.Fprintf(stderr, "poref: --log-level %q: want debug, info, warn or error\n", *level)
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: l}))
	if err := serve(ctx, log, *listen, reference.Options{CRMURL: *crm, ERPURL: *erp, Logger: log, TransportOnly: *floor}, *idle); err != nil {
		log.Error("poref stopped", slog.Any("err", err))
		return 1
	}
	return 0
}

func serve(ctx context.Context, log *slog.Logger, listen string, o reference.Options, idle time.Duration) error {
	mux := http.NewServeMux()
	mux.Handle("/processes/PurchaseOrder", reference.New(o))
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", listen, err)
	}
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       idle,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("poref serving", slog.String("addr", ln.Addr().String()), slog.String("path", "/processes/PurchaseOrder"),
		slog.String("crm", o.CRMURL), slog.String("erp", o.ERPURL), slog.Bool("transport_only", o.TransportOnly))
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: %w", err)
	}
	log.Info("poref stopped")
	return nil
}
