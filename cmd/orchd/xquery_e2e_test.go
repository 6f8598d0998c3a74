package main

import (
	"strings"
	"testing"
)

// xq declares an expression XQuery 1.0.
const xq = ` expressionLanguage="urn:oasis:names:tc:wsbpel:2.0:sublang:xquery1.0"`

// TestXQuerySyntaxErrorRefused: a malformed XQuery constructor refuses
// the bundle at deploy, naming the file, line, element and W3C code;
// orchd serves the other bundles. (The rule, and XQuery at run time, are
// the sem cases xquery/*; this is the binary's side: the log, the other
// bundles served.)
func TestXQuerySyntaxErrorRefused(t *testing.T) {
	deploy := t.TempDir()
	writeProcess(t, deploy, "XQBad", "127.0.0.1:1", `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    <assign><copy><from`+xq+`><![CDATA[<tns:resp><tns:a>{$in.payload/tns:id}</tns:b></tns:resp>]]></from><to variable="out" part="payload"/></copy></assign>
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>`, true)
	writeProcess(t, deploy, "XQGood", "127.0.0.1:1", `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    <assign><copy><from`+xq+`><![CDATA[<tns:resp><tns:a>{upper-case($in.payload/tns:id)}</tns:a></tns:resp>]]></from><to variable="out" part="payload"/></copy></assign>
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>`, true)
	o := startOrchd(t, "--deploy", deploy)
	if got := between(callRun(t, o.base, "XQGood", "ok", "1").body, "<tns:a>", "</tns:a>"); got != "OK" {
		t.Fatalf("the good bundle answered a = %q, want OK", got)
	}
	if !eventually(func() bool {
		l := o.log()
		return strings.Contains(l, "XQBad.bpel:21") && strings.Contains(l, "<from>") && strings.Contains(l, "XPST0003") &&
			strings.Contains(l, "end tag </tns:b> does not match start tag <tns:a>")
	}) {
		t.Fatalf("log does not name XQBad.bpel:21, <from>, XPST0003 and the mismatched tags:\n%s", o.log())
	}
}
