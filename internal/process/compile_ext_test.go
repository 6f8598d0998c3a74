package process

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchd/orchd/internal/process/interp"
	"github.com/orchd/orchd/internal/process/xmldoc"
)

// editedBundle copies the fixture bundle src into a temporary folder and
// applies edits there: file name -> old/new pairs (each old must occur).
func editedBundle(t testing.TB, src string, edits map[string][]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), src)
	copyDir(t, filepath.Join(bundlesDir, src), dir)
	for file, pairs := range edits {
		p := filepath.Join(dir, file)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		for i := 0; i+1 < len(pairs); i += 2 {
			if !strings.Contains(s, pairs[i]) {
				t.Fatalf("%s does not contain %q", file, pairs[i])
			}
			s = strings.Replace(s, pairs[i], pairs[i+1], 1)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const (
	bpelProcessTag = `<process name="Test" targetNamespace="urn:test:process"`
	bpelVariables  = `<variable name="out" messageType="tns:resp"/>`
	bpelFromPath   = `<from>$in.payload/tns:id</from>`
	bom            = "\xEF\xBB\xBF"
	xpath2Attrs    = ` expressionLanguage="urn:oasis:names:tc:wsbpel:2.0:sublang:xpath2.0"` +
		` queryLanguage="urn:oasis:names:tc:wsbpel:2.0:sublang:xpath2.0"`
)

// What ODE accepted in the conformance corpus, and what orchd must refuse
// clearly rather than run wrongly. Each case edits good-minimal.
func TestLoadODECompat(t *testing.T) {
	tests := []struct {
		name  string
		edits map[string][]string
		// errs empty: the bundle loads; else every substring must appear.
		errs         []string
		notSupported bool
		// warns: the bundle loads with a warning holding every substring.
		warns []string
	}{
		{name: "UTF-8 BOM in every file", edits: map[string][]string{
			"Test.bpel":  {`<?xml`, bom + `<?xml`},
			"deploy.xml": {`<?xml`, bom + `<?xml`},
			"test.wsdl":  {`<?xml`, bom + `<?xml`},
		}},
		{name: "stray quote after an XPath 1.0 expression", edits: map[string][]string{
			"Test.bpel": {bpelFromPath, `<from>concat($in.payload/tns:id, ' World')"</from>`},
		}},
		{name: "XPath 2.0 declared on the process", edits: map[string][]string{
			"Test.bpel": {bpelProcessTag, bpelProcessTag + xpath2Attrs},
		}},
		{name: "XPath 2.0 declared on the expression, 2.0 function antchfx knows", edits: map[string][]string{
			"Test.bpel": {bpelFromPath, `<from expressionLanguage="urn:oasis:names:tc:wsbpel:2.0:sublang:xpath2.0">lower-case($in.payload/tns:id)</from>`},
		}},
		{name: "XPath 2.0 function XPath 1.0 lacks", edits: map[string][]string{
			"Test.bpel": {bpelProcessTag, bpelProcessTag + xpath2Attrs,
				bpelFromPath, `<from>fn:deep-equal($in.payload, $in.payload)</from>`},
		}},
		{name: "XPath 2.0 syntax error names the W3C code", edits: map[string][]string{
			"Test.bpel": {bpelProcessTag, bpelProcessTag + xpath2Attrs,
				bpelFromPath, `<from>if ($in.payload) then 1</from>`},
		}, errs: []string{"Test.bpel:26", "<from>", `invalid XPath 2.0 expression "if ($in.payload) then 1"`, "XPST0003"}},
		{name: "XPath 2.0 unknown function", edits: map[string][]string{
			"Test.bpel": {bpelProcessTag, bpelProcessTag + xpath2Attrs,
				bpelFromPath, `<from>fn:no-such($in.payload)</from>`},
		}, errs: []string{"Test.bpel:26", "XPST0017"}},
		{name: "XPath 2.0 undeclared variable", edits: map[string][]string{
			"Test.bpel": {bpelProcessTag, bpelProcessTag + xpath2Attrs,
				bpelFromPath, `<from>$nosuch + 1</from>`},
		}, errs: []string{"Test.bpel:26", "undeclared variable $nosuch"}},
		{name: "XPath 2.0 query syntax error", edits: map[string][]string{
			"Test.bpel": {bpelProcessTag, bpelProcessTag + xpath2Attrs,
				bpelFromPath, `<from variable="in" part="payload"><query>tns:id[</query></from>`},
		}, errs: []string{"Test.bpel:26", "invalid XPath 2.0 query", "XPST0003"}},
		{name: "XPath 2.0 doXslTransform of a stylesheet not in the bundle", edits: map[string][]string{
			"Test.bpel": {bpelProcessTag, bpelProcessTag + xpath2Attrs,
				bpelFromPath, `<from>bpel:doXslTransform('x.xsl', $in.payload)</from>`},
		}, warns: []string{"Test.bpel:26", `stylesheet "x.xsl" is not in the bundle`, "bpel:xsltStylesheetNotFound"}},
		{name: "XPath 1.0 doXslTransform of a stylesheet not in the bundle", edits: map[string][]string{
			"Test.bpel": {bpelFromPath, `<from>bpel:doXslTransform('x.xsl', $in.payload)</from>`},
		}, warns: []string{"Test.bpel:26", `stylesheet "x.xsl" is not in the bundle`, "bpel:xsltStylesheetNotFound"}},
		{name: "doXslTransform needs a literal stylesheet", edits: map[string][]string{
			"Test.bpel": {bpelFromPath, `<from>bpel:doXslTransform(concat('x', '.xsl'), $in.payload)</from>`},
		}, errs: []string{"Test.bpel:26", "SA00039: the first argument of bpel:doXslTransform must be the stylesheet's URI as a string literal"}},
		{name: "XPath 2.0 expression: a stray quote is still an error", edits: map[string][]string{
			"Test.bpel": {bpelProcessTag, bpelProcessTag + xpath2Attrs,
				bpelFromPath, `<from>concat($in.payload/tns:id, ' World')"</from>`},
		}, errs: []string{"Test.bpel:26", "unterminated string literal"}},
		{name: "unknown expression language", edits: map[string][]string{
			"Test.bpel": {bpelProcessTag, bpelProcessTag + ` expressionLanguage="urn:example:javascript"`},
		}, errs: []string{"Test.bpel:2", `expressionLanguage "urn:example:javascript"`}, notSupported: true},
		{name: "XQuery", edits: map[string][]string{
			"Test.bpel": {bpelProcessTag, bpelProcessTag + ` expressionLanguage="urn:oasis:names:tc:wsbpel:2.0:sublang:xquery1.0"`,
				bpelFromPath, `<from>for $i in $in.payload/tns:id return <![CDATA[<tns:resp>{string($i)}</tns:resp>]]></from>`},
		}},
		{name: "XQuery by bpel-g's URN, on the process", edits: map[string][]string{
			"Test.bpel": {bpelProcessTag, bpelProcessTag + ` expressionLanguage="urn:active-endpoints:expression-language:xquery1.0"`,
				bpelFromPath, `<from>for $i in $in.payload/tns:id return <![CDATA[<tns:resp>{string($i)}</tns:resp>]]></from>`},
		}},
		{name: "XQuery by bpel-g's URN, on the expression", edits: map[string][]string{
			"Test.bpel": {bpelFromPath, `<from expressionLanguage="urn:active-endpoints:expression-language:xquery1.0">&lt;tns:resp&gt;{string($in.payload/tns:id)}&lt;/tns:resp&gt;</from>`},
		}},
		{name: "receive into an element variable of another element than the message's one part", edits: map[string][]string{
			"Test.bpel": {`<variable name="in" messageType="tns:req"/>`, `<variable name="in" element="tns:resp"/>`},
		}, errs: []string{"Test.bpel:17", `SA00058: variable "in" does not fit message req of operation "run"`}},
		{name: "invalid XQuery", edits: map[string][]string{
			"Test.bpel": {bpelFromPath, `<from expressionLanguage="urn:oasis:names:tc:wsbpel:2.0:sublang:xquery1.0">&lt;a&gt;{1}&lt;/b&gt;</from>`},
		}, errs: []string{"Test.bpel:26", "<from>", `invalid XQuery 1.0 expression "<a>{1}</b>"`, "end tag </b> does not match start tag <a>"}},
		{name: "ODE special variable", edits: map[string][]string{
			"Test.bpel": {bpelProcessTag, bpelProcessTag + xpath2Attrs + ` xmlns:ode="http://www.apache.org/ode/type/extension"`,
				bpelFromPath, `<from>$ode:pid</from>`},
		}},
		{name: "ODE special variable in XPath 1.0", edits: map[string][]string{
			"Test.bpel": {bpelProcessTag, bpelProcessTag + ` xmlns:ode="http://www.apache.org/ode/type/extension"`,
				bpelFromPath, `<from expressionLanguage="urn:oasis:names:tc:wsbpel:2.0:sublang:xpath1.0">$ode:pid</from>`},
		}, errs: []string{"Test.bpel:26", "not supported yet: ODE variable $ode:pid"}, notSupported: true},
		{name: "unknown ODE variable", edits: map[string][]string{
			"Test.bpel": {bpelProcessTag, bpelProcessTag + xpath2Attrs + ` xmlns:ode="http://www.apache.org/ode/type/extension"`,
				bpelFromPath, `<from>$ode:nosuch</from>`},
		}, errs: []string{"Test.bpel:26", "undeclared variable $nosuch"}},
		{name: "external variable", edits: map[string][]string{
			"Test.bpel": {bpelVariables, bpelVariables + `
    <variable name="ext" element="tns:resp" xmlns:xvar="http://ode.apache.org/externalVariables" xvar:id="evar1"/>`},
		}, errs: []string{"Test.bpel:15", "not supported yet: external variables (xvar:id on variable ext)"}, notSupported: true},
		{name: "extension mustUnderstand=no is accepted", edits: map[string][]string{
			"Test.bpel": {`  <partnerLinks>`, `  <extensions><extension namespace="urn:x" mustUnderstand="no"/></extensions>
  <partnerLinks>`},
		}},
		{name: "unknown extension mustUnderstand=yes is refused", edits: map[string][]string{
			"Test.bpel": {`  <partnerLinks>`, `  <extensions>
    <extension namespace="urn:x" mustUnderstand="yes"/>
  </extensions>
  <partnerLinks>`},
		}, errs: []string{"Test.bpel:9", `extension urn:x declared mustUnderstand="yes"`}, notSupported: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			procs, err := loadBundle(editedBundle(t, "good-minimal", tc.edits))
			if len(tc.errs) == 0 {
				if err != nil {
					t.Fatalf("LoadBundle: %v", err)
				}
				if len(procs) != 1 {
					t.Fatalf("%d processes, want 1", len(procs))
				}
				w := strings.Join(procs[0].Warnings, "\n")
				if len(tc.warns) == 0 && w != "" {
					t.Errorf("unexpected warnings:\n%s", w)
				}
				for _, want := range tc.warns {
					if !strings.Contains(w, want) {
						t.Errorf("warnings do not contain %q:\n%s", want, w)
					}
				}
				return
			}
			if err == nil {
				t.Fatalf("LoadBundle succeeded, want an error with %q", tc.errs)
			}
			for _, want := range tc.errs {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error does not contain %q:\n%v", want, err)
				}
			}
			if got := errors.Is(err, xmldoc.ErrNotSupported); got != tc.notSupported {
				t.Errorf("errors.Is(err, ErrNotSupported) = %v, want %v:\n%v", got, tc.notSupported, err)
			}
		})
	}
}

