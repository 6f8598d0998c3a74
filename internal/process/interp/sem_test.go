package interp_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process"
	"github.com/orchd/orchd/internal/process/compile"
	"github.com/orchd/orchd/internal/process/interp"
	"github.com/orchd/orchd/internal/xsd"
)

// TestSem runs the semantic cases of testdata/sem (README.md there) on a
// real engine, each in its modes (in-memory, persistent on a bbolt
// store), in parallel.
func TestSem(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "sem", "*", "*.case"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no cases in testdata/sem")
	}
	for _, path := range paths {
		c, err := parseSemCase(path)
		if err != nil {
			t.Error(err)
			continue
		}
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.ToSlash(path), "testdata/sem/"), ".case")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for _, mode := range c.modes {
				t.Run(mode, func(t *testing.T) {
					t.Parallel()
					newSemRun(t, c, mode).run()
				})
			}
		})
	}
}

// semRun is one case run in one mode.
type semRun struct {
	t       *testing.T
	c       *semCase
	mode    string
	clock   *fakeClock
	partner *scriptedPartner
	engine  *process.Engine
	version *interp.Version
	// cur is the outcome the expectation steps check; checked says one
	// did.
	cur     *semOutcome
	checked bool
	started map[string]*semOutcome
	// seen counts the calls of each operation a call step checked;
	// counted marks operations a calls step checked.
	seen    map[string]int
	counted map[string]bool
	// ext is the state of the steps of semext_test.go (addresses, the
	// REST server, tracing, the failing store).
	ext semExt
	// ops is the state of the operator and event steps (semops_test.go).
	ops semOps
}

// semOutcome is what the client of one dispatch saw.
type semOutcome struct {
	line      int
	responded chan struct{}
	done      chan struct{}
	once      sync.Once
	mu        sync.Mutex
	out       *exchange.Message
	fault     *exchange.Fault
	err       error
}

func newSemRun(t *testing.T, c *semCase, mode string) *semRun {
	return &semRun{t: t, c: c, mode: mode, clock: newFakeClock(), partner: newScriptedPartner(),
		started: map[string]*semOutcome{}, seen: map[string]int{}, counted: map[string]bool{}}
}

// failf stops the case at the step on line.
func (r *semRun) failf(line int, format string, args ...any) {
	r.t.Helper()
	r.t.Fatalf("%s:%d: %s", r.c.path, line, fmt.Sprintf(format, args...))
}

// run deploys the case and runs its steps.
func (r *semRun) run() {
	t := r.t
	script := r.c.script
	derr := r.deploy()
	if script[0].verb == "deploy-error" {
		if derr == nil || !strings.Contains(derr.Error(), script[0].args[0]) {
			r.failf(script[0].line, "deploy: got error %v, want one containing %q", derr, script[0].args[0])
		}
		if len(script) > 1 {
			r.failf(script[1].line, "no step may follow deploy-error")
		}
		return
	}
	if derr != nil {
		r.failf(script[0].line, "deploy: %v", derr)
	}
	t.Cleanup(r.engine.Close)
	for _, st := range script {
		r.step(st)
	}
	last := script[len(script)-1].line
	r.mustChecked(last)
	for name, o := range r.started {
		r.waitDone(o, last, "start "+name)
	}
	r.extDone(last)
	for op, calls := range r.partner.calls {
		if !r.counted[op] && r.seen[op] != len(calls) {
			r.failf(last, "the partner's %s was called %d times, the case checked %d (add call or calls steps)", op, len(calls), r.seen[op])
		}
	}
}

// deploy writes the case's bundle into a temporary directory, loads it
// and deploys it on a new engine.
func (r *semRun) deploy() error {
	dir := r.t.TempDir()
	files := map[string]string{"e2e.wsdl": semWSDL, "deploy.xml": semDeploy}
	if r.c.process != "" {
		files["Case.bpel"] = semHead + r.c.process + "\n</process>\n"
	}
	for n, s := range r.c.files {
		files[n] = s
	}
	for n, s := range files {
		s = strings.ReplaceAll(s, "{{in-memory}}", strconv.FormatBool(r.mode == "memory"))
		s = r.extSubst(s)
		if err := os.WriteFile(filepath.Join(dir, n), []byte(s), 0o644); err != nil {
			return err
		}
	}
	pls, err := compile.LoadBundleWith(dir, r.extLoadOptions())
	if err != nil {
		return err
	}
	versions := interp.NewVersions(pls)
	opts := process.Options{Clock: r.clock, Partners: func(*exchange.Endpoint) exchange.Partner { return r.partner }}
	if r.mode == "persistent" {
		st, err := persist.Open(filepath.Join(r.t.TempDir(), "orchd.db"), persist.Options{NoSync: true, MaxBatchDelay: time.Millisecond})
		if err != nil {
			return err
		}
		r.t.Cleanup(func() { st.Close() })
		opts.Store = st
	}
	r.extOptions(&opts)
	if err := r.withEvents(&opts); err != nil {
		return err
	}
	r.engine = process.NewEngine(opts)
	if err := r.engine.Deploy(versions...); err != nil {
		return err
	}
	if len(versions) != 1 || len(versions[0].Endpoints) == 0 {
		return fmt.Errorf("the bundle must hold one process that provides an endpoint")
	}
	r.version = versions[0]
	return nil
}

