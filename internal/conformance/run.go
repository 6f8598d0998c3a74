package conformance

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/orchd/orchd/internal/endpoints"
	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/odecorpus"
	"github.com/orchd/orchd/internal/odemock"
	"github.com/orchd/orchd/internal/process"
	"github.com/orchd/orchd/internal/process/compile"
	"github.com/orchd/orchd/internal/process/interp"
	"github.com/orchd/orchd/internal/server"
	"github.com/orchd/orchd/internal/soap"
)

// Outcome of a case.
type Outcome string

// Outcomes.
const (
	Pass   Outcome = "PASS"
	Fail   Outcome = "FAIL"
	NotRun Outcome = "SKIP"
)

// Result is the outcome of one case.
type Result struct {
	Case    *Case
	Outcome Outcome
	// Detail is the failure reason or the skip reason.
	Detail string
	// Took is how long the exchange took (zero when not sent).
	Took time.Duration
	// Lenient marks a pass by ODE's rule for a case without a response
	// pattern (MANIFEST.md: "nothing is checked except that the invoke
	// does not throw and the exchange finishes"): orchd answered with a
	// declared fault, which that rule accepts and a strict reading does
	// not. Summaries count such passes apart. Passes of a bundle deployed
	// only with static analysis rules waived (odecorpus.SpecWaivers) are lenient too.
	Lenient bool
}

// lenientMark follows a lenient pass's id in the list of passing cases.
const lenientMark = "lenient"

// WaivedNote starts the detail of a pass of a bundle deployed with static
// analysis rules waived (odecorpus.SpecWaivers).
const WaivedNote = "lenient: deployed only with WS-BPEL static analysis rules ODE did not check waived: "

// LenientNote is the detail of a lenient pass.
const LenientNote = "lenient: no response pattern, and ODE's harness checked only completion; answered with a declared fault: "

// Line is the report line of the result.
func (r Result) Line() string {
	if r.Detail == "" {
		return string(r.Outcome) + " " + r.Case.ID
	}
	return string(r.Outcome) + " " + r.Case.ID + ": " + r.Detail
}

// Options configure a run.
type Options struct {
	// Root is the corpus folder (testdata/ode-corpus).
	Root string
	// Stagger is the delay between the launches of a bundle's cases; ODE
	// used 2 s, and correlation tests depend on it.
	Stagger time.Duration
	// Timeout bounds each exchange; ODE used 60 s.
	Timeout time.Duration
	// Parallel is how many bundles run at once (each in its own server).
	Parallel int
	// Logger receives orchd's logs; nil discards them.
	Logger *slog.Logger
	// REST is the address (host:port) ODE's REST test server listens on.
	// The corpus's REST cases call http://localhost:8085, written in
	// their processes; the engines dial REST for that address, so the
	// server can take a port the system chooses and no other run's
	// server on 8085 is ever called. Empty: 8085 itself is dialled.
	REST string
}

// Runner drives bundles against in-process orchd servers.
type Runner struct {
	opts      Options
	overrides *endpoints.Table
	client    *soap.Client
	log       *slog.Logger
}

// NewRunner returns a runner whose processes call the ODE mock partners
// served by mocks.
func NewRunner(opts Options, mocks *odemock.Servers) (*Runner, error) {
	if opts.Stagger < 0 {
		opts.Stagger = 0
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 60 * time.Second
	}
	if opts.Parallel <= 0 {
		opts.Parallel = 1
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	tab, err := endpoints.New(
		endpoints.Rule{PortType: odemock.ProbePortType, Address: mocks.ProbeURL},
		endpoints.Rule{PortType: odemock.FaultPortType, Address: mocks.FaultURL},
	)
	if err != nil {
		return nil, err
	}
	return &Runner{opts: opts, overrides: tab, log: log,
		client: soap.NewClient(soap.ClientOptions{Timeout: opts.Timeout, MaxConnsPerHost: -1})}, nil
}

// Run runs the bundles, opts.Parallel at a time, and returns the results
// in bundle and launch order, and how many bundles deployed.
func (r *Runner) Run(ctx context.Context, bundles []*Bundle) (results []Result, deployed int) {
	out := make([][]Result, len(bundles))
	ok := make([]bool, len(bundles))
	sem := make(chan struct{}, r.opts.Parallel)
	var wg sync.WaitGroup
	var versioned []int // the bundles of a folder deployed in order (versions.go)
	for i, b := range bundles {
		if b.Versioned {
			versioned = append(versioned, i)
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i], ok[i] = r.RunBundle(ctx, b)
		}()
	}
	if len(versioned) > 0 {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			r.runVersioned(ctx, bundles, versioned, out, ok)
		}()
	}
	wg.Wait()
	for i := range bundles {
		results = append(results, out[i]...)
		if ok[i] {
			deployed++
		}
	}
	return results, deployed
}

