package conformance

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/orchd/orchd/internal/exchange"
)

// Case is one invocation to drive, or one deploy outcome to check.
type Case struct {
	// ID names the case in reports and in testdata/passing.txt:
	// bundle/props#N, bundle/java:method#N, or bundle/deploy.xml#refused.
	ID string
	// Bundle is the bundle folder relative to the corpus root (the test
	// folder, or TestVersionedRedeploy/HelloWorld-N).
	Bundle string
	// Props is the properties file ("test1.properties"), "java:<method>"
	// for a case transcribed from ODE's Java tests, or "deploy.xml".
	Props string
	// N is the request number in the properties file.
	N int
	// Launch is the position in the bundle's staggered launch sequence
	// (1-based).
	Launch int

	Service   exchange.QName
	Operation string
	// Request is the request in ODE's normalized <message> form; for Java
	// cases it may hold ${NOW+5s:...} placeholders filled in when sent.
	Request string
	// Response is the Java regex the answer must fully match; empty when
	// the case checks only that the exchange completes.
	Response string
	// Sequential: wait for the previous case of the same file to finish.
	Sequential bool
	// MinTime and MaxTime bound the response time (Java cases); zero means
	// no bound.
	MinTime, MaxTime time.Duration
	// FaultOK accepts a fault answer (a Java case that only checks that
	// the exchange completes).
	FaultOK bool
	// ExpectRefusal: the case passes if the bundle is refused at deploy.
	ExpectRefusal bool
	// WithoutExtensions: an ExpectRefusal case whose bundle is compiled
	// without the test extension bundle (odemock.TestExtension), which
	// the harness otherwise registers.
	WithoutExtensions bool
	// Skip is why the case is not run ("" to run it).
	Skip string
	// Status and Runnable are the ode_status and runnable columns of
	// tests.tsv ("" when the case has no row); Needs is its needs column.
	Status, Runnable, Needs string
}

// NeedsREST reports a case that calls ODE's REST test server
// (odemock.RESTAddr).
func (c *Case) NeedsREST() bool { return strings.Contains(c.Needs, "HTTP server :8085") }

// Bundle is a deployment bundle and its cases in launch order.
type Bundle struct {
	// Dir is the bundle folder relative to the corpus root.
	Dir   string
	Cases []*Case
	// wantRefusalNote: the bundle is deployed only to report, with its
	// skipped cases, whether orchd refused it (external variables).
	wantRefusalNote bool
	// Versioned marks the bundles of TestVersionedRedeploy: deployed in
	// order into one engine, each a new version (versions.go).
	Versioned bool
}

// tsvRow is a row of tests.tsv.
type tsvRow struct {
	folder, bundle, props, caseN, launch, service, operation, expects, fault, sequential, status, runnable, needs, request, response string
	line                                                                                                                             int
}

func (r *tsvRow) bundleDir() string {
	if r.bundle != "" {
		return r.bundle
	}
	return r.folder
}

func (r *tsvRow) key() string { return r.bundleDir() + "/" + r.props + "#" + r.caseN }

// readTSV reads tests.tsv.
func readTSV(root string) ([]*tsvRow, error) {
	f, err := os.Open(filepath.Join(root, "tests.tsv"))
	if err != nil {
		return nil, fmt.Errorf("corpus index: %w", err)
	}
	defer f.Close()
	var rows []*tsvRow
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	line := 0
	for sc.Scan() {
		line++
		if line == 1 {
			continue // header
		}
		c := strings.Split(sc.Text(), "\t")
		if len(c) != 15 {
			return nil, fmt.Errorf("tests.tsv:%d: %d columns, want 15", line, len(c))
		}
		rows = append(rows, &tsvRow{c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], c[10], c[11], c[12], c[13], c[14], line})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("tests.tsv: %w", err)
	}
	return rows, nil
}

// bundleDirs returns every folder under root that holds deploy.xml, one
// level deep or two (TestVersionedRedeploy's bundles), sorted, and the
// top-level folders that hold neither a bundle nor a shared WSDL.
func bundleDirs(root string) (dirs, strays []string, err error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, nil, fmt.Errorf("corpus: %w", err)
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		if exists(filepath.Join(root, e.Name(), "deploy.xml")) {
			dirs = append(dirs, e.Name())
			continue
		}
		subs, _ := os.ReadDir(filepath.Join(root, e.Name()))
		found := false
		for _, s := range subs {
			if s.IsDir() && exists(filepath.Join(root, e.Name(), s.Name(), "deploy.xml")) {
				dirs = append(dirs, e.Name()+"/"+s.Name())
				found = true
			}
		}
		if !found && e.Name() != "ProbeService" && e.Name() != "FaultService" {
			strays = append(strays, e.Name())
		}
	}
	sort.Strings(dirs)
	return dirs, strays, nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// propsFiles returns test.properties (if present) then test1.properties,
// test2.properties, ... up to the first missing number.
func propsFiles(dir string) []string {
	var out []string
	if exists(filepath.Join(dir, "test.properties")) {
		out = append(out, "test.properties")
	}
	for n := 1; ; n++ {
		name := "test" + strconv.Itoa(n) + ".properties"
		if !exists(filepath.Join(dir, name)) {
			return out
		}
		out = append(out, name)
	}
}

