// Command orchd is a standalone WS-BPEL 2.0 orchestration server.
//
// Usage:
//
//	orchd [serve] [flags]        serve the bundles of a deploy directory
//	orchd mock-partners [flags]  serve the example's CRM and ERP mock services
//	orchd instances [flags]      list the stored instances of persistent processes
//	orchd ctl [flags] VERB ...   operate a running orchd through its management API
//	orchd bench [flags]          load a SOAP endpoint (closed loop) and report tx/s and latency
//	orchd xpath [flags] EXPR     evaluate an XPath 1.0 or 2.0 expression and print its items
//
// Run "orchd <command> -h" for a command's flags.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/orchd/orchd/internal/ctl"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes one command line and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmd := "serve"
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serve(ctx, args, stderr)
	case "mock-partners":
		return mockPartners(ctx, args, stderr)
	case "instances":
		return instances(ctx, args, stdout, stderr)
	case "bench":
		return bench(ctx, args, stdout, stderr)
	case "xpath":
		return xpathCmd(ctx, args, stdout, stderr)
	case "ctl":
		return ctl.Run(ctx, args, stdout, stderr)
	case "help":
		fmt.Fprintln(stdout, "usage: orchd [serve|mock-partners|instances|ctl|bench|xpath] [flags]; orchd <command> -h lists a command's flags")
		return 0
	}
	fmt.Fprintf(stderr, "orchd: unknown command %q (commands: serve, mock-partners, instances, ctl, bench, xpath)\n", cmd)
	return 2
}
