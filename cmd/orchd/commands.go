package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/orchd/orchd/internal/buildinfo"
	"github.com/orchd/orchd/internal/ctl"
	"github.com/orchd/orchd/internal/humantask"
	"github.com/orchd/orchd/internal/loadgen"
	"github.com/orchd/orchd/internal/process/compile"
)

// command is one subcommand of orchd: its row is its line in the
// listing, and its usage and flags are what `orchd help NAME`, `orchd
// NAME --help` and the command reference (`orchd help --all`) print.
type command struct {
	name, args, summary string
	// flags defines the command's flags on fs and returns what runs it
	// once they are parsed; nil for a command that parses its own
	// arguments (run, with its usage text and flags in usage and
	// globals).
	flags   func(fs *flag.FlagSet) runFunc
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) int
	usage   string
	globals func() *flag.FlagSet
}

// runFunc runs a command with its flags parsed (operands in fs.Args()).
type runFunc = func(ctx context.Context, fs *flag.FlagSet, stdout, stderr io.Writer) int

// commands is the table of orchd's commands, in the listing's order.
func commands() []command {
	return []command{
		{name: "serve", args: "[flags]", summary: "serve the bundles of a deploy directory (the command when the first argument is a flag)", flags: serveCommand},
		{name: "ctl", args: "[flags] VERB [ARGS]", summary: "operate a running orchd through its management API", run: ctl.Run, usage: ctl.Usage, globals: ctl.Flags},
		{name: "instances", args: "[flags]", summary: "list the stored instances of persistent processes", flags: instancesCommand},
		{name: "bench", args: "[flags]", summary: "load a SOAP endpoint (closed or open loop) and report tx/s and latency; exit 1 when a measured request fails or misses --expect", flags: loadgen.Command},
		{name: "lint", args: "[--json] [--compat ode] BUNDLE_DIR...", summary: "check bundles as a deploy would (WS-BPEL static analysis and compile errors) without serving them", run: compile.LintRunner(compile.LoadOptions{Extensions: linkedExtensions()}, taskLint()), usage: compile.LintUsage, globals: compile.LintFlags},
		{name: "xpath", args: "[flags] EXPR", summary: "evaluate an XPath 1.0 or 2.0 expression and print its items", flags: xpathCommand},
		{name: "mock-partners", args: "[flags]", summary: "serve the example's CRM and ERP mock services", flags: mockCommand},
		{name: "version", args: "", summary: "print orchd's version, the VCS revision it was built from and its Go version (also orchd --version)", flags: versionCommand},
	}
}

// versionCommand prints the build information, as GET /api/v1/ of the
// management API says it.
func versionCommand(fs *flag.FlagSet) runFunc {
	return func(_ context.Context, fs *flag.FlagSet, stdout, stderr io.Writer) int {
		if fs.NArg() > 0 {
			fmt.Fprintf(stderr, "orchd version: takes no arguments, not %q\n", fs.Args())
			return 2
		}
		fmt.Fprintln(stdout, buildinfo.Read())
		return 0
	}
}

func lookup(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// exec parses args with the command's flags and runs it.
func (c command) exec(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if c.run != nil {
		return c.run(ctx, args, stdout, stderr)
	}
	fs := c.flagSet(stderr)
	run := c.flags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	return run(ctx, fs, stdout, stderr)
}

// flagSet is an empty FlagSet whose usage is the command's.
func (c command) flagSet(w io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(w)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: orchd %s %s\n\n%s.\n\nflags:\n", c.name, c.args, upper(c.summary))
		fs.PrintDefaults()
	}
	return fs
}

// listCommands prints the commands, one a line.
func listCommands(w io.Writer) {
	fmt.Fprint(w, "orchd is a WS-BPEL 2.0 orchestration server.\n\nusage: orchd COMMAND [flags]\n\ncommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-14s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, "\nRun \"orchd help COMMAND\" or \"orchd COMMAND --help\" for a command's usage and flags,\n\"orchd help --all\" for every command's, in Markdown.\n")
}

// help is `orchd help [COMMAND | --all]`.
func help(args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0:
		listCommands(stdout)
		return 0
	case len(args) == 1 && args[0] == "--all":
		reference(stdout)
		return 0
	case len(args) > 1:
		fmt.Fprintln(stderr, "usage: orchd help [COMMAND | --all]")
		return 2
	}
	c, ok := lookup(args[0])
	if !ok {
		fmt.Fprintf(stderr, "orchd help: unknown command %q\n\n", args[0])
		listCommands(stderr)
		return 2
	}
	if c.flags == nil {
		fmt.Fprint(stdout, c.usage)
		return 0
	}
	fs := c.flagSet(stdout)
	c.flags(fs)
	fs.Usage()
	return 0
}

// reference prints every command's usage and flags, with their
// defaults, as Markdown: the command reference (docs/commands.md).
func reference(w io.Writer) {
	fmt.Fprint(w, "# orchd commands\n\n<!-- Generated by `orchd help --all`; change the flags in cmd/orchd, not this page. -->\n\n")
	fmt.Fprint(w, "| command | what it does |\n|---|---|\n")
	for _, c := range commands() {
		fmt.Fprintf(w, "| [`orchd %s`](#orchd-%s) | %s |\n", c.name, c.name, c.summary)
	}
	for _, c := range commands() {
		fmt.Fprintf(w, "\n## orchd %s\n\n%s.\n\n", c.name, upper(c.summary))
		fs := c.flagSet(io.Discard)
		if c.flags != nil {
			c.flags(fs)
			fmt.Fprintf(w, "```\norchd %s %s\n```\n", c.name, c.args)
		} else {
			fmt.Fprintf(w, "```\n%s```\n", c.usage)
			fs = c.globals()
		}
		fmt.Fprint(w, "\n| flag | default | meaning |\n|---|---|---|\n")
		fs.VisitAll(func(f *flag.Flag) {
			arg, usage := flag.UnquoteUsage(f)
			if arg != "" {
				arg = " " + arg
			}
			def := f.DefValue
			if def != "" {
				def = "`" + def + "`"
			}
			fmt.Fprintf(w, "| `--%s%s` | %s | %s |\n", f.Name, arg, def, strings.ReplaceAll(usage, "|", `\|`))
		})
	}
}

// upper is s with its first letter in upper case.
func upper(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// taskLint checks the task definitions orchd lint finds (a bundle's, a
// WSO2 BPS task package's) with the task engine's own loading.
func taskLint() *compile.TaskLint {
	return &compile.TaskLint{Holds: humantask.HoldsDefinitions,
		Bundle: func(dir string) error {
			_, err := humantask.LoadDefinitions(dir)
			return err
		},
		Package: func(dir string) error {
			_, err := humantask.LoadPackage(dir)
			return err
		}}
}
