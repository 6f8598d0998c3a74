package ctl

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/orchd/orchd/internal/admin"
	"github.com/orchd/orchd/internal/bundlezip"
	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/mgmtclient"
)

// Usage is orchd ctl's usage: its verbs, filters and global flags.
const Usage = `usage: orchd ctl [--server URL] [--token-file FILE] [--json] VERB [ARGS]

verbs:
  cluster                           the cluster's live nodes, with their counters
  processes                         every process version, with its counters
                                    (in a cluster: summed, with the nodes serving it)
  process NAME [--version N]        one version: endpoints, counters, activity outline
  diagram NAME [--version N] [--instance ID]
                                    the version's diagram as SVG on stdout: with each
                                    activity's counts and times, or the instance's path
  retire NAME VERSION               stop serving a version (its instances finish)
  activate NAME VERSION             serve a version again (the active one retires)
  bundles                           the deploy directory's bundles and their errors
  deploy NAME PATH                  deploy a bundle (a .zip, or a folder zipped on the fly)
  undeploy NAME                     remove a bundle and retire its processes
  instances [FILTERS] [--limit N] [--after CURSOR] [--all]
                                    list instances, newest first (--all: every page);
                                    in a cluster every node's, with a NODE column
  instance ID                       one instance: variables, branches, failure, timeline
  suspend|resume|terminate|delete|retry|fault|cancel ID...
                                    act on instances
  bulk ACTION [FILTERS] [--max N]   act on the instances the filters select (max 100 by default)
` + incidentUsage + `
  migrate NAME --from V --to W [--dry-run] [--map-variable OLD=NEW]... [FILTERS] [--max N]
                                    move waiting instances of version V to version W (admin
                                    token); lists what moves and why each of the others cannot
` + TaskUsage + `

filters: --process NAME --version N --state STATE --started-after T --started-before T
         --active-after T --active-before T --correlation VALUE --correlation-set NAME
         (T is RFC 3339, or a duration meaning that long ago: 90m)

--server defaults to $ORCHD_SERVER, else http://127.0.0.1:8080; --token-file to
$ORCHD_TOKEN_FILE (mutations need the token of orchd serve --admin-token-file).
Exit status: 0 done, 1 the server refused (its error is printed), 2 usage.
`

// defaultServer is --server without $ORCHD_SERVER.
const defaultServer = "http://127.0.0.1:8080"

// Flags are the flags every verb takes, with their defaults when
// $ORCHD_SERVER and $ORCHD_TOKEN_FILE are not set (for the command
// reference).
func Flags() *flag.FlagSet {
	fs := flag.NewFlagSet("ctl", flag.ContinueOnError)
	g := ctlGlobals{server: defaultServer}
	g.register(fs)
	return fs
}

// ctlGlobals are the flags every verb takes.
type ctlGlobals struct {
	server    string
	tokenFile string
	json      bool
}

func (g *ctlGlobals) register(fs *flag.FlagSet) {
	fs.StringVar(&g.server, "server", g.server, "orchd's address (or its --admin-listen address)")
	fs.StringVar(&g.tokenFile, "token-file", g.tokenFile, "file holding the admin token")
	fs.BoolVar(&g.json, "json", g.json, "print the server's JSON")
}

// errUsage marks a usage error (exit 2); flag errors are printed by the
// flag package already.
var errUsage = errors.New("usage")

// ctlRun is one invocation's state.
type ctlRun struct {
	ctx            context.Context
	g              ctlGlobals
	c              *mgmtclient.Client
	stdout, stderr io.Writer
}

// Run runs orchd ctl with args (after "ctl") and returns its exit code:
// 0 done, 1 the server refused (its error is printed) or could not be
// reached, 2 a usage error. The server and token file default to
// $ORCHD_SERVER and $ORCHD_TOKEN_FILE.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	g := ctlGlobals{server: os.Getenv("ORCHD_SERVER"), tokenFile: os.Getenv("ORCHD_TOKEN_FILE")}
	if g.server == "" {
		g.server = defaultServer
	}
	fs := flag.NewFlagSet("ctl", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, Usage) }
	g.register(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprint(stderr, Usage)
		return 2
	}
	r := &ctlRun{ctx: ctx, g: g, stdout: stdout, stderr: stderr}
	verb, rest := fs.Arg(0), fs.Args()[1:]
	err := r.verb(verb, rest)
	var quiet errQuiet
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	case errors.As(err, &quiet):
		return 1
	}
	fmt.Fprintln(stderr, "orchd ctl:", err)
	return 1
}

