package process

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/compile"
	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/plan"
)

// nsTestExt is the namespace of testExt, the extension the tests register.
const nsTestExt = "urn:test:ext"

// testExt is a small extension bundle:
//
//	<x:upper from="v" to="w"/>   w := upper-case(string value of v)
//	<x:set var="v">text</x:set>  v := text
//	<x:setmsg var="m" part="p"/> m's part p (default payload) := <tns:resp><tns:a>from a message
//	<x:fail local="n"/>          throws {urn:test:ext}n
//	<x:broken/>                  fails with a plain error
//	<x:check><x:arg var="v"/></x:check> reports an unknown v at <x:arg>'s line
//
// Every operation is both an activity and an assign operation.
type testExt struct{}

func (testExt) CompileActivity(el *etree.Element, c compile.ExtensionCompiler) (plan.ExtensionAction, error) {
	return compileTestExt(el, c)
}

func (testExt) CompileAssignOperation(el *etree.Element, c compile.ExtensionCompiler) (plan.ExtensionAction, error) {
	return compileTestExt(el, c)
}

func compileTestExt(el *etree.Element, c compile.ExtensionCompiler) (plan.ExtensionAction, error) {
	vr := func(attr string) (plan.ExtensionVariable, error) {
		name := el.SelectAttrValue(attr, "")
		if name == "" {
			return plan.ExtensionVariable{}, fmt.Errorf("<%s> needs a %s attribute", el.Tag, attr)
		}
		v, err := c.Variable(name)
		if err != nil {
			return plan.ExtensionVariable{}, fmt.Errorf("%s: %w", attr, err)
		}
		return v, nil
	}
	switch el.Tag {
	case "upper":
		from, err := vr("from")
		if err != nil {
			return nil, err
		}
		to, err := vr("to")
		if err != nil {
			return nil, err
		}
		return upperAction{from: from, to: to}, nil
	case "set":
		v, err := vr("var")
		if err != nil {
			return nil, err
		}
		return setAction{v: v, text: el.Text()}, nil
	case "setmsg":
		v, err := vr("var")
		if err != nil {
			return nil, err
		}
		return setMsgAction{v: v, part: el.SelectAttrValue("part", "payload")}, nil
	case "fail":
		return failAction(el.SelectAttrValue("local", "")), nil
	case "broken":
		return brokenAction{}, nil
	case "check":
		for _, a := range el.ChildElements() {
			if _, err := c.Variable(a.SelectAttrValue("var", "")); err != nil {
				c.ErrorAt(a, "%v", err)
			}
		}
		return brokenAction{}, nil
	}
	return nil, fmt.Errorf("%w: <%s>", compile.ErrUnknownExtensionElement, el.Tag)
}

type upperAction struct{ from, to plan.ExtensionVariable }

func (a upperAction) Run(_ context.Context, vars plan.ExtensionVariables) error {
	v := vars.Read(a.from)
	if v == nil {
		return &plan.ExtensionFault{Space: nsTestExt, Local: "empty", Reason: a.from.Name() + " is not initialized"}
	}
	out := etree.NewElement("v")
	out.SetText(strings.ToUpper(expr.StringValue(v)))
	return vars.Write(a.to, out)
}

type setAction struct {
	v    plan.ExtensionVariable
	text string
}

func (a setAction) Run(_ context.Context, vars plan.ExtensionVariables) error {
	e := etree.NewElement("v")
	e.SetText(a.text)
	return vars.Write(a.v, e)
}

type setMsgAction struct {
	v    plan.ExtensionVariable
	part string
}

func (a setMsgAction) Run(_ context.Context, vars plan.ExtensionVariables) error {
	m := etree.NewElement("message")
	r := m.CreateElement(a.part).CreateElement("t:resp")
	r.CreateAttr("xmlns:t", nsTest)
	r.CreateElement("t:a").SetText("from a message")
	return vars.Write(a.v, m)
}

type failAction string

func (a failAction) Run(context.Context, plan.ExtensionVariables) error {
	return &plan.ExtensionFault{Space: nsTestExt, Local: string(a), Reason: "asked to"}
}

type brokenAction struct{}

func (brokenAction) Run(context.Context, plan.ExtensionVariables) error {
	return errors.New("out of order")
}