// mustChecked fails when the current outcome was not checked.
func (r *semRun) mustChecked(line int) {
	r.t.Helper()
	if r.cur != nil && !r.checked {
		r.failf(line, "the outcome of the send at line %d was not checked (reply, fault, ack or error)", r.cur.line)
	}
}

// step runs one step.
func (r *semRun) step(st semStep) {
	r.t.Helper()
	a := st.args
	switch st.verb {
	case "send", "start", "await", "advance":
		r.mustChecked(st.line)
	}
	switch st.verb {
	case "deploy-error":
		r.failf(st.line, "deploy-error must be the only step")
	case "send":
		o := r.dispatch(st.line, a[0], a[1])
		r.waitDone(o, st.line, "send")
		r.cur, r.checked = o, false
	case "start":
		if r.started[a[0]] != nil {
			r.failf(st.line, "start %s twice", a[0])
		}
		r.started[a[0]] = r.dispatch(st.line, a[1], a[2])
	case "await":
		o := r.started[a[0]]
		if o == nil {
			r.failf(st.line, "await %s: no such start", a[0])
		}
		select {
		case <-o.responded:
		case <-o.done:
		case <-time.After(10 * time.Second):
			r.failf(st.line, "await %s: no answer in 10s", a[0])
		}
		r.cur, r.checked = o, false
	case "open":
		o := r.started[a[0]]
		if o == nil {
			r.failf(st.line, "open %s: no such start", a[0])
		}
		select {
		case <-o.responded:
			o.mu.Lock()
			got := describeOutcome(o.out, o.fault, o.err)
			o.mu.Unlock()
			r.failf(st.line, "%s was answered already: %s", a[0], got)
		case <-o.done:
			r.failf(st.line, "%s's dispatch returned already", a[0])
		default:
		}
	case "advance":
		d, err := xsd.ParseDuration(a[0])
		if err != nil {
			r.failf(st.line, "advance: %v", err)
		}
		// Only a dispatch still running can be on its way to a wait.
		busy := func() bool {
			for _, o := range r.started {
				select {
				case <-o.done:
				default:
					return true
				}
			}
			return false
		}
		now := r.clock.Now()
		r.clock.Advance(d.AddTo(now).Sub(now), 2*time.Second, busy)
	case "reply", "reply-contains", "fault", "ack", "error":
		r.expect(st)
	case "partner":
		r.script(st)
	case "release":
		r.partner.mu.Lock()
		h := r.partner.holds[a[0]]
		r.partner.mu.Unlock()
		if h == nil {
			r.failf(st.line, "release %s: not held", a[0])
		}
		close(h)
	case "call":
		calls := r.partner.callsOf(a[0])
		i := r.seen[a[0]]
		if r.partner.waitCalls(a[0], i+1, 10*time.Second); len(r.partner.callsOf(a[0])) <= i {
			r.failf(st.line, "call %s: the partner was called %d times, want a call %d", a[0], len(calls), i+1)
		}
		got := r.partner.callsOf(a[0])[i]
		want, err := semXML(a[1])
		if err != nil {
			r.failf(st.line, "call: %v", err)
		}
		if canonXML(got) != canonXML(want) {
			r.failf(st.line, "call %s %d: got input\n%s\nwant\n%s", a[0], i+1, canonXML(got), canonXML(want))
		}
		r.seen[a[0]]++
	case "calls":
		n, err := strconv.Atoi(a[1])
		if err != nil {
			r.failf(st.line, "calls: %v", err)
		}
		if got := r.partner.waitCalls(a[0], n, 10*time.Second); got != n {
			r.failf(st.line, "the partner's %s was called %d times, want %d", a[0], got, n)
		}
		r.counted[a[0]] = true
	default:
		if !r.opsStep(st) {
			r.extStep(st)
		}
	}
}

// script adds a partner step's answer (reply, fault, fail) or gate or
// hold to the partner's script.
func (r *semRun) script(st semStep) {
	p := r.partner
	p.mu.Lock()
	defer p.mu.Unlock()
	op, kind, rest := st.args[0], st.args[1], st.args[2]
	switch kind {
	case "reply":
		if _, err := semXML(rest); rest != "" && err != nil {
			r.failf(st.line, "partner reply: %v", err)
		}
		p.answers[op] = append(p.answers[op], partnerAnswer{kind: kind, payload: rest})
	case "fault":
		name, payload, _ := strings.Cut(rest, " ")
		q, err := semQName(name)
		if err != nil {
			r.failf(st.line, "partner fault: %v", err)
		}
		p.answers[op] = append(p.answers[op], partnerAnswer{kind: kind, name: q, payload: strings.TrimSpace(payload)})
	case "fail":
		p.answers[op] = append(p.answers[op], partnerAnswer{kind: kind, text: rest})
	case "gate":
		n, err := strconv.Atoi(rest)
		if err != nil {
			r.failf(st.line, "partner gate: %v", err)
		}
		p.gates[op] = n
	case "hold":
		p.holds[op] = make(chan struct{})
	default:
		r.failf(st.line, "partner %s %s: want reply, fault, fail, gate or hold", op, kind)
	}
}

