// Command orchd is a standalone WS-BPEL 2.0 orchestration server.
//
// Run "orchd help" for its commands (commands.go lists them), "orchd
// help COMMAND" for one command's usage and flags, and "orchd help
// --all" for all of them as the Markdown command reference.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes one command line and returns the exit code: with no
// arguments it lists the commands (exit 2); an argument list that starts
// with a flag is serve's.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		listCommands(stderr)
		return 2
	}
	name := "serve"
	switch a := args[0]; {
	case a == "help" || a == "-h" || a == "-help" || a == "--help":
		return help(args[1:], stdout, stderr)
	case a == "--version" || a == "-version":
		name, args = "version", args[1:]
	case a != "" && a[0] != '-':
		name, args = a, args[1:]
	}
	c, ok := lookup(name)
	if !ok {
		fmt.Fprintf(stderr, "orchd: unknown command %q\n\n", name)
		listCommands(stderr)
		return 2
	}
	return c.exec(ctx, args, stdout, stderr)
}