// Plan reads the corpus at root: every bundle's properties-defined cases,
// the Java-transcribed rows of tests.tsv, and the deploy outcomes the
// MANIFEST prescribes, each with its skip reason if it cannot run.
func Plan(root string) ([]*Bundle, error) {
	rows, err := readTSV(root)
	if err != nil {
		return nil, err
	}
	dirs, strays, err := bundleDirs(root)
	if err != nil {
		return nil, err
	}
	byKey := map[string]*tsvRow{}
	used := map[*tsvRow]bool{}
	for _, r := range rows {
		byKey[r.key()] = r
	}
	var bundles []*Bundle
	var errs []error
	for _, dir := range dirs {
		b := &Bundle{Dir: dir}
		launch := 0
		for _, pf := range propsFiles(filepath.Join(root, filepath.FromSlash(dir))) {
			data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(dir), pf))
			if err != nil {
				errs = append(errs, err)
				continue
			}
			cases, err := propsCases(dir, pf, ParseProperties(data))
			if err != nil {
				errs = append(errs, err)
				continue
			}
			for _, c := range cases {
				launch++
				c.Launch = launch
				if r := byKey[dir+"/"+pf+"#"+strconv.Itoa(c.N)]; r != nil {
					used[r] = true
					applyRow(c, r)
				}
				b.Cases = append(b.Cases, c)
			}
		}
		bundles = append(bundles, b)
	}
	index := map[string]*Bundle{}
	for _, b := range bundles {
		index[b.Dir] = b
	}
	for _, r := range rows {
		if used[r] {
			continue
		}
		b := index[r.bundleDir()]
		if b == nil {
			errs = append(errs, fmt.Errorf("tests.tsv:%d: bundle %s has no deploy.xml", r.line, r.bundleDir()))
			continue
		}
		if strings.HasPrefix(r.props, "(java)") {
			b.Cases = append(b.Cases, javaCase(r))
			continue
		}
		// Never skipped silently: a row the properties files do not hold.
		n, _ := strconv.Atoi(r.caseN)
		b.Cases = append(b.Cases, &Case{ID: r.key(), Bundle: b.Dir, Props: r.props, N: n, Status: r.status, Runnable: r.runnable,
			Skip: fmt.Sprintf("not run: tests.tsv:%d names it but %s does not define it (files after a gap are never read)", r.line, r.props)})
	}
	for _, b := range bundles {
		folderRules(b)
		sort.SliceStable(b.Cases, func(i, j int) bool { return b.Cases[i].Launch < b.Cases[j].Launch })
	}
	for _, s := range strays {
		errs = append(errs, fmt.Errorf("corpus folder %s holds no deploy.xml", s))
	}
	return bundles, errors.Join(errs...)
}

// propsCases turns one properties file into its cases.
func propsCases(dir, file string, p *Properties) ([]*Case, error) {
	ns, _ := p.Get("namespace")
	svc, ok := p.Get("service")
	op, ok2 := p.Get("operation")
	if !ok || !ok2 {
		return nil, fmt.Errorf("%s/%s: needs service and operation", dir, file)
	}
	seq, _ := p.Get("sequential")
	var out []*Case
	for n := 1; ; n++ {
		req, ok := p.Get("request" + strconv.Itoa(n))
		if !ok {
			break
		}
		resp, _ := p.Get("response" + strconv.Itoa(n))
		out = append(out, &Case{ID: fmt.Sprintf("%s/%s#%d", dir, file, n), Bundle: dir, Props: file, N: n,
			Service: exchange.QName{Space: ns, Local: svc}, Operation: op, Request: req, Response: resp,
			Sequential: strings.TrimSpace(seq) == "true"})
	}
	return out, nil
}

// applyRow sets the case's ODE status and, for rows ODE did not run as
// positive checks, why it is not run.
func applyRow(c *Case, r *tsvRow) {
	c.Status, c.Runnable, c.Needs = r.status, r.runnable, r.needs
	switch {
	case r.runnable == "no":
		c.Skip = "not run: " + r.status + " by ODE"
	case r.runnable == "conditional":
		c.Skip = "not run: conditional (" + r.needs + ")"
	case strings.HasPrefix(r.status, "java-driven"):
		c.Skip = "not run: " + r.status + " by ODE"
	}
}

var (
	minTimeRE = regexp.MustCompile(`min (\d+) s`)
	maxTimeRE = regexp.MustCompile(`max (\d+) s`)
	methodRE  = regexp.MustCompile(`\.(\w+)$`)
)

