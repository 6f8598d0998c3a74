package interp_test

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/beevik/etree"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/partnerallow"
	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process"
	"github.com/orchd/orchd/internal/process/compile"
	"github.com/orchd/orchd/internal/process/exttest"
)

// The steps of the README's "Addresses, REST, extensions, tracing and the
// store" section: where partner calls went (an assigned endpoint
// reference), a real loopback HTTP server for REST activities, the
// extension semExtension registers, the spans of a traced run, and a
// store whose next commit fails.

// semExt is the state of those steps in one run.
type semExt struct {
	mu sync.Mutex
	// calls are the partner calls in the order they came, by operation:
	// the address each went to and the header blocks it carried;
	// wentSeen counts those a went step checked.
	calls    map[string][]semAddrCall
	wentSeen map[string]int
	// rest is the REST server, started by the first {{rest}}; answers
	// are its scripted answers (the last repeats), reqs what it got,
	// reqSeen those a http request step checked, reqCounted set by http
	// requests.
	rest       *httptest.Server
	answers    []semHTTPAnswer
	reqs       []semHTTPRequest
	reqSeen    int
	reqCounted bool
	// spans records the spans of a case that has a spans step.
	spans *tracetest.SpanRecorder
	// store is the persistent mode's store.
	store *semFailingStore
	// sessions are the session identifiers session steps took from
	// replies, by name; headers are the header blocks of the next send or
	// start (with-session).
	sessions map[string]string
	headers  []*etree.Element
}

type semAddrCall struct {
	addr    string
	headers []*etree.Element
}

type semHTTPAnswer struct {
	status int
	body   string
	// delay is how long the server waits before it answers.
	delay time.Duration
}

type semHTTPRequest struct {
	method, path, ctype, body string
	header                    http.Header
}

// semExtArity is semArity for the steps of this file.
func semExtArity(verb string) (n int, optional, ok bool) {
	switch verb {
	case "commit-fail":
		return 0, false, true
	case "spans", "no-spans", "sample-every", "sample-first", "base-url", "rest-timeout", "session", "with-session", "with-intalio-session", "span-child", "span-link":
		return 1, false, true
	case "went", "header", "span-attr", "timed", "faults", "stat", "span-status":
		return 2, false, true
	case "http":
		return 3, true, true
	}
	return 0, false, false
}

// extSubst replaces {{rest}} in a bundle file by the REST server's base
// URL (http://127.0.0.1:PORT), starting it, {{rest-host}} by its
// 127.0.0.1:PORT, and {{dead}} by a loopback
// address nothing listens on.
func (r *semRun) extSubst(s string) string {
	if strings.Contains(s, "{{rest}}") {
		s = strings.ReplaceAll(s, "{{rest}}", r.restServer().URL)
	}
	if strings.Contains(s, "{{rest-host}}") {
		s = strings.ReplaceAll(s, "{{rest-host}}", strings.TrimPrefix(r.restServer().URL, "http://"))
	}
	if strings.Contains(s, "{{dead}}") {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			r.t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		s = strings.ReplaceAll(s, "{{dead}}", "http://"+addr)
	}
	return s
}

// restServer starts the REST server once.
func (r *semRun) restServer() *httptest.Server {
	x := &r.ext
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.rest == nil {
		x.rest = httptest.NewServer(http.HandlerFunc(r.serveREST))
		r.t.Cleanup(x.rest.Close)
	}
	return x.rest
}

// serveREST records a request and answers the next scripted answer; with
// none, 500.
func (r *semRun) serveREST(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	x := &r.ext
	x.mu.Lock()
	x.reqs = append(x.reqs, semHTTPRequest{method: req.Method, path: req.URL.RequestURI(), ctype: req.Header.Get("Content-Type"), body: string(body), header: req.Header.Clone()})
	a := semHTTPAnswer{status: http.StatusInternalServerError, body: "no scripted answer"}
	if len(x.answers) > 0 {
		a = x.answers[0]
		if len(x.answers) > 1 {
			x.answers = x.answers[1:]
		}
	}
	x.mu.Unlock()
	if a.delay > 0 {
		select {
		case <-time.After(a.delay):
		case <-req.Context().Done():
			return
		}
	}
	if a.body != "" {
		w.Header().Set("Content-Type", "application/xml")
	}
	w.WriteHeader(a.status)
	io.WriteString(w, a.body)
}