// usagef reports a usage error and returns errUsage.
func (r *ctlRun) usagef(format string, args ...any) error {
	fmt.Fprintf(r.stderr, "orchd ctl: "+format+"\n", args...)
	return errUsage
}

// flags parses a verb's arguments with the global flags and the verb's
// own (add), allowing flags before and after the operands; it returns
// the operands. want is how many (-1: at least one).
func (r *ctlRun) flags(verb string, args []string, want int, add func(*flag.FlagSet)) ([]string, error) {
	fs := flag.NewFlagSet("ctl "+verb, flag.ContinueOnError)
	fs.SetOutput(r.stderr)
	r.g.register(fs)
	if add != nil {
		add(fs)
	}
	var operands []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, errUsage
		}
		if fs.NArg() == 0 {
			break
		}
		operands = append(operands, fs.Arg(0))
		args = fs.Args()[1:]
	}
	switch {
	case want < 0 && len(operands) == 0:
		return nil, r.usagef("%s: give at least one argument", verb)
	case want >= 0 && len(operands) != want:
		return nil, r.usagef("%s: want %d argument(s), got %d (orchd ctl -h)", verb, want, len(operands))
	}
	return operands, nil
}

// connect makes the client once the flags are read.
func (r *ctlRun) connect() error {
	var token string
	if r.g.tokenFile != "" {
		b, err := os.ReadFile(r.g.tokenFile)
		if err != nil {
			return r.usagef("--token-file: %v", err)
		}
		token = strings.TrimSpace(string(b))
		if token == "" || strings.ContainsAny(token, " \t\r\n") {
			return r.usagef("--token-file %s: want one token on one line", r.g.tokenFile)
		}
	}
	c, err := mgmtclient.New(r.g.server, mgmtclient.Options{HTTP: &http.Client{Timeout: 5 * time.Minute}, Token: token})
	if err != nil {
		return r.usagef("--server %v", err)
	}
	r.c = c
	return nil
}

func (r *ctlRun) verb(verb string, args []string) error {
	switch verb {
	case "cluster":
		return r.cluster(args)
	case "processes":
		return r.processes(args)
	case "process":
		return r.process(args)
	case "diagram":
		return r.diagram(args)
	case "retire", "activate":
		return r.setActive(verb, args)
	case "bundles":
		return r.bundles(args)
	case "deploy":
		return r.deploy(args)
	case "undeploy":
		return r.undeploy(args)
	case "instances":
		return r.instances(args)
	case "instance":
		return r.instance(args)
	case "bulk":
		return r.bulk(args)
	case "migrate":
		return r.migrate(args)
	case "incidents", "set-variable", "incident-bulk":
		return map[string]func([]string) error{"incidents": r.incidents, "set-variable": r.setVariable, "incident-bulk": r.incidentBulk}[verb](args)
	case "tasks":
		return r.tasks(args)
	case "task":
		return r.task(args)
	case "help":
		fmt.Fprint(r.stdout, Usage)
		return nil
	}
	if mgmt.Action(verb).Valid() {
		return r.act(mgmt.Action(verb), args)
	}
	return r.usagef("unknown verb %q (orchd ctl -h lists them)", verb)
}

// get calls a GET route, printing its JSON with --json, else decoding it
// into out for show.
func (r *ctlRun) get(path string, query url.Values, out any, show func()) error {
	return r.mutate(http.MethodGet, path, query, nil, out, show)
}