// javaCase builds a case from a "(java)" row of tests.tsv.
func javaCase(r *tsvRow) *Case {
	method := "java"
	if m := methodRE.FindStringSubmatch(r.props); m != nil {
		method = m[1]
	}
	n, _ := strconv.Atoi(r.caseN)
	launch, _ := strconv.Atoi(r.launch)
	c := &Case{ID: fmt.Sprintf("%s/java:%s#%d", r.bundleDir(), method, n), Bundle: r.bundleDir(), Props: "java:" + method, N: n, Launch: launch,
		Service: parseClark(r.service), Operation: r.operation, Request: r.request, Status: r.status, Runnable: r.runnable,
		FaultOK: r.fault == "yes"}
	if m := minTimeRE.FindStringSubmatch(r.expects); m != nil {
		s, _ := strconv.Atoi(m[1])
		c.MinTime = time.Duration(s) * time.Second
	}
	if m := maxTimeRE.FindStringSubmatch(r.expects); m != nil {
		s, _ := strconv.Atoi(m[1])
		c.MaxTime = time.Duration(s) * time.Second
	}
	applyRow(c, r)
	if r.runnable == "yes" && r.status == "java-driven" {
		c.Skip = "" // the transcription gives all this harness needs
	}
	if r.runnable == "yes" && strings.Contains(r.expects, "final status FAULT") {
		c.Skip = "not run: java-driven (expects final status FAULT, which a properties-style check cannot express)"
	}
	return c
}

func parseClark(s string) exchange.QName {
	if strings.HasPrefix(s, "{") {
		if i := strings.IndexByte(s, '}'); i > 0 {
			return exchange.QName{Space: s[1:i], Local: s[i+1:]}
		}
	}
	return exchange.QName{Local: s}
}

// knownDifferences are the bundles whose failures are deliberate: orchd
// follows the WS-BPEL 2.0 specification (or XML's infoset) where ODE's
// expected answer does not. A failing case's line ends with the reason.
var knownDifferences = map[string]string{
	"TestCorrelationJoinInvoke":   "WS-BPEL 2.0 9.2: once initiated, a correlation set must match every message that carries it, join included (here the outgoing one, pattern=\"out\"); orchd raises bpel:correlationViolation, ODE did not check outgoing messages",
	"TestCorrelationJoinReply":    "WS-BPEL 2.0 9.2: once initiated, a correlation set must match every message that carries it, join included (here the reply); orchd raises bpel:correlationViolation, ODE did not check outgoing messages",
	"TestCorrelationMultiComplex": "WS-BPEL 2.0 SA00021 (7.3) and 9.2: sets testCorr4 and testCorr5 have no propertyAlias for the probe message, so their values cannot be computed; refused at deploy (ODE ignored those correlations)",
	"TestInsertMissingData":       "same values; ODE's serializer also copied the source's unused in-scope namespace declarations, which the expected text matches byte for byte (XML-equivalent answers); orchd declares what the copied content uses",
	"TestSubTreeAssign":           "same values; ODE's serializer also copied the source's unused in-scope namespace declarations, which the expected text matches byte for byte (XML-equivalent answers); orchd declares what the copied content uses",
	"TestXPathNamespace1":         "same values; ODE's serializer also copied the source's unused in-scope namespace declarations, which the expected text matches byte for byte (XML-equivalent answers); orchd declares what the copied content uses",
}

// folderRules applies the MANIFEST's folder-level exceptions.
func folderRules(b *Bundle) {
	folder, _, _ := strings.Cut(b.Dir, "/")
	refusal := func(why string) {
		b.Cases = append(b.Cases, &Case{ID: b.Dir + "/deploy.xml#refused", Bundle: b.Dir, Props: "deploy.xml", ExpectRefusal: true, Status: why, Runnable: "yes"})
	}
	switch {
	case folder == "NegativeTargetNSTest1":
		refusal("deploy-must-fail")
	case folder == "TestExtensionActivityMustUnderstand":
		// ODE's result depends on whether the test extension bundle is
		// installed (tests.tsv: conditional). The harness registers it
		// (odemock.TestExtension), so the case runs; and without it the
		// mustUnderstand extension must make the deploy fail.
		for _, c := range b.Cases {
			if c.Runnable == "conditional" {
				c.Skip = ""
			}
		}
		refusal("deploy must fail without the test extension (mustUnderstand)")
		b.Cases[len(b.Cases)-1].WithoutExtensions = true
	case slices.ContainsFunc(b.Cases, func(c *Case) bool { return c.Status == "ignored" || c.Status == "disabled" }):
		// Deployed only to say, on the skipped cases' lines, what orchd
		// makes of the bundle ODE set aside.
		b.wantRefusalNote = true
	case strings.HasPrefix(folder, "ExtVar"):
		b.wantRefusalNote = true
		for _, c := range b.Cases {
			if c.Skip == "" {
				c.Skip = "not run: needs ODE external variables (JDBC datasource testds)"
			}
		}
	case folder == "TestVersionedRedeploy":
		// ODE's VersionedRedeployTest, in Java: the harness does what it
		// did (runVersioned).
		b.Versioned = true
		for _, c := range b.Cases {
			c.Skip = ""
		}
	case folder == "TestWait1":
		for _, c := range b.Cases {
			if c.Props == "test.properties" && c.Skip == "" {
				c.Skip = "not run: unused by ODE (bogus regex); the java:testWaitFor case replaces it"
			}
		}
	}
}
