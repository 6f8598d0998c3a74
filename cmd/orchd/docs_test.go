package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The generated and checked reference pages of docs/: commands.md is
// rendered from the built binary's help, and the management API's route
// list in operations.md is checked against internal/admin's route table.
// go test ./cmd/orchd -run 'TestCommandsDoc|TestAPIRoutesDoc' -update
// rewrites them.

var updateDocs = flag.Bool("update", false, "rewrite docs/commands.md and the route list of docs/operations.md from the code")

// docCommands are orchd's commands, in the order commands.md lists them.
var docCommands = []string{"serve", "ctl", "instances", "lint", "mock-partners", "bench", "xpath", "version"}

// ctlVerbs are orchd ctl's verbs, each with a flag set of its own.
var ctlVerbs = []string{"cluster", "processes", "process", "retire", "activate", "bundles", "deploy", "undeploy",
	"instances", "instance", "suspend", "resume", "terminate", "delete", "retry", "fault", "cancel", "bulk", "tasks"}

// helpOf runs the built orchd with args and returns what it printed. The
// environment is cleared of the variables that change printed defaults
// (ORCHD_SERVER, ORCHD_TOKEN_FILE). A help request may exit 0 or 2 (the
// flag package's ErrHelp); anything else, or no output, fails.
func helpOf(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(orchdBin, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ORCHD_SERVER=") && !strings.HasPrefix(kv, "ORCHD_TOKEN_FILE=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 2 {
		err = nil
	}
	if err != nil {
		t.Fatalf("orchd %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	s := strings.TrimRight(out.String(), "\n")
	if s == "" || strings.Contains(s, "unknown command") {
		t.Fatalf("orchd %s printed no help:\n%s", strings.Join(args, " "), s)
	}
	return s
}

// renderCommands is docs/commands.md: each command's help, and orchd
// ctl's verbs' (verbs whose flags are the same share one block, their
// name in it written VERB).
func renderCommands(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(`# orchd commands and flags

What this page is for: every command of orchd and every flag with its
default, exactly as the binary prints them (` + "`orchd COMMAND -h`" + `). It is
generated: ` + "`go test ./cmd/orchd -run TestCommandsDoc -update`" + ` rewrites it, and
` + "`make test`" + ` fails when it differs from the binary. What the commands are
for is in [operations.md](operations.md); what the limits mean is in
[limits.md](limits.md).

`)
	for _, c := range docCommands {
		b.WriteString("## orchd " + c + "\n\n```text\n" + helpOf(t, c, "-h") + "\n```\n\n")
		if c != "ctl" {
			continue
		}
		var order []string
		groups := map[string][]string{}
		for _, v := range ctlVerbs {
			h := strings.ReplaceAll(helpOf(t, "ctl", v, "-h"), "ctl "+v, "ctl VERB")
			if groups[h] == nil {
				order = append(order, h)
			}
			groups[h] = append(groups[h], v)
		}
		for _, h := range order {
			fmt.Fprintf(&b, "### orchd ctl %s\n\n```text\n%s\n```\n\n", strings.Join(groups[h], ", "), h)
		}
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// TestCommandsDoc fails when docs/commands.md is not what the binary's
// help says (-update rewrites it).
func TestCommandsDoc(t *testing.T) {
	const path = "../../docs/commands.md"
	want := renderCommands(t)
	if *updateDocs {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./cmd/orchd -run TestCommandsDoc -update writes it)", err)
	}
	if string(got) != want {
		t.Fatalf("docs/commands.md differs from orchd's help at line %d; run go test ./cmd/orchd -run TestCommandsDoc -update", firstDiffLine(string(got), want))
	}
}

// firstDiffLine is the first line (1-based) where a and b differ.
func firstDiffLine(a, b string) int {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return i + 1
		}
	}
	return min(len(al), len(bl)) + 1
}

// adminRoutes reads the route patterns ("GET /api/v1/...") that the
// non-test files of the package in dir register: the string literal
// first argument of every HandleFunc or Handle call that starts with a
// method.
func adminRoutes(t *testing.T, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var routes []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || (sel.Sel.Name != "HandleFunc" && sel.Sel.Name != "Handle") {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			p, err := strconv.Unquote(lit.Value)
			if err != nil {
				t.Fatalf("%s: %v", fset.Position(lit.Pos()), err)
			}
			if m, _, ok := strings.Cut(p, " "); ok && m == strings.ToUpper(m) {
				routes = append(routes, p)
			}
			return true
		})
	}
	if len(routes) == 0 {
		t.Fatalf("no route found in %s", dir)
	}
	slices.Sort(routes)
	return routes
}

const (
	routesBegin = "<!-- routes:begin -->"
	routesEnd   = "<!-- routes:end -->"
)

// docRoutes splits the route table of operations.md into its rows, keyed
// by the route of their first cell ("`GET /api/v1/...`").
func docRoutes(t *testing.T, page string) (before, header string, rows map[string]string, order []string, after string) {
	t.Helper()
	i, j := strings.Index(page, routesBegin), strings.Index(page, routesEnd)
	if i < 0 || j < i {
		t.Fatalf("docs/operations.md has no %s ... %s block", routesBegin, routesEnd)
	}
	before, after = page[:i+len(routesBegin)]+"\n", page[j:]
	rows = map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(page[i+len(routesBegin):j]), "\n") {
		cell, _, _ := strings.Cut(strings.TrimPrefix(l, "| "), " |")
		route, ok := strings.CutPrefix(cell, "`")
		if !ok {
			header += l + "\n" // the header and its separator
			continue
		}
		route = strings.TrimSuffix(route, "`")
		if _, dup := rows[route]; dup {
			t.Fatalf("docs/operations.md lists %s twice", route)
		}
		rows[route] = l
		order = append(order, route)
	}
	return before, header, rows, order, after
}

// TestAPIRoutesDoc fails when the route list of docs/operations.md and
// the routes internal/admin registers differ; -update drops the rows of
// routes that are gone and adds the new ones with an empty description.
func TestAPIRoutesDoc(t *testing.T) {
	const path = "../../docs/operations.md"
	code := adminRoutes(t, "../../internal/admin")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	before, header, rows, order, after := docRoutes(t, string(b))
	var missing, extra []string
	for _, r := range code {
		if _, ok := rows[r]; !ok {
			missing = append(missing, r)
		}
	}
	for _, r := range order {
		if !slices.Contains(code, r) {
			extra = append(extra, r)
		}
	}
	if *updateDocs {
		var out strings.Builder
		out.WriteString(before + header)
		for _, r := range order {
			if !slices.Contains(extra, r) {
				out.WriteString(rows[r] + "\n")
			}
		}
		for _, r := range missing {
			out.WriteString("| `" + r + "` | | |\n")
		}
		out.WriteString(after)
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if len(missing) > 0 || len(extra) > 0 {
		t.Fatalf("docs/operations.md's route list and internal/admin differ: not listed %q, listed but not served %q (go test ./cmd/orchd -run TestAPIRoutesDoc -update)", missing, extra)
	}
}