func (r *ctlRun) processes(args []string) error {
	if _, err := r.flags("processes", args, 0, nil); err != nil {
		return err
	}
	if err := r.connect(); err != nil {
		return err
	}
	var ps []mgmt.Process
	return r.get("/processes", nil, &ps, func() {
		clustered := slices.ContainsFunc(ps, func(p mgmt.Process) bool { return len(p.Nodes) > 0 })
		head := "PROCESS\tVERSION\tSTATE\tKIND\tSTARTED\tCOMPLETED\tFAULTED\tSUSPENDED\tEXCHANGES\tMEAN\tBUNDLE"
		if clustered {
			head += "\tNODES"
		}
		tw := table(r.stdout, head)
		for _, p := range ps {
			s := p.Stats
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s", p.Local, p.Version, p.State, kind(p.InMemory),
				s.Started, s.Completed, s.Faulted, s.Suspended, s.Exchanges, mean(s.ExchangeNanos, s.Exchanges), p.Bundle)
			if clustered {
				fmt.Fprintf(tw, "\t%s", strings.Join(p.Nodes, ","))
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
	})
}

// cluster is the cluster view: the live nodes and their counters.
func (r *ctlRun) cluster(args []string) error {
	if _, err := r.flags("cluster", args, 0, nil); err != nil {
		return err
	}
	if err := r.connect(); err != nil {
		return err
	}
	var c mgmt.Cluster
	return r.get("/cluster", nil, &c, func() {
		if c.Name != "" {
			fmt.Fprintf(r.stdout, "cluster %s: %d node(s)\n", c.Name, len(c.Nodes))
		}
		tw := table(r.stdout, "NODE\tURL\tADMIN\tUPTIME\tEXCHANGES\tIN FLIGHT\tTX/S\tVERSIONS")
		for _, n := range c.Nodes {
			id := n.ID
			if n.Self {
				id += " (this)"
			}
			up, ex, inf, rate := "-", "-", "-", "-"
			if st := n.Stats; st != nil {
				up = (time.Duration(st.UptimeSeconds) * time.Second).String()
				ex = strconv.FormatUint(st.Exchanges, 10)
				if st.InFlight >= 0 {
					inf = strconv.FormatInt(st.InFlight, 10)
				}
				rate = strconv.FormatFloat(st.TxPerSec, 'f', 1, 64)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", id, orNone(n.URL), orNone(n.Admin), up, ex, inf, rate, strings.Join(n.Versions, " "))
		}
		tw.Flush()
		r.partial(c.Partial)
	})
}

// partial tells, on stderr, which nodes' part of an answer is missing.
func (r *ctlRun) partial(notes []string) {
	for _, p := range notes {
		fmt.Fprintf(r.stderr, "orchd ctl: missing from this answer: node %s\n", p)
	}
}

// orNone is s, or "-" when empty.
func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (r *ctlRun) process(args []string) error {
	var version int
	ops, err := r.flags("process", args, 1, func(fs *flag.FlagSet) {
		fs.IntVar(&version, "version", 0, "this version (default: the active one)")
	})
	if err != nil {
		return err
	}
	if err := r.connect(); err != nil {
		return err
	}
	var q url.Values
	if version != 0 {
		q = url.Values{"version": {strconv.Itoa(version)}}
	}
	var p mgmt.Process
	return r.get("/processes/"+url.PathEscape(ops[0]), q, &p, func() {
		w := r.stdout
		fmt.Fprintf(w, "%s version %d (%s, %s)\n", p.Name, p.Version, p.State, kind(p.InMemory))
		fmt.Fprintf(w, "bundle %s, %s, deployed %s\n", p.Bundle, p.File, when(p.Deployed))
		for _, ep := range p.Endpoints {
			fmt.Fprintf(w, "endpoint %s (%s port %s, SOAP %s): %s\n", ep.Path, ep.Service, ep.Port, ep.SOAP, strings.Join(ep.Operations, ", "))
		}
		for _, warn := range p.Warnings {
			fmt.Fprintf(w, "warning: %s\n", warn)
		}
		s := p.Stats
		fmt.Fprintf(w, "instances: %d started, %d completed, %d faulted, %d terminated, %d suspended\n",
			s.Started, s.Completed, s.Faulted, s.Terminated, s.Suspended)
		fmt.Fprintf(w, "exchanges: %d, mean %s\n", s.Exchanges, mean(s.ExchangeNanos, s.Exchanges))
		if p.Outline == nil {
			return
		}
		if p.SampleEvery > 1 {
			fmt.Fprintf(w, "\noutline (timed on one instance in %d):\n", p.SampleEvery)
		} else {
			fmt.Fprintln(w, "\noutline:")
		}
		tw := table(w, "ACTIVITY\tPOSITION\tCOUNT\tMEAN")
		var walk func(a *mgmt.Activity, depth int)
		walk = func(a *mgmt.Activity, depth int) {
			name := strings.Repeat("  ", depth) + a.Kind
			if a.Name != "" {
				name += " " + a.Name
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", name, a.Position, a.Count, mean(a.Nanos, a.Count))
			for _, c := range a.Children {
				walk(c, depth+1)
			}
		}
		walk(p.Outline, 0)
		tw.Flush()
	})
}

func (r *ctlRun) setActive(verb string, args []string) error {
	ops, err := r.flags(verb, args, 2, nil)
	if err != nil {
		return err
	}
	v, err := strconv.Atoi(ops[1])
	if err != nil || v < 1 {
		return r.usagef("%s: version %q: want a version number", verb, ops[1])
	}
	if err := r.connect(); err != nil {
		return err
	}
	var res struct{ Name, State string }
	return r.post("/processes/"+url.PathEscape(ops[0])+"/versions/"+strconv.Itoa(v)+"/"+verb, nil, &res, func() {
		fmt.Fprintf(r.stdout, "%s version %d: %s\n", ops[0], v, res.State)
	})
}

// post calls a mutation, printing its JSON with --json, else decoding it
// into out for show.
func (r *ctlRun) post(path string, query url.Values, out any, show func()) error {
	return r.mutate(http.MethodPost, path, query, nil, out, show)
}

// mutate calls a route with any method (get and post are its short
// forms), printing its JSON with --json, else decoding it into out for
// show.
func (r *ctlRun) mutate(method, path string, query url.Values, body io.Reader, out any, show func()) error {
	raw, err := r.c.Do(r.ctx, method, path, query, body, out)
	if err != nil {
		return err
	}
	if r.g.json {
		_, err := r.stdout.Write(raw)
		return err
	}
	show()
	return nil
}

func (r *ctlRun) bundles(args []string) error {
	if _, err := r.flags("bundles", args, 0, nil); err != nil {
		return err
	}
	if err := r.connect(); err != nil {
		return err
	}
	var bs []mgmt.Bundle
	return r.get("/bundles", nil, &bs, func() { writeBundles(r.stdout, bs) })
}

// writeBundles writes the bundles table: the columns are aligned over
// the rows alone, and a bundle's errors follow its row, indented, so a
// long error does not widen the first column.
func writeBundles(w io.Writer, bs []mgmt.Bundle) {
	var rows bytes.Buffer
	tw := table(&rows, "BUNDLE\tSTATE\tVERSION\tDEPLOYED\tPROCESSES")
	for _, b := range bs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", b.Name, b.State, orDash(b.Version), when(b.Deployed), strings.Join(locals(slices.Concat(b.Processes, b.Tasks)), ", "))
	}
	tw.Flush()
	lines := strings.SplitAfter(rows.String(), "\n")
	io.WriteString(w, lines[0]) // the header
	for i, b := range bs {
		io.WriteString(w, lines[i+1])
		for _, e := range b.Errors {
			fmt.Fprintf(w, "  %s\n", strings.ReplaceAll(e, "\n", "\n  "))
		}
	}
}

func (r *ctlRun) deploy(args []string) error {
	ops, err := r.flags("deploy", args, 2, nil)
	if err != nil {
		return err
	}
	name, path := ops[0], ops[1]
	body, err := ZipBundle(path)
	if err != nil {
		return r.usagef("deploy: %v", err)
	}
	if err := r.connect(); err != nil {
		return err
	}
	var b mgmt.Bundle
	return r.mutate(http.MethodPut, "/bundles/"+url.PathEscape(name), nil, bytes.NewReader(body), &b, func() {
		fmt.Fprintf(r.stdout, "bundle %s %s: version %d, %s\n", b.Name, b.State, b.Version, strings.Join(locals(slices.Concat(b.Processes, b.Tasks)), ", "))
	})
}

// ZipBundle reads a bundle's zip, or zips a bundle folder.
func ZipBundle(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return os.ReadFile(path)
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(ents, func(e fs.DirEntry) bool { return !e.IsDir() && bundlezip.Marks(e.Name()) }) {
		return nil, fmt.Errorf("%s: no deploy.xml (a process bundle) and no .ht file or htconfig.xml (a task package) in the folder", path)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(path, p)
		if err != nil {
			return err
		}
		w, err := zw.Create(filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("zipping %s: %w", path, err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("zipping %s: %w", path, err)
	}
	return buf.Bytes(), nil
}

func (r *ctlRun) undeploy(args []string) error {
	ops, err := r.flags("undeploy", args, 1, nil)
	if err != nil {
		return err
	}
	if err := r.connect(); err != nil {
		return err
	}
	return r.mutate(http.MethodDelete, "/bundles/"+url.PathEscape(ops[0]), nil, nil, nil, func() {
		fmt.Fprintf(r.stdout, "bundle %s undeployed\n", ops[0])
	})
}

// filterFlags are the instance filters of instances and bulk.
type filterFlags struct {
	process, state, correlation, correlationSet            string
	version                                                int
	startedAfter, startedBefore, activeAfter, activeBefore string
}

func (f *filterFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.process, "process", "", "only this process (local name or {ns}local)")
	fs.IntVar(&f.version, "version", 0, "only this version")
	fs.StringVar(&f.state, "state", "", "only this state: running, waiting, suspended, completed, faulted, terminated, broken")
	fs.StringVar(&f.startedAfter, "started-after", "", "started at or after (RFC 3339, or a duration ago: 90m)")
	fs.StringVar(&f.startedBefore, "started-before", "", "started at or before")
	fs.StringVar(&f.activeAfter, "active-after", "", "last active at or after")
	fs.StringVar(&f.activeBefore, "active-before", "", "last active at or before")
	fs.StringVar(&f.correlation, "correlation", "", "one of its correlation sets has this value")
	fs.StringVar(&f.correlationSet, "correlation-set", "", "with --correlation: only this set")
}

// query builds the filter; a time that does not parse is an error
// naming its flag.
func (f *filterFlags) query(now time.Time) (mgmt.Query, error) {
	q := mgmt.Query{Process: f.process, Version: f.version, State: f.state, Correlation: f.correlation, CorrelationSet: f.correlationSet}
	for _, t := range []struct {
		flag, s string
		to      *time.Time
	}{{"started-after", f.startedAfter, &q.StartedAfter}, {"started-before", f.startedBefore, &q.StartedBefore},
		{"active-after", f.activeAfter, &q.ActiveAfter}, {"active-before", f.activeBefore, &q.ActiveBefore}} {
		if t.s == "" {
			continue
		}
		if at, err := time.Parse(time.RFC3339Nano, t.s); err == nil {
			*t.to = at
			continue
		}
		d, err := time.ParseDuration(t.s)
		if err != nil || d < 0 {
			return q, fmt.Errorf("--%s %q: want an RFC 3339 time (2026-01-02T15:04:05Z) or a duration ago (90m)", t.flag, t.s)
		}
		*t.to = now.Add(-d)
	}
	return q, nil
}

func (r *ctlRun) instances(args []string) error {
	var f filterFlags
	var limit int
	var after string
	var all bool
	if _, err := r.flags("instances", args, 0, func(fs *flag.FlagSet) {
		f.register(fs)
		fs.IntVar(&limit, "limit", 0, "page size (server default 50, at most 1000)")
		fs.StringVar(&after, "after", "", "continue after this cursor (a previous page's next)")
		fs.BoolVar(&all, "all", false, "follow the cursor through every page")
	}); err != nil {
		return err
	}
	q, err := f.query(time.Now())
	if err != nil {
		return r.usagef("instances: %v", err)
	}
	q.Limit, q.After = limit, after
	if err := r.connect(); err != nil {
		return err
	}
	var page mgmt.Page
	for {
		var p mgmt.Page
		if err := r.c.Get(r.ctx, "/instances", admin.Values(q), &p); err != nil {
			return err
		}
		page.Instances = append(page.Instances, p.Instances...)
		page.Scanned += p.Scanned
		page.Next = p.Next
		page.Partial = append(page.Partial, p.Partial...)
		if !all || p.Next == "" {
			break
		}
		q.After = p.Next
	}
	if r.g.json {
		return writeIndented(r.stdout, page)
	}
	clustered := slices.ContainsFunc(page.Instances, func(in mgmt.Instance) bool { return in.Node != "" })
	head := "ID\tPROCESS\tVERSION\tSTATE\tSTARTED\tLAST ACTIVE\tCORRELATION\tFAULT"
	if clustered {
		head += "\tNODE"
	}
	tw := table(r.stdout, head)
	for _, in := range page.Instances {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", in.ID, local(in.Process)+memTag(in.InMemory), orDash(in.Version), in.State,
			when(in.Started), when(in.LastActive), correlations(in.Correlations), oneLineText(in.Fault, 60))
		if clustered {
			fmt.Fprintf(tw, "\t%s", orNone(in.Node))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	r.partial(page.Partial)
	switch {
	case len(page.Instances) == 0:
		fmt.Fprintln(r.stdout, "no instance matches")
	case page.Next != "":
		fmt.Fprintf(r.stdout, "more: --after %s\n", page.Next)
	}
	return nil
}

func (r *ctlRun) instance(args []string) error {
	ops, err := r.flags("instance", args, 1, nil)
	if err != nil {
		return err
	}
	if err := r.connect(); err != nil {
		return err
	}
	var d mgmt.InstanceDetail
	return r.get("/instances/"+url.PathEscape(ops[0]), nil, &d, func() { showInstance(r.stdout, &d) })
}

func showInstance(w io.Writer, d *mgmt.InstanceDetail) {
	fmt.Fprintf(w, "instance %s of %s version %d%s\n", d.ID, d.Process, d.Version, memTag(d.InMemory))
	fmt.Fprintf(w, "state %s, started %s, last active %s\n", d.State, when(d.Started), when(d.LastActive))
	if d.Fault != "" {
		fmt.Fprintf(w, "fault: %s\n", d.Fault)
	}
	if len(d.Correlations) > 0 {
		fmt.Fprintf(w, "correlations: %s\n", correlations(d.Correlations))
	}
	if f := d.Failure; f != nil {
		fmt.Fprintf(w, "failed: %s at %s, %d attempt(s), %s: %s\n", f.Activity, f.Position, f.Attempts, when(f.Time), f.Reason)
	}
	if len(d.Actions) > 0 {
		acts := make([]string, len(d.Actions))
		for i, a := range d.Actions {
			acts[i] = string(a)
		}
		fmt.Fprintf(w, "actions: %s\n", strings.Join(acts, ", "))
	}
	if len(d.Branches) > 0 {
		fmt.Fprintln(w, "\nbranches:")
		tw := table(w, "  ACTIVITY\tPOSITION\tWAITING FOR")
		for _, b := range d.Branches {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", b.Activity, b.Position, b.Waiting)
		}
		tw.Flush()
	}
	for _, a := range d.Alarms {
		fmt.Fprintf(w, "alarm at %s\n", when(a))
	}
	if len(d.Variables) > 0 {
		fmt.Fprintln(w, "\nvariables:")
		names := make([]string, 0, len(d.Variables))
		for n := range d.Variables {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(w, "  %s:\n    %s\n", n, strings.ReplaceAll(strings.TrimSpace(d.Variables[n]), "\n", "\n    "))
		}
	}
	if len(d.Timeline) > 0 {
		fmt.Fprintln(w, "\ntimeline:")
		tw := table(w, "  TIME\tEVENT\tACTIVITY\tPOSITION\tDETAIL")
		for _, e := range d.Timeline {
			act := strings.TrimSpace(e.Activity + " " + e.Name)
			detail := strings.TrimSpace(strings.Join([]string{e.Variable, e.Partner, e.Operation, e.Fault, e.Detail}, " "))
			if e.Duration > 0 {
				detail = strings.TrimSpace(detail + " " + e.Duration.String())
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", e.Time.Local().Format("15:04:05.000"), e.Kind, act, e.Position, oneLineText(detail, 80))
		}
		tw.Flush()
	}
}

func (r *ctlRun) act(a mgmt.Action, args []string) error {
	ids, err := r.flags(string(a), args, -1, nil)
	if err != nil {
		return err
	}
	if err := r.connect(); err != nil {
		return err
	}
	var failed error
	for _, id := range ids {
		var res admin.ActResult
		err := r.post("/instances/"+url.PathEscape(id)+"/"+string(a), nil, &res, func() {
			fmt.Fprintf(r.stdout, "%s: %s\n", res.ID, res.State)
		})
		if err != nil {
			fmt.Fprintf(r.stderr, "orchd ctl: %s %s: %v\n", a, id, err)
			failed = err
		}
		if r.g.json && err == nil {
			fmt.Fprintln(r.stdout)
		}
	}
	if failed != nil {
		return errQuiet{failed}
	}
	return nil
}

// errQuiet is an error already printed: the exit status is 1.
type errQuiet struct{ error }

func (r *ctlRun) bulk(args []string) error {
	var f filterFlags
	most := 0
	ops, err := r.flags("bulk", args, 1, func(fs *flag.FlagSet) {
		f.register(fs)
		fs.IntVar(&most, "max", 0, "act on at most this many (server default 100, at most 10000)")
	})
	if err != nil {
		return err
	}
	a := mgmt.Action(ops[0])
	if !a.Valid() {
		return r.usagef("bulk: unknown action %q", ops[0])
	}
	q, err := f.query(time.Now())
	if err != nil {
		return r.usagef("bulk: %v", err)
	}
	v := admin.Values(q)
	if most != 0 {
		v.Set("max", strconv.Itoa(most))
	}
	if err := r.connect(); err != nil {
		return err
	}
	var res mgmt.BulkResult
	if err := r.post("/instances/bulk/"+string(a), v, &res, func() {
		fmt.Fprintf(r.stdout, "%s: %d matched, %d done, %d failed\n", res.Action, res.Matched, res.Done, res.Matched-res.Done)
		for _, f := range res.Failed {
			fmt.Fprintf(r.stdout, "  %s: %s\n", f.ID, f.Error)
		}
		if res.Truncated {
			fmt.Fprintf(r.stdout, "more instances match: run it again, or raise --max\n")
		}
	}); err != nil {
		return err
	}
	return nil
}

// table starts an aligned table with its header; Flush prints it.
func table(w io.Writer, header string) *alignedTable {
	t := &alignedTable{out: w}
	t.Writer = tabwriter.NewWriter(&t.buf, 0, 0, 2, ' ', 0)
	fmt.Fprintln(t, header)
	return t
}

// alignedTable is a tabwriter that drops the blanks padding an empty
// last column.
type alignedTable struct {
	*tabwriter.Writer
	buf bytes.Buffer
	out io.Writer
}

// Flush aligns the rows written so far and prints them.
func (t *alignedTable) Flush() {
	_ = t.Writer.Flush()
	for rest := t.buf.Bytes(); len(rest) > 0; {
		line, after, _ := bytes.Cut(rest, []byte("\n"))
		fmt.Fprintf(t.out, "%s\n", bytes.TrimRight(line, " "))
		rest = after
	}
	t.buf.Reset()
}

func writeIndented(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func kind(inMemory bool) string {
	if inMemory {
		return "in-memory"
	}
	return "persistent"
}

func memTag(inMemory bool) string {
	if inMemory {
		return " (in-memory)"
	}
	return ""
}

// mean is nanos/n as a duration, "-" without any.
func mean(nanos, n uint64) string {
	if n == 0 {
		return "-"
	}
	d := time.Duration(nanos / n)
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(100 * time.Nanosecond).String()
}

func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

func orDash(n int) string {
	if n == 0 {
		return "-"
	}
	return strconv.Itoa(n)
}

// local is the local part of {ns}local.
func local(name string) string {
	if i := strings.LastIndexByte(name, '}'); i >= 0 {
		return name[i+1:]
	}
	return name
}

func locals(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = local(n)
	}
	return out
}

func correlations(m map[string]string) string {
	if len(m) == 0 {
		return "-"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		keys[i] = k + "=" + m[k]
	}
	return strings.Join(keys, " ")
}

// oneLineText keeps s on one line of at most n runes.
func oneLineText(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