// deployment is one bundle served by an in-process orchd on loopback.
type deployment struct {
	engine *process.Engine
	front  *soap.Server
	base   string
	srv    *http.Server
}

// sharedFolders are the corpus folders its bundles import from beside
// their own (ODE's test bundles share ../ProbeService and ../FaultService).
var sharedFolders = []string{"ProbeService", "FaultService"}

// deploy loads the bundle, forces its processes in-memory (as ODE's
// harness did), and serves it on a 127.0.0.1 port of its own, wired like
// orchd serve: engine, SOAP front door, orchd's HTTP handler.
func (r *Runner) deploy(dir string) (*deployment, error) {
	hc, timeout := r.client.HTTPClient()
	hc = redirectREST(hc, r.opts.REST)
	engine := process.NewEngine(process.Options{Logger: r.log, Partners: r.overrides.Partners(r.client.Partner), HTTPClient: hc, HTTPTimeout: timeout})
	procs, err := r.load(dir, 1)
	if err != nil {
		return nil, err
	}
	if err := engine.Deploy(procs...); err != nil {
		return nil, err
	}
	front := soap.NewServer(soap.ServerOptions{Logger: r.log})
	var errs []error
	for _, p := range engine.Processes() {
		for _, ep := range p.Endpoints {
			if err := front.Handle(ep, engine); err != nil {
				errs = append(errs, fmt.Errorf("process %s: %w", p, err))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	srv := &http.Server{Handler: server.New(server.Options{Engine: engine, SOAP: front, Logger: r.log}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return &deployment{engine: engine, front: front, base: "http://" + ln.Addr().String(), srv: srv}, nil
}

// load compiles the bundle in dir (with ODE's test extension, the shared
// folders and the bundle's waivers) into versions numbered number,
// forced in-memory.
func (r *Runner) load(dir string, number int) ([]*interp.Version, error) {
	lo := compile.LoadOptions{Extensions: compile.Extensions{odemock.TestExtensionNS: odemock.TestExtension()}, SharedFolders: sharedFolders,
		Waive: odecorpus.SpecWaivers()[filepath.Base(dir)]}
	pls, err := compile.LoadBundleWith(dir, lo)
	if err != nil {
		return nil, err
	}
	procs := interp.NewVersions(pls)
	for _, p := range procs {
		p.InMemory = true
		p.Number = number
	}
	return procs, nil
}

// redirectREST returns hc with its connections to odemock.RESTAddr (or
// localhost:8085, as the corpus writes it) made to addr instead; hc
// itself when addr is empty or hc's transport is not an *http.Transport.
func redirectREST(hc *http.Client, addr string) *http.Client {
	tr, ok := hc.Transport.(*http.Transport)
	if addr == "" || !ok {
		return hc
	}
	_, port, _ := net.SplitHostPort(odemock.RESTAddr)
	tr = tr.Clone()
	dial := tr.DialContext
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	tr.DialContext = func(ctx context.Context, network, a string) (net.Conn, error) {
		if a == odemock.RESTAddr || a == net.JoinHostPort("localhost", port) {
			a = addr
		}
		return dial(ctx, network, a)
	}
	c := *hc
	c.Transport = tr
	return &c
}

// RunBundle deploys b and drives its cases; ok reports whether it
// deployed.
func (r *Runner) RunBundle(ctx context.Context, b *Bundle) (results []Result, ok bool) {
	d, derr := r.deploy(filepath.Join(r.opts.Root, filepath.FromSlash(b.Dir)))
	if d != nil {
		defer d.srv.Close()
	}
	return r.runCases(ctx, b, d, derr), derr == nil
}

// runCases drives b's cases against d, deployed (or refused: derr).
func (r *Runner) runCases(ctx context.Context, b *Bundle, d *deployment, derr error) (results []Result) {
	results = make([]Result, len(b.Cases))
	var wg sync.WaitGroup
	done := map[string]chan struct{}{} // last launched case of a sequential file
	start := time.Now()
	launched := 0
	for i, c := range b.Cases {
		res := &results[i]
		res.Case = c
		switch {
		case c.ExpectRefusal:
			derr := derr
			if c.WithoutExtensions {
				_, derr = compile.LoadBundleWith(filepath.Join(r.opts.Root, filepath.FromSlash(b.Dir)), compile.LoadOptions{SharedFolders: sharedFolders})
			}
			if derr != nil {
				res.Outcome, res.Detail = Pass, "refused: "+firstLine(derr)
			} else {
				res.Outcome, res.Detail = Fail, "deploy succeeded; it must be refused"
			}
			continue
		case c.Skip != "":
			res.Outcome, res.Detail = NotRun, c.Skip
			if b.wantRefusalNote {
				switch {
				case derr != nil:
					res.Detail += "; orchd refused the deploy: " + firstLine(derr)
				case strings.HasPrefix(b.Dir, "ExtVar"):
					res.Detail += "; orchd deployed it without refusing external variables"
				default:
					res.Detail += "; orchd deploys it"
				}
			}
			continue
		case derr != nil:
			res.Outcome, res.Detail = Fail, "deploy refused: "+oneLine(derr.Error())
			continue
		}
		var re *regexp.Regexp
		if c.Response != "" {
			var err error
			if re, err = compileJava(c.Response); err != nil {
				res.Outcome, res.Detail = NotRun, "not run: response regex does not translate to RE2: "+err.Error()
				continue
			}
		}
		at := start.Add(time.Duration(launched) * r.opts.Stagger)
		launched++
		var prev chan struct{}
		mine := make(chan struct{})
		if c.Sequential {
			prev = done[c.Props]
			done[c.Props] = mine
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(mine)
			if !sleepUntil(ctx, at) {
				res.Outcome, res.Detail = Fail, "cancelled before launch"
				return
			}
			if prev != nil {
				<-prev
			}
			r.runCase(ctx, d, c, re, res)
		}()
	}
	wg.Wait()
	if why := knownDifferences[b.Dir]; why != "" {
		for i := range results {
			if res := &results[i]; res.Outcome == Fail {
				res.Detail = "orchd differs from ODE: " + why + "; " + res.Detail
			}
		}
	}
	if rules := odecorpus.SpecWaivers()[path.Base(b.Dir)]; rules != nil {
		for i := range results {
			if res := &results[i]; res.Outcome == Pass && !res.Case.ExpectRefusal {
				res.Lenient = true
				res.Detail = strings.TrimSpace(fmt.Sprintf("%s%v %s", WaivedNote, rules, res.Detail))
			}
		}
	}
	return results
}

func sleepUntil(ctx context.Context, t time.Time) bool {
	tm := time.NewTimer(time.Until(t))
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// runCase sends one request and checks the answer.
func (r *Runner) runCase(ctx context.Context, d *deployment, c *Case, re *regexp.Regexp, res *Result) {
	fail := func(format string, args ...any) { res.Outcome, res.Detail = Fail, fmt.Sprintf(format, args...) }
	ep, op, err := route(d.engine, c.Service, c.Operation)
	if err != nil {
		fail("%v", err)
		return
	}
	msg, err := toMessage(fillNow(c.Request, time.Now()), op.Input)
	if err != nil {
		fail("request: %v", err)
		return
	}
	target := *ep
	target.Address = d.base + ep.Path
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	t0 := time.Now()
	out, err := r.client.Partner(&target).Invoke(ctx, &exchange.Call{Operation: op, Input: msg})
	res.Took = time.Since(t0)
	if err != nil {
		var declared *exchange.Fault
		isFault := errors.As(err, &declared) || errors.Is(err, soap.ErrPartnerFault)
		switch {
		case isFault && c.FaultOK:
		case declared != nil && re == nil:
			// ODE checked nothing but completion for a case without a
			// response pattern; a declared fault completes the exchange.
			// It passes, counted apart as lenient.
			res.Lenient, res.Detail = true, LenientNote+oneLine(err.Error())
		case isFault:
			fail("fault answer: %s", oneLine(err.Error()))
			return
		default:
			fail("%s", oneLine(err.Error()))
			return
		}
	}
	if c.MinTime > 0 && res.Took < c.MinTime {
		fail("answered after %s, before the minimum %s", res.Took.Round(time.Millisecond), c.MinTime)
		return
	}
	if c.MaxTime > 0 && res.Took > c.MaxTime {
		fail("answered after %s, after the maximum %s", res.Took.Round(time.Millisecond), c.MaxTime)
		return
	}
	if re != nil {
		if out == nil {
			fail("no response message (%s is one-way or answered with no message)", op.Name)
			return
		}
		got, err := normalize(out, op.Output)
		if err != nil {
			fail("normalizing the answer: %v", err)
			return
		}
		if !re.MatchString(got) {
			fail("%s", mismatch(c.Response, got))
			return
		}
	}
	res.Outcome = Pass
}

// route finds the served endpoint of service (the deploy.xml <provide>
// service, compared exactly, then ignoring the case of the local name as
// the corpus needs) and its operation.
func route(e *process.Engine, service exchange.QName, operation string) (*exchange.Endpoint, *exchange.Operation, error) {
	var served []string
	for _, pass := range []func(exchange.QName) bool{
		func(q exchange.QName) bool { return q == service },
		func(q exchange.QName) bool {
			return q.Space == service.Space && strings.EqualFold(q.Local, service.Local)
		},
	} {
		for _, p := range e.Processes() {
			for _, ep := range p.Endpoints {
				if !pass(ep.Service) {
					continue
				}
				for _, op := range ep.Operations {
					if op.Name == operation {
						return ep, op, nil
					}
				}
			}
		}
	}
	for _, p := range e.Processes() {
		for _, ep := range p.Endpoints {
			served = append(served, ep.Service.String()+" "+ep.Port)
		}
	}
	return nil, nil, fmt.Errorf("no deployed endpoint of service %s has operation %s (served: %s)", service, operation, strings.Join(served, ", "))
}

var nowRE = regexp.MustCompile(`\$\{NOW([+-]\d+)s:[^}]*\}`)

// fillNow replaces ${NOW±Ns:...} with local time now±N seconds, no zone,
// millisecond precision (2024-01-01T12:00:05.000).
func fillNow(s string, now time.Time) string {
	return nowRE.ReplaceAllStringFunc(s, func(m string) string {
		n, _ := strconv.Atoi(nowRE.FindStringSubmatch(m)[1])
		return now.Add(time.Duration(n) * time.Second).Format("2006-01-02T15:04:05.000")
	})
}

func firstLine(err error) string {
	s := err.Error()
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "bundle ") {
			return clip(l, 300)
		}
	}
	return clip(s, 300)
}

// oneLine folds a multi-line error into one report line.
func oneLine(s string) string {
	f := strings.Fields(s)
	return clip(strings.Join(f, " "), 600)
}

// Summary counts results.
type Summary struct {
	Passed, Failed, NotRun int
	// Lenient counts the passes (in Passed) by ODE's completion-only rule
	// that a strict check would fail (Result.Lenient).
	Lenient int
}

// Summarize counts the results.
func Summarize(results []Result) Summary {
	var s Summary
	for _, r := range results {
		switch r.Outcome {
		case Pass:
			s.Passed++
			if r.Lenient {
				s.Lenient++
			}
		case Fail:
			s.Failed++
		default:
			s.NotRun++
		}
	}
	return s
}

// String is the closing report line.
func (s Summary) String() string {
	return fmt.Sprintf("%d passed (%d strictly, %d leniently: ODE's harness did not check what orchd's does, a response without a pattern or a static analysis rule; each case's line says which), %d failed, %d not run",
		s.Passed, s.Passed-s.Lenient, s.Lenient, s.Failed, s.NotRun)
}

// PassingIDs returns the IDs of the passed cases, sorted, each lenient
// pass followed by " lenient" (the form of testdata/passing.txt).
func PassingIDs(results []Result) []string {
	var ids []string
	for _, r := range results {
		if r.Outcome == Pass {
			id := r.Case.ID
			if r.Lenient {
				id += " " + lenientMark
			}
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}