// dispatch sends payload to operation op of the process in its own
// goroutine.
func (r *semRun) dispatch(line int, op, payload string) *semOutcome {
	ep := r.version.Endpoints[0]
	var o *exchange.Operation
	for _, x := range ep.Operations {
		if x.Name == op {
			o = x
		}
	}
	if o == nil {
		r.failf(line, "the process has no operation %s", op)
	}
	if len(o.Input.Parts) != 1 {
		r.failf(line, "operation %s: its input has %d parts, a send gives one", op, len(o.Input.Parts))
	}
	m, err := partMessage(o.Input.Name, o.Input.Parts[0].Name, payload)
	if err != nil {
		r.failf(line, "%v", err)
	}
	out := &semOutcome{line: line, responded: make(chan struct{}), done: make(chan struct{})}
	ex := &exchange.Exchange{Endpoint: ep, Operation: o, Input: m, Headers: r.extHeaders(), Respond: func(m *exchange.Message, f *exchange.Fault) {
		out.mu.Lock()
		if m != nil {
			m = &exchange.Message{Name: m.Name, Parts: copyParts(m.Parts)}
		}
		out.out, out.fault = m, f
		out.mu.Unlock()
		out.once.Do(func() { close(out.responded) })
	}}
	go func() {
		err := r.engine.Dispatch(context.Background(), ex)
		out.mu.Lock()
		out.err = err
		out.mu.Unlock()
		close(out.done)
	}()
	return out
}

func copyParts(ps map[string]*etree.Element) map[string]*etree.Element {
	c := make(map[string]*etree.Element, len(ps))
	for k, v := range ps {
		c[k] = v.Copy()
	}
	return c
}

// waitDone waits for o's dispatch to return.
func (r *semRun) waitDone(o *semOutcome, line int, what string) {
	r.t.Helper()
	select {
	case <-o.done:
	case <-time.After(10 * time.Second):
		r.failf(line, "%s: the dispatch did not return in 10s", what)
	}
}

// expect checks the current outcome against an expectation step.
func (r *semRun) expect(st semStep) {
	r.t.Helper()
	o := r.cur
	if o == nil {
		r.failf(st.line, "%s: no send or await before it", st.verb)
	}
	r.checked = true
	o.mu.Lock()
	out, f, err := o.out, o.fault, o.err
	o.mu.Unlock()
	got := describeOutcome(out, f, err)
	switch st.verb {
	case "reply", "reply-contains":
		if out == nil || f != nil || len(out.Parts) != 1 {
			r.failf(st.line, "got %s, want a reply of one part", got)
		}
		var part *etree.Element
		for _, v := range out.Parts {
			part = v
		}
		if st.verb == "reply-contains" {
			if !strings.Contains(canonXML(part), st.args[0]) {
				r.failf(st.line, "got reply %s, want it to contain %q", canonXML(part), st.args[0])
			}
			return
		}
		want, perr := semXML(st.args[0])
		if perr != nil {
			r.failf(st.line, "reply: %v", perr)
		}
		if canonXML(part) != canonXML(want) {
			r.failf(st.line, "got reply\n%s\nwant\n%s", canonXML(part), canonXML(want))
		}
	case "fault":
		q, qerr := semQName(st.args[0])
		if qerr != nil {
			r.failf(st.line, "fault: %v", qerr)
		}
		if f == nil || f.Name != q {
			r.failf(st.line, "got %s, want fault %s", got, q)
		}
		if st.args[1] != "" && !strings.Contains(got, st.args[1]) {
			r.failf(st.line, "got %s, want it to contain %q", got, st.args[1])
		}
	case "ack":
		if out != nil || f != nil || err != nil {
			r.failf(st.line, "got %s, want an ack (no answer, no error)", got)
		}
	case "error":
		if err == nil || !strings.Contains(err.Error(), st.args[0]) {
			r.failf(st.line, "got %s, want an error containing %q", got, st.args[0])
		}
	}
}

// describeOutcome renders an outcome for failures.
func describeOutcome(out *exchange.Message, f *exchange.Fault, err error) string {
	var b []string
	if out != nil {
		var parts []string
		for k, v := range out.Parts {
			parts = append(parts, k+"="+canonXML(v))
		}
		sort.Strings(parts)
		b = append(b, "reply "+strings.Join(parts, " "))
	}
	if f != nil {
		s := "fault " + f.Name.String()
		if f.Reason != "" {
			s += " (" + f.Reason + ")"
		}
		if f.Message != nil {
			for _, v := range f.Message.Parts {
				s += " data " + canonXML(v)
			}
		}
		b = append(b, s)
	}
	if err != nil {
		b = append(b, "error "+err.Error())
	}
	if len(b) == 0 {
		return "no answer"
	}
	return strings.Join(b, "; ")
}
