package process

import (
	"strings"
	"testing"

	"github.com/orchd/orchd/internal/process/compile"
	"github.com/orchd/orchd/internal/process/exttest"
)

// nsTestExt is the namespace the tests register the test extension (exttest) under.
const nsTestExt = "urn:test:ext"

// testExtensions registers the test extension (exttest) under nsTestExt.
func testExtensions() compile.Extensions {
	return exttest.Extension{NS: nsTestExt, RespNS: nsTest}.Extensions()
}

// extBundle is good-minimal declaring nsTestExt with mustUnderstand
// must, a string variable s and an element variable r, and body (line 24)
// in place of its second assign.
func extBundle(t *testing.T, must, body string) string {
	t.Helper()
	return editedBundle(t, "good-minimal", map[string][]string{"Test.bpel": {
		bpelProcessTag, bpelProcessTag + ` xmlns:x="` + nsTestExt + `"`,
		`<partnerLinks>`, `<extensions><extension namespace="` + nsTestExt + `" mustUnderstand="` + must + `"/></extensions><partnerLinks>`,
		bpelVariables, bpelVariables + `<variable name="s" type="xsd:string"/><variable name="r" element="tns:resp"/>`,
		copyIDToOut, body,
	}})
}

func TestExtensionCompile(t *testing.T) {
	act := func(el string) string { return "<extensionActivity>" + el + "</extensionActivity>" }
	assignOp := func(el string) string {
		return "<assign><extensionAssignOperation>" + el + "</extensionAssignOperation></assign>"
	}
	onlyActivities := compile.Extensions{nsTestExt: compile.Extension{Activities: exttest.Extension{NS: nsTestExt, RespNS: nsTest}}}
	tests := []struct {
		name         string
		exts         compile.Extensions
		must, body   string
		err          string // "" loads
		notSupported bool
	}{
		{name: "registered mustUnderstand activity loads", exts: testExtensions(), must: "yes", body: act(`<x:upper from="s" to="s"/>`)},
		{name: "registered assign operation loads", exts: testExtensions(), must: "yes", body: assignOp(`<x:set var="s">a</x:set>`)},
		{name: "unregistered mustUnderstand is refused", must: "yes", body: act(`<x:upper from="s" to="s"/>`), notSupported: true,
			err: `Test.bpel:8: <extension>: not supported yet: SA00009: extension urn:test:ext declared mustUnderstand="yes"`},
		{name: "unregistered optional activity acts as empty", must: "no", body: act(`<x:upper from="s" to="s"/>`)},
		{name: "unregistered assign operation is refused", must: "no", body: assignOp(`<x:set var="s">a</x:set>`), notSupported: true,
			err: "Test.bpel:24: <extensionAssignOperation>: not supported yet: <extensionAssignOperation> of namespace urn:test:ext (no extension registered for it)"},
		{name: "unknown variable", exts: testExtensions(), must: "yes", body: act(`<x:upper from="nope" to="s"/>`),
			err: `Test.bpel:24: <upper>: from: unknown variable "nope"`},
		{name: "unknown variable in an assign operation", exts: testExtensions(), must: "yes", body: assignOp(`<x:set var="nope"/>`),
			err: `Test.bpel:24: <set>: var: unknown variable "nope"`},
		{name: "a child element's own line", exts: testExtensions(), must: "yes", body: act("<x:check>\n<x:arg var=\"s\"/>\n<x:arg var=\"zz\"/></x:check>"),
			err: `Test.bpel:26: <arg>: unknown variable "zz"`},
		{name: "missing attribute", exts: testExtensions(), must: "yes", body: act(`<x:upper to="s"/>`),
			err: "Test.bpel:24: <upper>: <upper> needs a from attribute"},
		{name: "unknown element of a mustUnderstand extension", exts: testExtensions(), must: "yes", body: act(`<x:frob/>`),
			err: "Test.bpel:24: <frob>: unknown extension element: <frob>"},
		{name: "unknown element of an optional extension acts as empty", exts: testExtensions(), must: "no", body: act(`<x:frob/>`) + assignOp(`<x:frob/>`)},
		{name: "an extension without assign operations", exts: onlyActivities, must: "yes", body: assignOp(`<x:set var="s"/>`),
			err: "Test.bpel:24: <set>: extension urn:test:ext has no assign operations"},
		{name: "an empty extensionAssignOperation", exts: testExtensions(), must: "yes", body: `<assign><extensionAssignOperation/></assign>`,
			err: "Test.bpel:24: <extensionAssignOperation>: <extensionAssignOperation> needs an extension element"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadBundleWith(extBundle(t, tc.must, tc.body), compile.LoadOptions{Extensions: tc.exts})
			checkLoadError(t, err, tc.err, tc.notSupported)
		})
	}
}