// nsSemExt is the namespace of the test extension every case's bundle is
// compiled with (extLoadOptions).
const nsSemExt = "urn:sem:ext"

// extLoadOptions registers the test extension (exttest) under nsSemExt.
func (r *semRun) extLoadOptions() compile.LoadOptions {
	return compile.LoadOptions{Extensions: exttest.Extension{NS: nsSemExt, RespNS: "urn:e2e"}.Extensions()}
}

// extOptions records where partner calls go, traces when the case has a
// spans step, and wraps the persistent store.
func (r *semRun) extOptions(o *process.Options) {
	x := &r.ext
	x.calls, x.wentSeen = map[string][]semAddrCall{}, map[string]int{}
	o.Partners = func(ep *exchange.Endpoint) exchange.Partner {
		return &semAddressed{r: r, addr: ep.Address, params: ep.ReferenceParams}
	}
	o.AssignedPartners = func(ep *exchange.Endpoint, _ *partnerallow.List) exchange.Partner {
		return &semAddressed{r: r, addr: ep.Address, params: ep.ReferenceParams}
	}
	o.SampleEvery = -1
	for _, st := range r.c.script {
		switch st.verb {
		case "spans", "no-spans", "span-child", "span-attr", "span-link", "span-status":
			if x.spans == nil {
				x.spans = tracetest.NewSpanRecorder()
				o.Tracer = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(x.spans)).Tracer("sem")
			}
		case "commit-fail":
			// A timer run that could not be stored fires again after
			// this (wall-clock) delay.
			o.OutboxRetry = 20 * time.Millisecond
		case "base-url":
			o.BaseURL = st.args[0]
		case "rest-timeout":
			d, err := time.ParseDuration(st.args[0])
			if err != nil {
				r.failf(st.line, "rest-timeout: %v", err)
			}
			o.HTTPTimeout = d
		case "sample-every":
			n, err := strconv.Atoi(st.args[0])
			if err != nil {
				r.failf(st.line, "sample-every: %v", err)
			}
			o.SampleEvery = n
			if o.SampleFirst == 0 {
				o.SampleFirst = -1 // the case counts one in N from the first
			}
		case "sample-first":
			n, err := strconv.Atoi(st.args[0])
			if err != nil || n < 0 {
				r.failf(st.line, "sample-first: want a count, got %q", st.args[0])
			}
			o.SampleFirst = cmp.Or(n, -1)
		}
	}
	if st, ok := o.Store.(*persist.Store); ok {
		x.store = &semFailingStore{Store: st}
		o.Store = x.store
	}
}

// semAddressed is the scripted partner, reached at addr: it records the
// address and the header blocks of each call (the endpoint's reference
// parameters, which the SOAP client sends as headers, then the call's).
type semAddressed struct {
	r      *semRun
	addr   string
	params []*etree.Element
}

func (p *semAddressed) Invoke(ctx context.Context, c *exchange.Call) (*exchange.Message, error) {
	x := &p.r.ext
	x.mu.Lock()
	var hs []*etree.Element
	for _, h := range append(append([]*etree.Element(nil), p.params...), c.Headers...) {
		hs = append(hs, h.Copy())
	}
	if rt := c.ReplyTo; rt != nil {
		// The call's wsa:ReplyTo, as a block of its own.
		h := etree.NewElement("sem:replyTo")
		h.CreateAttr("xmlns:sem", "urn:sem")
		h.CreateElement("sem:address").SetText(rt.Address)
		for _, p := range rt.ReferenceParams {
			h.AddChild(p.Copy())
		}
		hs = append(hs, h)
	}
	x.calls[c.Operation.Name] = append(x.calls[c.Operation.Name], semAddrCall{addr: p.addr, headers: hs})
	x.mu.Unlock()
	return p.r.partner.Invoke(ctx, c)
}

