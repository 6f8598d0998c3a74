package main

import (
	"strings"
	"testing"
)

// insertMissingToData over SOAP: the missing steps of a <to> path are
// created (from an uninitialized element variable, child steps, the next
// position, the query form, a namespaced attribute with ODE's extension
// attribute); a position beyond the next one is a selectionFailure; a path
// with a step orchd cannot create is refused at deploy, naming it.
func TestInsertMissingToData(t *testing.T) {
	deploy := t.TempDir()
	writeProcess(t, deploy, "Insert", "127.0.0.1:1", `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    <scope>
      <variables><variable name="doc" element="tns:resp"/></variables>
      <assign xmlns:ext="http://www.apache.org/ode/type/extension" xmlns:o="urn:e2e:other">
        <copy insertMissingToData="yes"><from>$in.payload/tns:id</from><to>$doc/tns:a/@id</to></copy>
        <copy insertMissingToData="yes"><from>$in.payload/tns:n</from><to>$doc/tns:a/tns:b/tns:c</to></copy>
        <copy insertMissingToData="yes"><from>'second'</from><to variable="doc"><query>tns:a/tns:b[2]/tns:c</query></to></copy>
        <copy ext:insertMissingToData="yes"><from>'en'</from><to>$doc/o:note/@o:lang</to></copy>
        <copy><from>$doc</from><to variable="out" part="payload"/></copy>
      </assign>
    </scope>
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>`, true)
	writeProcess(t, deploy, "InsertFar", "127.0.0.1:1", `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    `+initOut+`
    <assign><copy insertMissingToData="yes"><from>'v'</from><to>$out.payload/tns:a[3]</to></copy></assign>
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>`, true)
	writeProcess(t, deploy, "InsertBad", "127.0.0.1:1", `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    <assign><copy insertMissingToData="yes"><from>'v'</from><to>$out.payload/tns:a[. = 'x']</to></copy></assign>
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>`, true)
	o := startOrchd(t, "--deploy", deploy)

	r := callRun(t, o.base, "Insert", "I-1", "7")
	body := between(r.body, "Body>", "</soapenv:Body")
	for _, want := range []string{`<tns:a xmlns:tns="urn:e2e" id="I-1">`, `<tns:b><tns:c>7</tns:c></tns:b><tns:b><tns:c>second</tns:c></tns:b></tns:a>`,
		`<o:note xmlns:o="urn:e2e:other" o:lang="en"/>`} {
		if r.status != 200 || !strings.Contains(body, want) {
			t.Errorf("status %d, body %s: want %s", r.status, body, want)
		}
	}

	r = callRun(t, o.base, "InsertFar", "I-2", "1")
	code, reason := faultCode(t, r.body)
	if r.status != 500 || code != "Server" || !strings.Contains(reason, "selectionFailure") || !strings.Contains(reason, "only position 2 can be created") {
		t.Errorf("status %d code %q reason %q, want a selectionFailure naming the position it can create", r.status, code, reason)
	}

	if log := o.log(); !strings.Contains(log, `InsertBad.bpel:21: <to>: insertMissingToData cannot create \"tns:a[. = 'x']\"`) {
		t.Errorf("the InsertBad refusal does not name file, line and construct:\n%s", log)
	}
	if r := callRun(t, o.base, "InsertBad", "I-3", "1"); r.status == 200 {
		t.Errorf("the refused InsertBad answered: %s", r.body)
	}
}
