package main

import (
	"net"
	"strings"
	"testing"
	"time"
)

// restURIProcess GETs the URI the request's n holds and answers the
// status code.
const restURIProcess = `
  <extensions><extension namespace="http://www.apache.org/ode/bpel/extensions/bpel4restlight" mustUnderstand="yes"/></extensions>
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    ` + initOut + `
    <scope xmlns:rest="http://www.apache.org/ode/bpel/extensions/bpel4restlight">
      <variables>
        <variable name="url" type="xsd:string"/>
        <variable name="code" type="xsd:int"/>
      </variables>
      <sequence>
        <assign><copy><from>string($in.payload/tns:n)</from><to variable="url"/></copy></assign>
        <extensionActivity><rest:GET uri="$bpelvar[url]" statusCode="code"/></extensionActivity>
        <assign><copy><from>concat('status ', $code)</from><to>$out.payload/tns:a</to></copy></assign>
      </sequence>
    </scope>
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>`

// TestRESTURIPolicy: a REST activity's URI taken from the request goes
// under the partner address policy narrowed to the bundle's
// orchd:partnerAllow rules, and its failures look alike: an address the
// bundle's rules refuse (a server that would answer, never called), a
// closed port and a silent one give the same fault text, none sooner
// than the call's timeout; the port the rules allow answers.
func TestRESTURIPolicy(t *testing.T) {
	items := &itemServer{items: map[string]string{"a": "A"}}
	allowed, outside := serveLoopback(t, items), serveLoopback(t, items)
	closedLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := closedLn.Addr().String()
	closedLn.Close()
	silent := startSilent(t).addr

	port := func(addr string) string { _, p, _ := net.SplitHostPort(addr); return p }
	deploy := t.TempDir()
	writeProcess(t, deploy, "RestURI", "127.0.0.1:1", restURIProcess, true)
	allowInBundle(t, deploy, "RestURI", "127.0.0.1 "+port(allowed), "127.0.0.1 "+port(closed), "127.0.0.1 "+port(silent))
	const timeout = 1500 * time.Millisecond
	o := startOrchd(t, "--deploy", deploy, "--partner-allow", "127.0.0.1", "--partner-timeout", timeout.String())

	if r := callRun(t, o.base, "RestURI", "ok", "http://"+allowed+"/items/a"); r.status != 200 || !strings.Contains(r.body, ">status 200<") {
		t.Fatalf("the address the bundle allows: %d %s\n%s", r.status, r.body, o.log())
	}
	var reasons []string
	var took []time.Duration
	for _, c := range []struct{ name, addr string }{
		{"refused by the bundle's rules", outside},
		{"closed port", closed},
		{"silent port", silent},
	} {
		start := time.Now()
		r := callRun(t, o.base, "RestURI", "x", "http://"+c.addr+"/items/a")
		d := time.Since(start)
		if r.status == 200 {
			t.Errorf("%s: status 200 %s", c.name, r.body)
			continue
		}
		_, reason := faultCode(t, r.body)
		reason = strings.ReplaceAll(reason, c.addr, "ADDR")
		t.Logf("%s: %s after %s", c.name, reason, d)
		reasons, took = append(reasons, reason), append(took, d)
		if d < timeout-100*time.Millisecond {
			t.Errorf("%s: failed after %s, before the call's timeout %s", c.name, d, timeout)
		}
	}
	for i := 1; i < len(reasons); i++ {
		if reasons[i] != reasons[0] {
			t.Errorf("faults differ:\n%q\n%q", reasons[0], reasons[i])
		}
	}
	if len(took) == 3 {
		lo, hi := took[0], took[0]
		for _, d := range took {
			lo, hi = min(lo, d), max(hi, d)
		}
		if hi > 2*lo {
			t.Errorf("failure times differ: %v", took)
		}
	}
	items.mu.Lock()
	calls := len(items.methods)
	items.mu.Unlock()
	if calls != 1 {
		t.Errorf("the REST servers were called %d times, want 1 (the allowed one)", calls)
	}
	if !strings.Contains(o.log(), "call to a partner address chosen at run time failed") {
		t.Errorf("no log line with the detail\n%s", o.log())
	}
}