// Address implements exchange.Addressed as the SOAP client does: the
// address, credentials removed.
func (p *semAddressed) Address() string {
	u, err := url.Parse(p.addr)
	if err != nil || u.User == nil {
		return p.addr
	}
	u.User = nil
	return u.String()
}

// semFailingStore is a real store whose next commits fail when told
// to, as a failing disk makes it: a failed commit writes nothing.
type semFailingStore struct {
	*persist.Store
	mu   sync.Mutex
	fail int
}

func (s *semFailingStore) Commit(cps ...*persist.Checkpoint) error {
	s.mu.Lock()
	fail := s.fail > 0
	if fail {
		s.fail--
	}
	s.mu.Unlock()
	if fail {
		return fmt.Errorf("sem: injected: %w", syscall.EIO)
	}
	return s.Store.Commit(cps...)
}

// extStep runs a step of this file.
func (r *semRun) extStep(st semStep) {
	r.t.Helper()
	x := &r.ext
	a := st.args
	switch st.verb {
	case "sample-every", "sample-first", "base-url", "rest-timeout":
		// Read at deploy (extOptions).
	case "commit-fail":
		if x.store == nil {
			r.failf(st.line, "commit-fail: no store (add mode persistent)")
		}
		x.store.mu.Lock()
		x.store.fail++
		x.store.mu.Unlock()
	case "went":
		// went OP ADDRESS: OP's next call not checked by went went to
		// ADDRESS ({{rest}} and {{dead}} are not replaced here).
		if r.partner.waitCalls(a[0], x.wentSeen[a[0]]+1, 10*time.Second) <= x.wentSeen[a[0]] {
			r.failf(st.line, "went %s: no call %d", a[0], x.wentSeen[a[0]]+1)
		}
		x.mu.Lock()
		calls := x.calls[a[0]]
		x.mu.Unlock()
		i := x.wentSeen[a[0]]
		if i >= len(calls) {
			r.failf(st.line, "went %s: call %d not recorded", a[0], i+1)
		}
		if calls[i].addr != a[1] {
			r.failf(st.line, "went %s: call %d went to %q, want %q", a[0], i+1, calls[i].addr, a[1])
		}
		x.wentSeen[a[0]]++
	case "header":
		// header OP XML: the call a went step checked last carried this
		// header block (compared canonically); header OP TEXT (not
		// markup, or canonical markup "<{ns}name>..."): one whose
		// canonical form contains TEXT.
		i := x.wentSeen[a[0]] - 1
		if i < 0 {
			r.failf(st.line, "header %s: no went step before it", a[0])
		}
		x.mu.Lock()
		hs := x.calls[a[0]][i].headers
		x.mu.Unlock()
		var got []string
		if !strings.HasPrefix(a[1], "<") || strings.HasPrefix(a[1], "<{") {
			for _, h := range hs {
				if strings.Contains(canonXML(h), a[1]) {
					return
				}
				got = append(got, canonXML(h))
			}
			r.failf(st.line, "header %s: call %d carried headers\n%s\nwant one containing %q", a[0], i+1, strings.Join(got, "\n"), a[1])
		}
		want, err := semXML(a[1])
		if err != nil {
			r.failf(st.line, "header: %v", err)
		}
		for _, h := range hs {
			if canonXML(h) == canonXML(want) {
				return
			}
			got = append(got, canonXML(h))
		}
		r.failf(st.line, "header %s: call %d carried headers\n%s\nwant\n%s", a[0], i+1, strings.Join(got, "\n"), canonXML(want))
	case "http":
		r.httpStep(st)
	case "session":
		// session NAME: the last reply holds an odesession:session
		// element; NAME is its text from now on.
		o := r.cur
		if o == nil {
			r.failf(st.line, "session: no send or await before it")
		}
		o.mu.Lock()
		sid := ""
		if o.out != nil {
			for _, p := range o.out.Parts {
				for _, e := range p.FindElements("//session") {
					if e.NamespaceURI() == "http://www.apache.org/ode/type/session" {
						sid = strings.TrimSpace(e.Text())
					}
				}
			}
		}
		o.mu.Unlock()
		if sid == "" {
			r.failf(st.line, "session: the last reply holds no odesession:session")
		}
		// A reply holding a session checks the send.
		r.checked = true
		if x.sessions == nil {
			x.sessions = map[string]string{}
		}
		x.sessions[a[0]] = sid
	case "with-session", "with-intalio-session":
		// with-session NAME: the next send or start carries the session
		// header block of NAME (a name no session step gave: that text),
		// in ODE's namespace, or in Intalio's.
		sid, ok := x.sessions[a[0]]
		if !ok {
			sid = a[0]
		}
		ns := "http://www.apache.org/ode/type/session"
		if st.verb == "with-intalio-session" {
			ns = "http://www.intalio.com/type/session"
		}
		h := etree.NewElement("odesession:session")
		h.CreateAttr("xmlns:odesession", ns)
		h.SetText(sid)
		x.headers = []*etree.Element{h}
	case "spans", "no-spans":
		r.spansStep(st)
	case "span-child", "span-attr", "span-link", "span-status":
		r.spanRelStep(st)
	case "timed", "faults", "stat":
		r.statStep(st)
	default:
		r.failf(st.line, "step %s: not run (semExtArity knows it, extStep does not)", st.verb)
	}
}

