package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/orchd/orchd/internal/mockpartner"
)

// mockCommand defines orchd mock-partners' flags; its run serves the
// example's CRM and ERP mock services until ctx ends.
func mockCommand(fs *flag.FlagSet) runFunc {
	crm := fs.String("crm", "127.0.0.1:9101", "address of the CRM mock service")
	erp := fs.String("erp", "127.0.0.1:9102", "address of the ERP mock service")
	level := fs.String("log-level", "info", "log level: debug, info, warn, error")
	return func(ctx context.Context, fs *flag.FlagSet, stdout, stderr io.Writer) int {
		log, err := newLogger(stderr, *level)
		if err != nil {
			fmt.Fprintln(stderr, "orchd:", err)
			return 2
		}
		log.Info("mock partners serving", slog.String("crm", *crm), slog.String("erp", *erp))
		if err := mockpartner.New(log).Serve(ctx, *crm, *erp); err != nil {
			log.Error("mock partners stopped", slog.Any("err", err))
			return 1
		}
		return 0
	}
}
