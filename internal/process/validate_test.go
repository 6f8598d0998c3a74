package process

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchd/orchd/internal/process/compile"
	"github.com/orchd/orchd/internal/process/interp"
)

// reqXSD declares the test WSDL's elements, with facets to violate.
const reqXSD = `<?xml version="1.0" encoding="UTF-8"?>
<xsd:schema xmlns:xsd="http://www.w3.org/2001/XMLSchema" targetNamespace="urn:test" elementFormDefault="qualified">
  <xsd:element name="req"><xsd:complexType><xsd:sequence>
    <xsd:element name="id"><xsd:simpleType><xsd:restriction base="xsd:string"><xsd:pattern value="[A-Z]\d+"/></xsd:restriction></xsd:simpleType></xsd:element>
    <xsd:element name="n" type="xsd:positiveInteger"/>
    <xsd:element name="text" type="xsd:string"/>
  </xsd:sequence></xsd:complexType></xsd:element>
  <xsd:element name="resp"><xsd:complexType><xsd:sequence><xsd:element name="a" type="xsd:string"/></xsd:sequence></xsd:complexType></xsd:element>
  <xsd:element name="keyed"><xsd:complexType><xsd:sequence><xsd:element name="k" type="xsd:string"/></xsd:sequence></xsd:complexType>
    <xsd:key name="kk"><xsd:selector xpath="k"/><xsd:field xpath="."/></xsd:key></xsd:element>
</xsd:schema>
`

const xsdImport = `<import importType="http://www.w3.org/2001/XMLSchema" location="req.xsd" namespace="urn:test"/>`

