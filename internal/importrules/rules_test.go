package importrules

import (
	"bufio"
	"bytes"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/orchd/orchd/"

// allowed is the rule: each package of the module, bottom stages first,
// and the orchd packages it may import (nothing else of orchd). Standard
// library and third-party imports are not ruled here.
//
// The engine's stages run one way: xmldoc (documents, positions, errors) <-
// ast (the BPEL syntax tree) <- check (static analysis), xmldoc <- wsdl <-
// deploy, and xmldoc <- expr (expressions over the variable tree); compile
// (bundle -> plan) and interp (a plan's instances) sit on them,
// and the engine (process) on interp. soap, persist and
// exchange know no BPEL; nothing imports cmd.
var allowed = map[string][]string{
	// Leaves: no orchd imports at all.
	"internal/bundlefs":     nil, // a bundle's files, confined to its folder
	"internal/bundlezip":    nil,
	"internal/buildinfo":    nil, // which orchd this is (version, revision, Go)
	"internal/etcdtest":     nil,
	"internal/events":       nil,
	"internal/exchange":     nil,
	"internal/loadgen":      nil,
	"internal/odecorpus":    nil,
	"internal/partnerallow": nil,
	"internal/persist":      nil,
	"internal/redact":       nil, // addresses without their credentials
	"internal/reference":    nil,
	"internal/suggest":      nil, // "did you mean ...?" by edit distance
	"internal/xmlparse":     nil,
	"internal/wssec":        nil,

	// The documents of a bundle and the languages inside a process.
	"internal/process/xmldoc": {"internal/xmlparse"},
	// The BPEL syntax tree: built from a positioned document only.
	"internal/process/ast":        {"internal/process/xmldoc"},
	"internal/process/epr":        {"internal/process/xmldoc", "internal/redact", "internal/xmlparse"},
	"internal/process/outboxmsg":  {"internal/exchange", "internal/persist", "internal/process/epr", "internal/xmlparse"},
	"internal/process/insertpath": {"internal/exchange", "internal/process/expr", "internal/process/plan"},
	"internal/xpath1":             nil,
	"internal/xsd":                {"internal/process/xmldoc"},
	"internal/xpath2":             {"internal/suggest", "internal/xsd"},
	"internal/xslt":               {"internal/process/xmldoc", "internal/xmlparse", "internal/xpath1", "internal/xpath2"},
	"internal/process/expr":       {"internal/exchange", "internal/process/xmldoc", "internal/suggest", "internal/xmlparse", "internal/xpath1", "internal/xpath2", "internal/xslt"},
	"internal/process/plan":       {"internal/events", "internal/exchange", "internal/partnerallow", "internal/process/xmldoc", "internal/process/deploy", "internal/process/expr", "internal/process/wsdl", "internal/xsd"},
	"internal/process/wsdl":       {"internal/bundlefs", "internal/exchange", "internal/process/xmldoc", "internal/xsd"},
	"internal/process/deploy":     {"internal/bundlefs", "internal/events", "internal/exchange", "internal/partnerallow", "internal/process/xmldoc", "internal/process/wsdl", "internal/suggest", "internal/wssec", "internal/xsd"},
	// The byte budget of an instance's variables: etree only.
	"internal/process/membudget": nil,
	// What an instance's migration to another version needs: plans only.
	"internal/process/migrate": {"internal/process/expr", "internal/process/plan"},
	// The HTTP client of REST extension activities: no BPEL.
	"internal/process/restcall": {"internal/exchange", "internal/partnerallow", "internal/redact"},
	"internal/process/check":    {"internal/exchange", "internal/process/ast", "internal/process/xmldoc", "internal/process/deploy", "internal/process/wsdl"},

	// A partner's answer against its message's schemas (for the
	// interpreter).
	"internal/process/replycheck": {"internal/exchange", "internal/process/plan", "internal/xsd"},

	// The compiler: bundle -> plan, lowering the syntax tree; never the
	// runtime.
	"internal/process/compile": {"internal/bundlefs", "internal/exchange", "internal/process/ast", "internal/process/check", "internal/process/deploy", "internal/process/expr", "internal/process/plan", "internal/process/wsdl", "internal/process/xmldoc", "internal/redact", "internal/wssec", "internal/xmlparse", "internal/xpath2", "internal/xsd", "internal/xslt"},

	// Correlation values and variable names as data, for the
	// interpreter and the engine.
	"internal/process/corrval": {"internal/exchange", "internal/process/expr", "internal/process/plan"},

	// The interpreter: a deployed version (Version) and its instances'
	// runs, with the engine behind its Host interface. Never the engine,
	// the compiler, the front door (soap, server), a store implementation
	// other than persist's types, or cmd.
	"internal/process/interp": {"internal/events", "internal/exchange", "internal/mgmt", "internal/partnerallow", "internal/persist", "internal/process/actstats", "internal/process/corrval", "internal/process/epr", "internal/process/insertpath", "internal/process/outboxmsg",
		"internal/process/xmldoc", "internal/process/deploy", "internal/process/expr", "internal/process/membudget", "internal/process/plan",
		"internal/process/migrate", "internal/process/replycheck", "internal/process/restcall", "internal/redact", "internal/xmlparse", "internal/xpath1", "internal/xpath2", "internal/xsd"},

	// The engine: deploys versions, routes exchanges to their instances,
	// stores, recovers and manages them. Never the compiler, the front
	// door, a store implementation, or cmd; nothing of a process's
	// documents below the plan.
	"internal/process/actstats": nil,
	"internal/process":          {"internal/events", "internal/exchange", "internal/mgmt", "internal/partnerallow", "internal/persist", "internal/process/corrval", "internal/process/interp", "internal/process/membudget", "internal/process/migrate", "internal/process/outboxmsg", "internal/process/plan", "internal/process/restcall", "internal/xmlparse"},

	// Transport and storage: no BPEL.
	"internal/mockpartner": {"internal/exchange", "internal/xmlparse"},
	"internal/soap":        {"internal/exchange", "internal/partnerallow", "internal/publicurl", "internal/redact", "internal/xmlparse"},
	"internal/publicurl":   nil,
	"internal/endpoints":   {"internal/exchange", "internal/redact"},
	"internal/etcdstore":   {"internal/persist"},
	"internal/cluster":     {"internal/exchange", "internal/soap"},

	// Operating orchd. mgmt's shapes use events.Event for an instance's
	// timeline: one type for an event everywhere it is shown.
	"internal/mgmt":    {"internal/events"},
	"internal/admin":   {"internal/buildinfo", "internal/events", "internal/mgmt"},
	"internal/console": {"internal/mgmt"},
	// The process diagram: plan in, SVG out; never the runtime.
	"internal/diagram": {"internal/mgmt", "internal/process/expr", "internal/process/plan"},
	"internal/server":  {"internal/persist", "internal/process", "internal/soap"},

	// What orchd serve wires, each a concern of its own: the store it
	// opens, hot deploy, the cluster glue (never the front door itself),
	// the management backend and the cluster view over it, the API's one
	// client and its command line (never the server side), the API's
	// listener.
	"internal/instancestore": {"internal/etcdstore", "internal/persist", "internal/process"},
	// The task engine (WS-HumanTask): its own package beside the
	// process engine, never inside it; it reaches processes through the
	// exchange ports only.
	"internal/humantask": {"internal/events", "internal/exchange", "internal/process/xmldoc", "internal/xmlparse", "internal/xpath1", "internal/xsd"},
	// The console's task inbox: server-rendered pages over the task
	// engine, people signing in with their own credentials.
	"internal/inbox": {"internal/exchange", "internal/humantask", "internal/process/wsdl", "internal/process/xmldoc", "internal/taskform", "internal/xmlparse", "internal/xsd"},
	// The WS-HumanTask client API over SOAP (WSO2 BPS's
	// HumanTaskClientAPIAdmin) over the task engine.
	"internal/htclient": {"internal/humantask", "internal/publicurl", "internal/xmlparse"},
	// The task form: an output schema as form fields and back.
	"internal/taskform": {"internal/xsd"},
	// BPEL4People's people activity: a compiler extension (compile's
	// extension API and plan) over the task engine; never the process
	// engine or interpreter, which it reaches through exchange's
	// Dispatcher only.
	"internal/b4p":         {"internal/exchange", "internal/humantask", "internal/process/compile", "internal/process/plan", "internal/xmlparse"},
	"internal/hotdeploy":   {"internal/bundlezip", "internal/exchange", "internal/mgmt", "internal/process", "internal/process/compile", "internal/process/interp"},
	"internal/clusternode": {"internal/cluster", "internal/etcdstore", "internal/exchange", "internal/process"},
	"internal/mgmtclient":  {"internal/mgmt"},
	"internal/health":      {"internal/cluster", "internal/instancestore", "internal/process", "internal/process/interp"},
	"internal/tracing":     nil,
	"internal/clusterview": {"internal/admin", "internal/cluster", "internal/mgmt", "internal/mgmtclient"},
	"internal/mgmtbackend": {"internal/clusterview", "internal/diagram", "internal/events", "internal/hotdeploy", "internal/humantask", "internal/mgmt", "internal/process"},
	"internal/adminserver": {"internal/admin", "internal/buildinfo", "internal/mgmt", "internal/server"},
	"internal/ctl":         {"internal/admin", "internal/bundlezip", "internal/mgmt", "internal/mgmtclient"},

	// Test support.
	"internal/etcdtest/etcdmember": {"internal/etcdtest"},
	"internal/odemock":             {"internal/exchange", "internal/process/compile", "internal/process/plan", "internal/soap"},
	"internal/conformance":         {"internal/endpoints", "internal/exchange", "internal/mgmt", "internal/odecorpus", "internal/odemock", "internal/process", "internal/process/compile", "internal/process/interp", "internal/server", "internal/soap"},
	"internal/importrules":         nil,
	"internal/echotest":            nil,
	"internal/process/exttest":     {"internal/process/compile", "internal/process/expr", "internal/process/plan"},
	"internal/mgmttest": {"internal/admin", "internal/echotest", "internal/events", "internal/hotdeploy",
		"internal/mgmtbackend", "internal/process", "internal/soap"},

	// The binaries wire everything.
	"cmd/poref": {"internal/reference"},
	"cmd/orchd": {"internal/admin", "internal/adminserver", "internal/buildinfo", "internal/bundlefs", "internal/cluster", "internal/clusternode", "internal/clusterview",
		"internal/b4p", "internal/console", "internal/ctl", "internal/htclient", "internal/inbox", "internal/endpoints", "internal/etcdstore", "internal/events", "internal/exchange",
		"internal/health", "internal/hotdeploy", "internal/humantask", "internal/instancestore", "internal/loadgen", "internal/mgmt", "internal/mgmtbackend",
		"internal/mockpartner", "internal/persist", "internal/process", "internal/process/compile", "internal/process/expr", "internal/process/interp", "internal/process/membudget", "internal/publicurl", "internal/server", "internal/soap",
		"internal/tracing", "internal/wssec", "internal/xmlparse", "internal/xpath2"},
}

// forbidden are third-party packages a package must not import although
// its orchd imports bring them in: static analysis reads the BPEL syntax
// tree (internal/process/ast), never the raw XML.
var forbidden = map[string][]string{
	"internal/process/check": {"github.com/beevik/etree"},
}

// TestImportRules fails for every import of an orchd package that its
// row does not allow (non-test files), for every forbidden import, for
// every package without a row,
// and for every row whose package is gone.
func TestImportRules(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		pkg := strings.TrimPrefix(f[0], module)
		seen[pkg] = true
		rule, ok := allowed[pkg]
		if !ok {
			t.Errorf("%s has no row in the import rules (rules_test.go): add one with the orchd packages it may import", pkg)
			continue
		}
		for _, imp := range f[1:] {
			if slices.Contains(forbidden[pkg], imp) {
				t.Errorf("%s imports %s, which it must not", pkg, imp)
			}
			if !strings.HasPrefix(imp, module) {
				continue
			}
			imp = strings.TrimPrefix(imp, module)
			if !slices.Contains(rule, imp) {
				t.Errorf("%s imports %s, which its rule does not allow (allowed: %s)", pkg, imp, strings.Join(rule, ", "))
			}
		}
	}
	var gone []string
	for pkg := range allowed {
		if !seen[pkg] {
			gone = append(gone, pkg)
		}
	}
	sort.Strings(gone)
	for _, pkg := range gone {
		t.Errorf("the import rules have a row for %s, which is not a package of the module any more", pkg)
	}
}