// httpStep runs http reply STATUS [BODY], http request METHOD PATH
// [BODY] and http requests N.
func (r *semRun) httpStep(st semStep) {
	x := &r.ext
	kind, arg, rest := st.args[0], st.args[1], st.args[2]
	switch kind {
	case "reply", "slow-reply":
		// http slow-reply DELAY STATUS [BODY]: the answer comes after
		// DELAY.
		var delay time.Duration
		if kind == "slow-reply" {
			d, err := time.ParseDuration(arg)
			if err != nil {
				r.failf(st.line, "http slow-reply: %v", err)
			}
			delay = d
			arg, rest, _ = strings.Cut(rest, " ")
		}
		n, err := strconv.Atoi(arg)
		if err != nil {
			r.failf(st.line, "http reply: %v", err)
		}
		x.mu.Lock()
		x.answers = append(x.answers, semHTTPAnswer{status: n, body: rest, delay: delay})
		x.mu.Unlock()
	case "request":
		path, body, _ := strings.Cut(rest, " ")
		x.mu.Lock()
		i := x.reqSeen
		if i >= len(x.reqs) {
			n := len(x.reqs)
			x.mu.Unlock()
			r.failf(st.line, "http request: the server got %d requests, want a request %d", n, i+1)
		}
		got := x.reqs[i]
		x.reqSeen++
		x.mu.Unlock()
		if got.method != arg || got.path != path {
			r.failf(st.line, "http request %d: got %s %s, want %s %s", i+1, got.method, got.path, arg, path)
		}
		body = strings.TrimSpace(body)
		if body == "" {
			if got.body != "" {
				r.failf(st.line, "http request %d: got body %q, want none", i+1, got.body)
			}
			return
		}
		if !strings.HasPrefix(body, "<") {
			// A text body.
			if strings.TrimSpace(got.body) != body {
				r.failf(st.line, "http request %d: got body %q, want %q", i+1, got.body, body)
			}
			return
		}
		want, err := semXML(body)
		if err != nil {
			r.failf(st.line, "http request: %v", err)
		}
		// What the server got is XML as it is (semXML would add the
		// default namespace).
		doc := etree.NewDocument()
		err = doc.ReadFromString(got.body)
		if err != nil || doc.Root() == nil || canonXML(doc.Root()) != canonXML(want) {
			r.failf(st.line, "http request %d: got body (%s)\n%s\nwant\n%s", i+1, got.ctype, got.body, canonXML(want))
		}
	case "header":
		// http header NAME VALUE: the request http request checked last
		// had this header.
		x.mu.Lock()
		i := x.reqSeen - 1
		var got string
		if i >= 0 {
			got = x.reqs[i].header.Get(arg)
		}
		x.mu.Unlock()
		if i < 0 {
			r.failf(st.line, "http header: no http request step before it")
		}
		if got != rest {
			r.failf(st.line, "http request %d: header %s is %q, want %q", i+1, arg, got, rest)
		}
	case "requests":
		n, err := strconv.Atoi(arg)
		if err != nil {
			r.failf(st.line, "http requests: %v", err)
		}
		x.mu.Lock()
		got := len(x.reqs)
		x.reqCounted = true
		x.mu.Unlock()
		if got != n {
			r.failf(st.line, "the REST server got %d requests, want %d", got, n)
		}
	default:
		r.failf(st.line, "http %s: want reply, request, header or requests", kind)
	}
}

