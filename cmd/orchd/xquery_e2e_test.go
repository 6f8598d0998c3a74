package main

import (
	"strings"
	"testing"
)

// xq declares an expression XQuery 1.0; xqQuery a query.
const (
	xq      = ` expressionLanguage="urn:oasis:names:tc:wsbpel:2.0:sublang:xquery1.0"`
	xqQuery = ` queryLanguage="urn:oasis:names:tc:wsbpel:2.0:sublang:xquery1.0"`
)

// TestXQueryProcess: a process whose <from>, <condition> and <query> are
// XQuery 1.0 runs them end to end: a direct element constructor with an
// enclosed FLWOR (positional variable, order by) becomes the reply's
// part, a typeswitch decides a condition, a let and a query read the
// constructed value back; a dynamic error is answered as
// bpel:subLanguageExecutionFault.
func TestXQueryProcess(t *testing.T) {
	deploy := t.TempDir()
	writeProcess(t, deploy, "XQ", "127.0.0.1:1", `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    <assign>
      <copy><from`+xq+`><![CDATA[
        <tns:resp>
          <tns:a>{ for $t at $p in tokenize($in.payload/tns:id, ',')
                   order by $t descending
                   return concat($p, $t) }</tns:a>
        </tns:resp>]]></from>
        <to variable="out" part="payload"/></copy>
    </assign>
    <if>
      <condition`+xq+`>typeswitch (xs:integer($in.payload/tns:n))
          case $i as xs:integer return $i gt 2
          default return false()</condition>
      <assign><copy><from`+xq+`>let $a := $out.payload/tns:a return concat($a, ' big')</from><to>$out.payload/tns:a</to></copy></assign>
    </if>
    <assign>
      <copy><from variable="out" part="payload"><query`+xqQuery+`>concat(tns:a, '; ', count(tns:a), ' a')</query></from>
        <to>$out.payload/tns:a</to></copy>
    </assign>
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>`, true)
	o := startOrchd(t, "--deploy", deploy)
	r := callRun(t, o.base, "XQ", "b,a,c", "3")
	const want = "3c 1b 2a big; 1 a"
	if got := between(r.body, "<tns:a>", "</tns:a>"); r.status != 200 || got != want {
		t.Fatalf("status %d, a = %q (body %s), want %q", r.status, got, r.body, want)
	}
	r = callRun(t, o.base, "XQ", "x", "1")
	if got := between(r.body, "<tns:a>", "</tns:a>"); r.status != 200 || got != "1x; 1 a" {
		t.Fatalf("status %d, a = %q (body %s), want %q", r.status, got, r.body, "1x; 1 a")
	}
	r = callRun(t, o.base, "XQ", "x", "three")
	code, reason := faultCode(t, r.body)
	if r.status != 500 || code != "Server" || !strings.Contains(reason, "subLanguageExecutionFault") || !strings.Contains(reason, "FORG0001") {
		t.Fatalf("status %d code %q reason %q, want a Server fault naming subLanguageExecutionFault and FORG0001", r.status, code, reason)
	}
}

// TestXQuerySyntaxErrorRefused: a malformed XQuery constructor refuses
// the bundle at deploy, naming the file, line, element and W3C code;
// orchd serves the other bundles.
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