// An xsd:boolean variable is its typed value in conditions, in the direct
// evaluator and in antchfx alike; a stray quote after an XPath 1.0
// expression is ignored as Jaxen ignored it (rt-xpath-compat).
func TestTypedBooleanAndStrayQuote(t *testing.T) {
	tests := []struct{ text, want string }{
		{"true", "TT A-1"},
		{"1", "TT A-1"},
		{" true ", "TT A-1"},
		{"false", "FF A-1"},
		{"0", "FF A-1"},
		{"", "FF A-1"},
	}
	e, procs := deployBundle(t, "rt-xpath-compat", nil)
	for _, tc := range tests {
		t.Run(tc.text, func(t *testing.T) {
			r := dispatch(t, e, procs[0], testReq("A-1", "3", tc.text))
			if r.err != nil || r.fault != nil {
				t.Fatalf("err %v, fault %v", r.err, r.fault)
			}
			if got, want := canon(r.out.Parts["payload"]), respCanon("a", tc.want); got != want {
				t.Errorf("got %s, want %s", got, want)
			}
		})
	}
}

// extraWSDL defines, in a WSDL no BPEL imports, a service for the
// fixtures' TestPT portType.
const extraWSDL = `<?xml version="1.0" encoding="UTF-8"?>
<wsdl:definitions targetNamespace="urn:extra"
    xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/"
    xmlns:soap="http://schemas.xmlsoap.org/wsdl/soap/"
    xmlns:t="urn:test" xmlns:tns="urn:extra">
  <wsdl:import namespace="urn:test" location="../test.wsdl"/>
  <wsdl:service name="ExtraService">
    <wsdl:port name="ExtraPort" binding="t:TestBinding">
      <soap:address location="http://localhost:8080/extra/path"/>
    </wsdl:port>
  </wsdl:service>
</wsdl:definitions>
`