// validatingBundle is good-minimal with req.xsd, imported, and edits.
func validatingBundle(t *testing.T, bpelEdits ...string) string {
	t.Helper()
	edits := append([]string{`<partnerLinks>`, xsdImport + "\n  <partnerLinks>"}, bpelEdits...)
	dir := editedBundle(t, "good-minimal", map[string][]string{"Test.bpel": edits})
	if err := os.WriteFile(filepath.Join(dir, "req.xsd"), []byte(reqXSD), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// deployValidating loads validatingBundle(edits) on a new engine.
func deployValidating(t *testing.T, edits ...string) (*Engine, *interp.Version) {
	t.Helper()
	procs, err := loadBundle(validatingBundle(t, edits...))
	if err != nil {
		t.Fatal(err)
	}
	e := NewEngine(Options{})
	if err := e.Deploy(procs...); err != nil {
		t.Fatal(err)
	}
	return e, procs[0]
}

const copyIDToOut = `<assign>
      <copy>
        <from>$in.payload/tns:id</from>
        <to>$out.payload/tns:a</to>
      </copy>
    </assign>`

func TestValidateCompile(t *testing.T) {
	tests := []struct {
		name         string
		noSchema     bool
		edits        []string
		errs         []string // empty: loads
		notSupported bool
	}{
		{name: "validate loads", edits: []string{copyIDToOut, `<validate variables="in out"/>`}},
		{name: "assign validate loads", edits: []string{`<assign>`, `<assign validate="yes">`}},
		{name: "element without schema", noSchema: true, edits: []string{copyIDToOut, `<validate variables="in"/>`},
			errs: []string{"Test.bpel:24: <validate>: variable in has no schema to validate against: part payload: element {urn:test}req is not declared in the bundle's schemas"}},
		{name: "assign target without schema", noSchema: true, edits: []string{`<assign>`, `<assign validate="yes">`},
			errs: []string{"Test.bpel:24: <assign>: variable out has no schema to validate against"}},
		{name: "undeclared variable", edits: []string{copyIDToOut, `<validate variables="in nope"/>`},
			errs: []string{"Test.bpel:25: <validate>: undeclared variable nope"}},
		{name: "no variables", edits: []string{copyIDToOut, `<validate/>`},
			errs: []string{"Test.bpel:25: <validate>: <validate> needs variables"}},
		{name: "unknown xsd type", edits: []string{`<variable name="in" messageType="tns:req"/>`, `<variable name="in" messageType="tns:req"/><variable name="x" type="xsd:nope"/>`,
			copyIDToOut, `<validate variables="x"/>`},
			errs: []string{"Test.bpel:25: <validate>: variable x has no schema to validate against: type {http://www.w3.org/2001/XMLSchema}nope is not declared"}},
		{name: "identity constraint", edits: []string{`<variable name="in" messageType="tns:req"/>`, `<variable name="in" messageType="tns:req"/><variable name="k" element="tns:keyed"/>`,
			copyIDToOut, `<validate variables="k"/>`},
			errs: []string{"Test.bpel:25: <validate>: not supported yet: validating variable k: req.xsd:10: <xsd:key>: not supported: identity constraint <xsd:key>"}, notSupported: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var dir string
			if tc.noSchema {
				dir = editedBundle(t, "good-minimal", map[string][]string{"Test.bpel": tc.edits})
			} else {
				dir = validatingBundle(t, tc.edits...)
			}
			_, err := loadBundle(dir)
			if len(tc.errs) == 0 {
				if err != nil {
					t.Fatalf("LoadBundle: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("loaded, want an error")
			}
			for _, w := range tc.errs {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not contain %q", err, w)
				}
			}
			if compile.IsNotSupported(err) != tc.notSupported {
				t.Errorf("IsNotSupported = %v, want %v", compile.IsNotSupported(err), tc.notSupported)
			}
		})
	}
}

// validateBPEL validates the request, then, in an <assign validate="yes">,
// changes out and copies the request's text into its n: a text that is
// not a positive integer fails the assign, which must leave both
// variables as they were. The handler answers what it finds.
const validateBPEL = `<assign name="orig"><copy><from>'orig'</from><to>$out.payload/tns:a</to></copy></assign>
    <scope>
      <faultHandlers>
        <catch faultName="bpel:invalidVariables">
          <assign><copy><from>concat('caught ', $out.payload/tns:a, ' ', $in.payload/tns:n)</from><to>$out.payload/tns:a</to></copy></assign>
        </catch>
      </faultHandlers>
      <sequence>
        <validate variables="in"/>
        <assign validate="yes">
          <copy><from>'changed'</from><to>$out.payload/tns:a</to></copy>
          <copy><from>string($in.payload/tns:text)</from><to>$in.payload/tns:n</to></copy>
        </assign>
        <assign><copy><from>concat($out.payload/tns:a, ' ', $in.payload/tns:n)</from><to>$out.payload/tns:a</to></copy></assign>
      </sequence>
    </scope>`

func TestValidateRuntime(t *testing.T) {
	e, p := deployValidating(t, copyIDToOut, validateBPEL)
	tests := []struct {
		name, id, n, text string
		want              string
	}{
		{"valid", "A1", "5", "7", "changed 7"},
		{"invalid request caught", "A1", "-3", "7", "caught orig -3"},
		{"invalid id caught", "a1", "5", "7", "caught orig 5"},
		{"invalid assign rolled back", "A1", "5", "abc", "caught orig 5"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := dispatch(t, e, p, testReq(tc.id, tc.n, tc.text))
			if r.err != nil || r.fault != nil || r.out == nil {
				t.Fatalf("err=%v fault=%v out=%v", r.err, r.fault, r.out)
			}
			got := ""
			if a := r.out.Parts["payload"].FindElement("./a"); a != nil {
				got = a.Text()
			}
			if got != tc.want {
				t.Errorf("answer %q, want %q", got, tc.want)
			}
		})
	}
}

func TestValidateUncaught(t *testing.T) {
	e, p := deployValidating(t, copyIDToOut, `<validate variables="in"/>`)
	req := testReq("A1", "0", "")
	r := dispatch(t, e, p, req)
	if r.fault == nil || r.out != nil {
		t.Fatalf("want a fault answer: err=%v fault=%v out=%v", r.err, r.fault, r.out)
	}
	if r.fault.Name != interp.BpelFault("invalidVariables") {
		t.Errorf("fault %s, want bpel:invalidVariables", r.fault.Name)
	}
	want := "variable in, part payload: /tns:req/tns:n: '0' is not a valid xsd:positiveInteger (out of range)"
	if !strings.Contains(r.fault.Error(), want) {
		t.Errorf("fault %q does not contain %q", r.fault.Error(), want)
	}
}