// spansStep runs spans NAMES and no-spans NAMES (NAMES separated by
// commas): every name is (is not) among the names of the ended spans.
// spans waits up to 2s for them.
func (r *semRun) spansStep(st semStep) {
	names := strings.Split(st.args[0], ",")
	var ended []string
	deadline := time.Now().Add(2 * time.Second)
	for {
		ended = ended[:0]
		for _, s := range r.ext.spans.Ended() {
			ended = append(ended, s.Name())
		}
		missing := ""
		for _, n := range names {
			if !containsStr(ended, strings.TrimSpace(n)) {
				missing = n
				break
			}
		}
		if st.verb == "spans" && missing != "" && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
			continue
		}
		if st.verb == "spans" && missing != "" {
			r.failf(st.line, "no ended span %q; the spans: %s", missing, strings.Join(ended, ", "))
		}
		if st.verb == "no-spans" {
			for _, n := range names {
				if containsStr(ended, strings.TrimSpace(n)) {
					r.failf(st.line, "a span %q ended; the spans: %s", n, strings.Join(ended, ", "))
				}
			}
		}
		return
	}
}

// spanRelStep runs span-child PARENT, CHILD (the one ended span named
// CHILD is a child of the one named PARENT), span-link FROM, TO (the
// span FROM links to the span TO) and span-attr KEY=VALUE NAME
// (the one ended span named NAME has that attribute; VALUE is a regular
// expression on its value, formatted).
func (r *semRun) spanRelStep(st semStep) {
	one := func(name string) sdktrace.ReadOnlySpan {
		var found []sdktrace.ReadOnlySpan
		deadline := time.Now().Add(2 * time.Second)
		for len(found) == 0 && time.Now().Before(deadline) {
			for _, s := range r.ext.spans.Ended() {
				if s.Name() == name {
					found = append(found, s)
				}
			}
			if len(found) == 0 {
				time.Sleep(5 * time.Millisecond)
			}
		}
		if len(found) != 1 {
			r.failf(st.line, "%d ended spans named %q, want one", len(found), name)
		}
		return found[0]
	}
	if st.verb == "span-child" {
		parent, child, ok := strings.Cut(st.args[0], ",")
		if !ok {
			r.failf(st.line, "span-child: want PARENT, CHILD")
		}
		p, c := one(strings.TrimSpace(parent)), one(strings.TrimSpace(child))
		if c.Parent().SpanID() != p.SpanContext().SpanID() || c.SpanContext().TraceID() != p.SpanContext().TraceID() {
			r.failf(st.line, "span %q's parent is %s, want %q's %s", c.Name(), c.Parent().SpanID(), p.Name(), p.SpanContext().SpanID())
		}
		return
	}
	if st.verb == "span-status" {
		// span-status NAME error|unset: the one span NAME ended with
		// that status code.
		want := map[string]codes.Code{"error": codes.Error, "unset": codes.Unset, "ok": codes.Ok}
		code, ok := want[st.args[0]]
		if !ok {
			r.failf(st.line, "span-status: want error, unset or ok, not %q", st.args[0])
		}
		sp := one(st.args[1])
		if sp.Status().Code != code {
			r.failf(st.line, "span %q: status %v (%s), want %v", sp.Name(), sp.Status().Code, sp.Status().Description, code)
		}
		return
	}
	if st.verb == "span-link" {
		from, to, ok := strings.Cut(st.args[0], ",")
		if !ok {
			r.failf(st.line, "span-link: want FROM, TO")
		}
		f, t := one(strings.TrimSpace(from)), one(strings.TrimSpace(to))
		for _, l := range f.Links() {
			if l.SpanContext.SpanID() == t.SpanContext().SpanID() && l.SpanContext.TraceID() == t.SpanContext().TraceID() {
				return
			}
		}
		r.failf(st.line, "span %q has %d links, none to %q", f.Name(), len(f.Links()), t.Name())
	}
	key, want, ok := strings.Cut(st.args[0], "=")
	if !ok {
		r.failf(st.line, "span-attr: want KEY=VALUE NAME")
	}
	re, err := regexp.Compile("^(?:" + want + ")$")
	if err != nil {
		r.failf(st.line, "span-attr: %v", err)
	}
	sp := one(st.args[1])
	var got []string
	for _, a := range sp.Attributes() {
		if string(a.Key) == key {
			if re.MatchString(a.Value.Emit()) {
				return
			}
			got = append(got, a.Value.Emit())
		}
	}
	r.failf(st.line, "span %q: attribute %s is %q, want %s", sp.Name(), key, got, want)
}