// Services named in deploy.xml are looked up in every WSDL of the bundle,
// and one that no WSDL describes (or describes without a binding) gets a
// default document/literal SOAP 1.1 endpoint for the role's portType, as
// ODE deployed such bundles.
func TestServiceResolution(t *testing.T) {
	const provide = `<service name="tns:TestService" port="TestPort"/>`
	const invoke = `<service name="tns:PartnerService" port="PartnerPort"/>`
	tests := []struct {
		name       string
		edits      map[string][]string
		extra      bool // write sub/extra.wsdl
		wantPath   string
		wantAddr   string // the provided endpoint's address
		wantPeer   string // the partner endpoint's address
		wantPeerOp string // an operation of the partner endpoint
	}{
		{name: "service in an unimported WSDL", extra: true, edits: map[string][]string{
			"deploy.xml": {provide, `<service xmlns:x="urn:extra" name="x:ExtraService" port="ExtraPort"/>`},
		}, wantPath: "/extra/path", wantAddr: "http://localhost:8080/extra/path", wantPeer: "http://partner.example/partner"},
		{name: "provided service in no WSDL", edits: map[string][]string{
			"deploy.xml": {provide, `<service name="tns:Nowhere" port="tns:NowherePort"/>`},
		}, wantPath: "/processes/Nowhere", wantPeer: "http://partner.example/partner"},
		{name: "invoked service in no WSDL", edits: map[string][]string{
			"deploy.xml": {invoke, `<service name="tns:Nowhere" port="NowherePort"/>`},
		}, wantPath: "/test", wantAddr: "http://localhost:8080/test", wantPeerOp: "notify"},
		{name: "port without a binding", edits: map[string][]string{
			"test.wsdl": {`<wsdl:port name="TestPort" binding="tns:TestBinding">`, `<wsdl:port name="TestPort" binding="tns:Missing">`},
		}, wantPath: "/test", wantAddr: "http://localhost:8080/test", wantPeer: "http://partner.example/partner"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := editedBundle(t, "good-minimal", tc.edits)
			if tc.extra {
				if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "sub", "extra.wsdl"), []byte(extraWSDL), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			procs, err := loadBundle(dir)
			if err != nil {
				t.Fatalf("LoadBundle: %v", err)
			}
			ep := procs[0].Endpoints[0]
			if ep.Path != tc.wantPath || ep.Address != tc.wantAddr {
				t.Errorf("provided endpoint at path %q address %q, want %q %q", ep.Path, ep.Address, tc.wantPath, tc.wantAddr)
			}
			if op := opNamed(ep, "run"); op == nil || op.Input == nil || op.Input.Name.Local != "req" || op.Style != 0 {
				t.Errorf("provided endpoint: operation run %+v, want document/literal with input req", op)
			}
			peers := procs[0].PartnerEndpoints()
			if len(peers) != 1 || peers[0].Address != tc.wantPeer {
				t.Fatalf("partner endpoints %v, want one at %q", peers, tc.wantPeer)
			}
			if tc.wantPeerOp != "" && opNamed(peers[0], tc.wantPeerOp) == nil {
				t.Errorf("partner endpoint has no operation %s", tc.wantPeerOp)
			}
		})
	}
}

// Invoking a partner whose service no WSDL describes (and no process here
// provides) fails naming the partner link (ext:activityFailure, which
// nothing catches here, answered as the fault); the bundle still deploys.
func TestInvokeUnboundPartner(t *testing.T) {
	dir := editedBundle(t, "rt-invoke", map[string][]string{
		"deploy.xml": {`<service name="tns:PartnerService" port="PartnerPort"/>`, `<service name="tns:Nowhere" port="NowherePort"/>`},
	})
	procs, err := loadBundle(dir)
	if err != nil {
		t.Fatalf("LoadBundle: %v", err)
	}
	e := NewEngine(Options{})
	if err := e.Deploy(procs...); err != nil {
		t.Fatalf("Deploy: %v", err)
	}
	r := dispatch(t, e, procs[0], testReq("A-1", "3", ""))
	if r.fault == nil || r.fault.Name != interp.ActivityFailure {
		t.Fatalf("dispatch: %+v, want the fault %s", r, interp.ActivityFailure)
	}
	for _, want := range []string{"partner.call", "{urn:test}Nowhere", "not bound"} {
		if !strings.Contains(r.fault.Reason, want) {
			t.Errorf("fault reason does not contain %q: %v", want, r.fault.Reason)
		}
	}
}