// A process that declares an extension mustUnderstand="yes" compiles only
// with the extension registered, and its plan then carries the
// extension's action: any engine runs it, none needs a registry of its
// own.
func TestExtensionCompiledIn(t *testing.T) {
	dir := extBundle(t, "yes", `<extensionActivity><x:upper from="s" to="s"/></extensionActivity>`)
	if _, err := loadBundle(dir); !compile.IsNotSupported(err) {
		t.Fatalf("compiled without the extension: %v, want the mustUnderstand refusal", err)
	}
	procs, err := loadBundleWith(dir, compile.LoadOptions{Extensions: testExtensions()})
	if err != nil {
		t.Fatal(err)
	}
	e := NewEngine(Options{})
	defer e.Close()
	if err := e.Deploy(procs...); err != nil {
		t.Fatal(err)
	}
}

// checkLoadError checks a load's error: none when want is "", else one
// containing want, marked not supported or not.
func checkLoadError(t *testing.T, err error, want string, notSupported bool) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("want no error, got %v", err)
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v\nwant one containing %q", err, want)
	}
	if compile.IsNotSupported(err) != notSupported {
		t.Errorf("IsNotSupported = %v, want %v", compile.IsNotSupported(err), notSupported)
	}
}

// answerA is the text of the tns:a of a completed exchange's answer.
func answerA(t *testing.T, r clientResult) string {
	t.Helper()
	if r.err != nil || r.fault != nil || r.out == nil {
		t.Fatalf("err=%v fault=%v out=%v", r.err, r.fault, r.out)
	}
	if a := r.out.Parts["payload"].FindElement("./a"); a != nil {
		return a.Text()
	}
	return ""
}

// In an <assign validate="yes">, the variables an assign operation
// resolved are validated, and put back when the assign faults.
func TestExtensionAssignValidated(t *testing.T) {
	body := `<assign><copy><from><literal><tns:resp><tns:a>before</tns:a></tns:resp></literal></from><to variable="r"/></copy></assign>
    <scope><faultHandlers><catch faultName="bpel:invalidVariables">
      <assign><copy><from>concat('caught ', $r/tns:a)</from><to>$out.payload/tns:a</to></copy></assign></catch></faultHandlers>
      <assign validate="yes"><extensionAssignOperation><x:upper from="in" to="r"/></extensionAssignOperation></assign>
    </scope>`
	dir := validatingBundle(t,
		bpelProcessTag, bpelProcessTag+` xmlns:x="`+nsTestExt+`"`,
		`<partnerLinks>`, `<extensions><extension namespace="`+nsTestExt+`" mustUnderstand="yes"/></extensions><partnerLinks>`,
		bpelVariables, bpelVariables+`<variable name="r" element="tns:resp"/>`,
		copyIDToOut, body)
	e := NewEngine(Options{})
	defer e.Close()
	procs, err := loadBundleWith(dir, compile.LoadOptions{Extensions: testExtensions()})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Deploy(procs...); err != nil {
		t.Fatal(err)
	}
	// upper writes <tns:resp>ID71HELLO</tns:resp>, which lacks tns:a.
	if got := answerA(t, dispatch(t, e, procs[0], testReq("id7", "1", "hello"))); got != "caught before" {
		t.Errorf("answer %q, want %q", got, "caught before")
	}
}
