package compile

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/orchd/orchd/internal/redact"

	"github.com/orchd/orchd/internal/process/check"
	"github.com/orchd/orchd/internal/process/xmldoc"
)

// LintUsage is `orchd lint`'s usage text.
const LintUsage = `usage: orchd lint [--json] [--compat ode] BUNDLE_DIR...

Load and check bundles as a deploy would, without serving them: WS-BPEL
2.0's static analysis (docs/static-analysis.md) and every other reason a
deploy refuses a bundle. A BUNDLE_DIR holding deploy.xml is one bundle
(its .ht files and htconfig.xml, if any, are checked too); one holding
.ht files or htconfig.xml and no deploy.xml is a WSO2 BPS task package,
whose task definitions are checked; a deploy directory checks every
bundle folder and task package in it. Each problem is printed
as FILE:LINE: <ELEMENT>: RULE: what to change (RULE for static analysis
findings only); --json prints them as one JSON array. With --compat ode
(or a process's <orchd:compat>ode</orchd:compat>) the rules Apache ODE 1.3
did not enforce are warnings, printed as "warning: ..." and not counted
as problems, as a deploy with serve --compat ode would log them.

Exit status: 0 when every bundle is clean, 1 when a bundle has a
problem, 2 on a usage error.
`

// LintFlags are `orchd lint`'s flags, for the command reference.
func LintFlags() *flag.FlagSet {
	fs := flag.NewFlagSet("lint", flag.ContinueOnError)
	fs.Bool("json", false, "print the problems as a JSON array of {bundle, file, line, element, rule, section, message}")
	var mode check.Compat
	fs.Var(&mode, "compat", check.CompatUsage)
	return fs
}

// Problem is one reason a bundle does not deploy, as orchd lint reports
// it.
type Problem struct {
	Bundle  string `json:"bundle"`
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Element string `json:"element,omitempty"`
	Rule    string `json:"rule,omitempty"`
	Section string `json:"section,omitempty"`
	Message string `json:"message"`
}

func (p Problem) String() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(filepath.Join(p.Bundle, p.File))
		if p.Line > 0 {
			fmt.Fprintf(&b, ":%d", p.Line)
		}
	} else {
		b.WriteString(p.Bundle)
	}
	b.WriteString(": ")
	if p.Element != "" {
		fmt.Fprintf(&b, "<%s>: ", p.Element)
	}
	if p.Rule != "" {
		b.WriteString(p.Rule + ": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// Problems lists the problems of err, the error a bundle load returned
// for the bundle in dir (a *xmldoc.Errors, or one error).
func Problems(dir string, err error) []Problem {
	if err == nil {
		return nil
	}
	var list []error
	if m, ok := err.(interface{ Unwrap() []error }); ok {
		list = m.Unwrap()
	} else {
		list = []error{err}
	}
	var out []Problem
	for _, e := range list {
		p := Problem{Bundle: dir, Message: e.Error()}
		var f *check.Finding
		var ce *xmldoc.CompileError
		switch {
		case errors.As(e, &f):
			p.File, p.Line, p.Element, p.Rule, p.Section, p.Message = f.Pos.File, f.Pos.Line, f.Element, f.Rule, f.Section, f.Msg
		case errors.As(e, &ce):
			p.File, p.Line, p.Element, p.Message = ce.Pos.File, ce.Pos.Line, ce.Element, ce.Err.Error()
		}
		// A message may quote a partner address: its credentials stay out.
		p.Message = redact.Text(p.Message)
		out = append(out, p)
	}
	return out
}

// TaskLint checks the human task definitions orchd lint finds: a
// bundle's .ht files and htconfig.xml, and WSO2 BPS's task packages
// (those files without a deploy.xml). internal/humantask reads them;
// compile does not import it, so whoever builds orchd lint hands them in.
type TaskLint struct {
	// Holds reports whether the folder dir holds task definitions (a
	// .ht file or htconfig.xml).
	Holds func(dir string) bool
	// Bundle loads the task definitions of the process bundle in dir as
	// its deploy would; Package loads the task package in dir as its
	// deploy would. Their errors list every problem (file:line:
	// <element>: ...).
	Bundle, Package func(dir string) error
}

// isBundle reports whether dir holds deploy.xml.
func isBundle(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "deploy.xml"))
	return err == nil
}

