package main

import (
	"strings"
	"testing"
)

// xp2 declares an expression XPath 2.0.
const xp2 = ` expressionLanguage="urn:oasis:names:tc:wsbpel:2.0:sublang:xpath2.0"`

// TestXPath2Process: a process whose expressions are XPath 2.0 runs them
// with XPath 2.0 semantics end to end: tokenize, reverse, string-join,
// if-then-else, xs:dateTime arithmetic, a for expression, a quantified
// condition; a dynamic error is answered as bpel:subLanguageExecutionFault.
func TestXPath2Process(t *testing.T) {
	deploy := t.TempDir()
	writeProcess(t, deploy, "XP2", "127.0.0.1:1", `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    `+initOut+`
    <assign>
      <copy><from`+xp2+`>string-join((
          string-join(reverse(tokenize($in.payload/tns:id, ',')), '|'),
          if (xs:integer($in.payload/tns:n) gt 10) then 'big' else 'small',
          string(xs:dateTime('2024-02-28T10:00:00Z') + xs:dayTimeDuration(concat('P', $in.payload/tns:n, 'D'))),
          string-join(for $i in 1 to xs:integer($in.payload/tns:n) return string($i * $i), ',')), ';')</from>
        <to>$out.payload/tns:a</to></copy>
    </assign>
    <if>
      <condition`+xp2+`>some $t in tokenize($in.payload/tns:id, ',') satisfies $t eq 'b'</condition>
      <assign><copy><from`+xp2+`>concat($out.payload/tns:a, ';has-b')</from><to>$out.payload/tns:a</to></copy></assign>
    </if>
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>`, true)
	o := startOrchd(t, "--deploy", deploy)
	r := callRun(t, o.base, "XP2", "a,b,c", "3")
	const want = "c|b|a;small;2024-03-02T10:00:00Z;1,4,9;has-b"
	if got := between(r.body, "<tns:a>", "</tns:a>"); r.status != 200 || got != want {
		t.Fatalf("status %d, a = %q (body %s), want %q", r.status, got, r.body, want)
	}
	r = callRun(t, o.base, "XP2", "x", "three")
	code, reason := faultCode(t, r.body)
	if r.status != 500 || code != "Server" || !strings.Contains(reason, "subLanguageExecutionFault") || !strings.Contains(reason, "FORG0001") {
		t.Fatalf("status %d code %q reason %q, want a Server fault naming subLanguageExecutionFault and FORG0001", r.status, code, reason)
	}
}

// TestXPath2SyntaxErrorRefused: an XPath 2.0 syntax error refuses the
// bundle at deploy, naming the file, line, element and W3C code; orchd
// serves the other bundles.
func TestXPath2SyntaxErrorRefused(t *testing.T) {
	deploy := t.TempDir()
	writeProcess(t, deploy, "XP2Bad", "127.0.0.1:1", `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    <assign><copy><from`+xp2+`>if ($in.payload/tns:n) then 1</from><to>$out.payload/tns:a</to></copy></assign>
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>`, true)
	writeProcess(t, deploy, "XP2Good", "127.0.0.1:1", `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    `+initOut+`
    <assign><copy><from`+xp2+`>upper-case($in.payload/tns:id)</from><to>$out.payload/tns:a</to></copy></assign>
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>`, true)
	o := startOrchd(t, "--deploy", deploy)
	if got := between(callRun(t, o.base, "XP2Good", "ok", "1").body, "<tns:a>", "</tns:a>"); got != "OK" {
		t.Fatalf("the good bundle answered a = %q, want OK", got)
	}
	if !eventually(func() bool {
		l := o.log()
		return strings.Contains(l, "XP2Bad.bpel:21") && strings.Contains(l, "<from>") && strings.Contains(l, "XPST0003")
	}) {
		t.Fatalf("log does not name XP2Bad.bpel:21, <from> and XPST0003:\n%s", o.log())
	}
}
