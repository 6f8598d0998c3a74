package main

import (
	"strings"
	"testing"
)

// xp2 declares an expression XPath 2.0.
const xp2 = ` expressionLanguage="urn:oasis:names:tc:wsbpel:2.0:sublang:xpath2.0"`

// TestXPath2SyntaxErrorRefused: an XPath 2.0 syntax error refuses the
// bundle at deploy, naming the file, line, element and W3C code; orchd
// serves the other bundles. (The rule, and XPath 2.0 at run time, are the
// sem cases xpath2/process-*; this is the binary's side: the log, the
// other bundles served.)
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