// testExtensions registers testExt for both kinds.
func testExtensions() compile.Extensions {
	return compile.Extensions{nsTestExt: compile.Extension{Activities: testExt{}, AssignOperations: testExt{}}}
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
	onlyActivities := compile.Extensions{nsTestExt: compile.Extension{Activities: testExt{}}}
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

func TestExtensionRuntime(t *testing.T) {
	const toOut = `<assign><copy><from>$s</from><to>$out.payload/tns:a</to></copy></assign>`
	tests := []struct {
		name, body string
		want       string // out's a
		fault      string // the uncaught fault's name, {ns}local
		reason     string // ...and its message contains this
	}{
		{name: "an activity reads and writes variables",
			body: `<assign><copy><from>$in.payload/tns:text</from><to variable="s"/></copy></assign>` +
				`<extensionActivity><x:upper from="s" to="s"/></extensionActivity>` + toOut,
			want: "HELLO THERE"},
		{name: "an activity reads a message variable and writes an element variable",
			body: `<extensionActivity><x:upper from="in" to="r"/></extensionActivity>` +
				`<assign><copy><from>concat(local-name($r), ':', string($r))</from><to variable="s"/></copy></assign>` + toOut,
			// r (uninitialized) becomes its declared tns:resp holding the
			// string value of in's payload, upper-cased.
			want: "resp:ID71HELLO THERE"},
		{name: "an assign operation writes a message variable's parts",
			body: `<assign><extensionAssignOperation><x:setmsg var="out"/></extensionAssignOperation></assign>`,
			want: "from a message"},
		{name: "a message part the variable lacks is mismatchedAssignmentFailure",
			body:  `<assign><extensionAssignOperation><x:setmsg var="out" part="nope"/></extensionAssignOperation></assign>`,
			fault: "{http://docs.oasis-open.org/wsbpel/2.0/process/executable}mismatchedAssignmentFailure", reason: "extension wrote part nope"},
		{name: "an assign operation runs in order among the copies",
			body: `<assign><copy><from>$in.payload/tns:id</from><to variable="s"/></copy>` +
				`<extensionAssignOperation><x:upper from="s" to="s"/></extensionAssignOperation>` +
				`<copy><from>concat($s, '-', $s)</from><to>$out.payload/tns:a</to></copy></assign>`,
			want: "ID7-ID7"},
		{name: "an assign operation writes a literal",
			body: `<assign><extensionAssignOperation><x:set var="s">from the extension</x:set></extensionAssignOperation></assign>` + toOut,
			want: "from the extension"},
		{name: "an ExtensionFault is a BPEL fault",
			body:  `<extensionActivity><x:fail local="nope"/></extensionActivity>`,
			fault: "{urn:test:ext}nope", reason: "asked to"},
		{name: "an ExtensionFault can be caught",
			body: `<scope><faultHandlers><catch faultName="x:nope"><assign><copy><from>'caught'</from><to variable="s"/></copy></assign></catch></faultHandlers>` +
				`<extensionActivity><x:fail local="nope"/></extensionActivity></scope>` + toOut,
			want: "caught"},
		{name: "reading an uninitialized variable gives nil",
			body:  `<extensionActivity><x:upper from="s" to="s"/></extensionActivity>`,
			fault: "{urn:test:ext}empty", reason: "s is not initialized"},
		{name: "another error is subLanguageExecutionFault",
			body:  `<assign><extensionAssignOperation><x:broken/></extensionAssignOperation></assign>`,
			fault: "{http://docs.oasis-open.org/wsbpel/2.0/process/executable}subLanguageExecutionFault", reason: "extension: out of order"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := NewEngine(Options{})
			defer e.Close()
			procs, err := loadBundleWith(extBundle(t, "yes", tc.body), compile.LoadOptions{Extensions: testExtensions()})
			if err != nil {
				t.Fatal(err)
			}
			if err := e.Deploy(procs...); err != nil {
				t.Fatal(err)
			}
			r := dispatch(t, e, procs[0], testReq("id7", "1", "hello there"))
			if tc.fault != "" {
				if r.fault == nil {
					t.Fatalf("want fault %s; err=%v out=%v", tc.fault, r.err, r.out)
				}
				if got := "{" + r.fault.Name.Space + "}" + r.fault.Name.Local; got != tc.fault || !strings.Contains(r.fault.Error(), tc.reason) {
					t.Fatalf("fault %s %q, want %s containing %q", got, r.fault.Error(), tc.fault, tc.reason)
				}
				return
			}
			if got := answerA(t, r); got != tc.want {
				t.Errorf("answer %q, want %q", got, tc.want)
			}
		})
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