// isPackage reports whether dir is a task package tl checks.
func (tl *TaskLint) isPackage(dir string) bool {
	return tl != nil && !isBundle(dir) && tl.Holds(dir)
}

// bundles expands the operands of orchd lint into bundle folders: a
// folder with deploy.xml is a bundle, so is a task package (tasks), and
// another folder the deploy directory of the bundle folders in it (dot
// folders are not bundles).
func bundles(args []string, tasks *TaskLint) ([]string, error) {
	var out []string
	for _, a := range args {
		if isBundle(a) || tasks.isPackage(a) {
			out = append(out, a)
			continue
		}
		ents, err := os.ReadDir(a)
		if err != nil {
			return nil, fmt.Errorf("%s is neither a bundle (no deploy.xml, no .ht file or htconfig.xml) nor a deploy directory: %w", a, err)
		}
		n := 0
		for _, e := range ents {
			sub := filepath.Join(a, e.Name())
			if e.IsDir() && !strings.HasPrefix(e.Name(), ".") && (isBundle(sub) || tasks.isPackage(sub)) {
				out = append(out, sub)
				n++
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("%s holds no deploy.xml, no task package (.ht files, htconfig.xml) and no bundle folder", a)
		}
	}
	sort.Strings(out)
	return out, nil
}

// lint is the error of the task definitions in dir (nil: none, or
// no TaskLint), with its problems one a leaf: a process bundle's when
// bundle, else a task package's.
func (tl *TaskLint) lint(dir string, bundle bool) error {
	if tl == nil || !tl.Holds(dir) {
		return nil
	}
	check := tl.Package
	if bundle {
		check = tl.Bundle
	}
	err := check(dir)
	if err == nil {
		return nil
	}
	return &xmldoc.Errors{List: leaves(err)}
}

// leaves are the errors err joins, however deep (errors.Join of
// *xmldoc.Errors), or err itself.
func leaves(err error) []error {
	m, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []error{err}
	}
	var out []error
	for _, e := range m.Unwrap() {
		out = append(out, leaves(e)...)
	}
	return out
}

// LintRunner returns `orchd lint`'s run function: it loads each bundle
// folder with opts as a deploy would (LoadBundleWith), and the task
// definitions with tasks (nil: they are not checked, and a task package
// is not a bundle), and reports why it does not deploy.
func LintRunner(opts LoadOptions, tasks *TaskLint) func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return func(_ context.Context, args []string, stdout, stderr io.Writer) int {
		fs := LintFlags()
		fs.SetOutput(stderr)
		fs.Usage = func() {
			fmt.Fprint(stderr, LintUsage+"\nflags:\n")
			fs.PrintDefaults()
		}
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			return 2
		}
		asJSON := fs.Lookup("json").Value.(flag.Getter).Get().(bool)
		opts := opts
		if m := *fs.Lookup("compat").Value.(*check.Compat); m != check.Strict {
			opts.Compat = m
		}
		if fs.NArg() == 0 {
			fs.Usage()
			return 2
		}
		dirs, err := bundles(fs.Args(), tasks)
		if err != nil {
			fmt.Fprintf(stderr, "orchd lint: %v\n", err)
			return 2
		}
		problems := []Problem{}
		for _, d := range dirs {
			var ps []Problem
			if isBundle(d) {
				pls, err := LoadBundleWith(d, opts)
				for _, pl := range pls {
					for _, w := range pl.Warnings {
						fmt.Fprintf(stderr, "warning: %s: %s\n", d, redact.Text(w))
					}
				}
				ps = append(Problems(d, err), Problems(d, tasks.lint(d, true))...)
			} else {
				ps = Problems(d, tasks.lint(d, false))
			}
			sort.SliceStable(ps, func(i, j int) bool {
				if ps[i].File != ps[j].File {
					return ps[i].File < ps[j].File
				}
				return ps[i].Line < ps[j].Line
			})
			problems = append(problems, ps...)
		}
		if asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			if err := enc.Encode(problems); err != nil {
				fmt.Fprintf(stderr, "orchd lint: %v\n", err)
				return 1
			}
		} else {
			for _, p := range problems {
				fmt.Fprintln(stdout, p)
			}
		}
		if len(problems) > 0 {
			if !asJSON {
				fmt.Fprintf(stderr, "%s in %s checked\n", plural(len(problems), "problem"), plural(len(dirs), "bundle"))
			}
			return 1
		}
		return 0
	}
}

// plural is "1 thing" or "n things".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