func containsStr(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// statStep runs timed N ACT (the activities whose kind, or kind and
// name, are ACT completed N times in all in the instances sampled for
// timing, as the management outline counts them), faults N ACT (they
// faulted N times, in any instance) and stat KEY N (the
// version's counter KEY: started, completed, faulted, terminated,
// suspended, exchanges).
func (r *semRun) statStep(st semStep) {
	d, err := r.engine.Version(r.version.Name.String(), r.version.Number)
	if err != nil {
		r.failf(st.line, "%s: %v", st.verb, err)
	}
	if st.verb == "stat" {
		n, err := strconv.Atoi(st.args[1])
		if err != nil {
			r.failf(st.line, "stat: %v", err)
		}
		s := d.Stats
		got, ok := map[string]uint64{"started": s.Started, "completed": s.Completed, "faulted": s.Faulted,
			"terminated": s.Terminated, "suspended": s.Suspended, "exchanges": s.Exchanges}[st.args[0]]
		if !ok {
			r.failf(st.line, "stat %s: no such counter", st.args[0])
		}
		if got != uint64(n) {
			r.failf(st.line, "stat %s is %d, want %d", st.args[0], got, n)
		}
		return
	}
	n, err := strconv.Atoi(st.args[0])
	if err != nil {
		r.failf(st.line, "timed: %v", err)
	}
	var got uint64
	var walk func(as []*mgmt.Activity)
	walk = func(as []*mgmt.Activity) {
		for _, a := range as {
			if a.Kind == st.args[1] || a.Kind+" "+a.Name == st.args[1] {
				got += a.Count
				if st.verb == "faults" {
					got += a.Faults - a.Count
				}
			}
			walk(a.Children)
		}
	}
	if d.Outline != nil {
		walk([]*mgmt.Activity{d.Outline})
	}
	if got != uint64(n) {
		r.failf(st.line, "%s %s: %d (timed: completions in sampled instances; faults: faults in all), want %d", st.verb, st.args[1], got, n)
	}
}

// extHeaders returns the header blocks of the next dispatch, once.
func (r *semRun) extHeaders() []*etree.Element {
	h := r.ext.headers
	r.ext.headers = nil
	return h
}

// extDone fails a case that left requests of the REST server unchecked.
func (r *semRun) extDone(line int) {
	x := &r.ext
	x.mu.Lock()
	n, seen, counted := len(x.reqs), x.reqSeen, x.reqCounted
	x.mu.Unlock()
	if !counted && n != seen {
		r.failf(line, "the REST server got %d requests, the case checked %d (add http request or http requests steps)", n, seen)
	}
}
